import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { ENDED_STATES, IN_SERVICE_STATES } from '../../domain/states';

/** The resources in service that put something on devices, by id. */
export interface ResourcesInService {
  connections: string[];
  networkServiceConfigs: string[];
  networkFeatureConfigs: string[];
}

/**
 * What the database says the devices hold, for bringing devices back in line with it: the
 * resources in service, the configs it still knows, and the devices of the catalogue.
 */
export function createDeviceHoldingsRepository(deps: { sequelize: Sequelize }) {
  const { sequelize } = deps;
  const ids = async (sql: string, replacements: Record<string, unknown> = {}) =>
    (await sequelize.query<{ id: string }>(sql, { replacements, type: QueryTypes.SELECT })).map(
      (row) => row.id,
    );

  return {
    /** Connections, network service configs and network feature configs in service, in id order. */
    async inService(): Promise<ResourcesInService> {
      const states = { states: IN_SERVICE_STATES };
      const [connections, networkServiceConfigs, networkFeatureConfigs] = await Promise.all([
        ids('SELECT id FROM connections WHERE state IN (:states) ORDER BY id', states),
        ids('SELECT id FROM network_service_configs WHERE state IN (:states) ORDER BY id', states),
        ids('SELECT id FROM network_feature_configs WHERE state IN (:states) ORDER BY id', states),
      ]);
      return { connections, networkServiceConfigs, networkFeatureConfigs };
    },

    /**
     * Of `names` (services or BGP sessions a device holds), those that are network service or
     * feature configs that have not ended: their own workflows look after them, in service or not.
     */
    async liveConfigs(names: readonly string[]): Promise<Set<string>> {
      if (!names.length) return new Set();
      const replacements = { names, ended: ENDED_STATES };
      const found = await ids(
        `SELECT id FROM network_service_configs WHERE id IN (:names) AND state NOT IN (:ended)
         UNION SELECT id FROM network_feature_configs WHERE id IN (:names) AND state NOT IN (:ended)`,
        replacements,
      );
      return new Set(found);
    },

    /** The catalogue's devices: those with ports, and the route servers; in name order. */
    async devices(): Promise<string[]> {
      return ids(
        `SELECT DISTINCT device AS id FROM ports
         UNION SELECT id FROM network_features WHERE type = 'route_server' ORDER BY id`,
      );
    },
  };
}

export type DeviceHoldingsRepository = ReturnType<typeof createDeviceHoldingsRepository>;
