import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { FabricCatalogue, FabricPortRow, RouteServerRow } from '../../domain/fabric-catalogue';

const ROUTE_SERVERS = `SELECT f.id, f.asn, f.ip_v4, f.ip_v6, f.network_service, s.metro_area_network,
    s.subnet_v4, s.subnet_v6
  FROM network_features f JOIN network_services s ON s.id = f.network_service
  WHERE f.type = 'route_server'`;

/**
 * What the ovs fabric is built from, as the catalogue holds it: the devices' ports and the route
 * servers of the exchange LANs (drivers/ovs/catalogue.ts shapes them for the fabric).
 */
export function createFabricCatalogueRepository(deps: { sequelize: Sequelize }): FabricCatalogue {
  const { sequelize } = deps;
  return {
    /** Every port of the catalogue's devices (or of those named), in device and port order. */
    ports(only?: readonly string[]): Promise<FabricPortRow[]> {
      return sequelize.query<FabricPortRow>(
        `SELECT p.device, p.name, p.speed, o.metro_area_network AS network
     FROM ports p JOIN devices d ON d.id = p.device JOIN pops o ON o.id = d.pop
     ${only ? 'WHERE p.device IN (:only)' : ''} ORDER BY p.device, p.name`,
        { replacements: { only: only?.length ? only : [''] }, type: QueryTypes.SELECT },
      );
    },

    /** Every route server of the catalogue, in id order. */
    routeServers(): Promise<RouteServerRow[]> {
      return sequelize.query<RouteServerRow>(`${ROUTE_SERVERS} ORDER BY f.id`, {
        type: QueryTypes.SELECT,
      });
    },

    /** The route server of the catalogue that is network feature `id`, if there is one. */
    async routeServer(id: string): Promise<RouteServerRow | undefined> {
      const [row] = await sequelize.query<RouteServerRow>(`${ROUTE_SERVERS} AND f.id = :device`, {
        replacements: { device: id },
        type: QueryTypes.SELECT,
      });
      return row;
    },
  };
}

export type FabricCatalogueRepository = ReturnType<typeof createFabricCatalogueRepository>;
