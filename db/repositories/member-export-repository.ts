import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { ENDED_STATES } from '../../domain/states';

/** An exchange LAN as the member export shows it, with the exchange's name and where it is. */
export interface ExportedLan {
  id: string;
  name: string;
  state: string;
  subnetV4: string | null;
  subnetV6: string | null;
  peeringdbIxid: number | null;
  ixfdbIxid: number | null;
  /** The name of the exchange's account (the LAN's managing account). */
  exchangeAccount: string;
  exchangeName: string;
  /** The metro area's name and UN/LOCODE (whose first two letters are its country). */
  metroArea: string | null;
  unLocode: string | null;
}

/** A route server of an exchange LAN. */
export interface ExportedRouteServer {
  id: string;
  lan: string;
  asn: number;
  ipV4: string | null;
  ipV6: string | null;
  lookingGlassUrl: string | null;
}

/** A route-server session of a config, on the address of one family. */
export interface ExportedSession {
  version: 4 | 6;
  asSet: string | null;
  maxPrefix: number | null;
}

/**
 * A config of exchange-LAN access whose member asked to be listed, with what the export may show
 * of it: its ASNs, the consuming account's name, its connection's ports, its addresses and its
 * route-server sessions. Nothing else of the config or the account is read.
 */
export interface ListedConfig {
  id: string;
  lan: string;
  state: string;
  account: string;
  accountName: string;
  accountIsExchange: boolean;
  asns: number[];
  connection: string;
  connectionState: string;
  ports: Array<{ speed: number | null; mediaType: string }>;
  addresses: Array<{ version: 4 | 6; address: string }>;
  sessions: ExportedSession[];
}

/** What the IX-F member export is made from. */
export interface MemberExportFacts {
  lans: ExportedLan[];
  routeServers: ExportedRouteServer[];
  configs: ListedConfig[];
}

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** Rows by the value of one of their columns. */
function groupedBy<T, K extends keyof T>(rows: readonly T[], column: K): Map<T[K], T[]> {
  const groups = new Map<T[K], T[]>();
  for (const row of rows) groups.set(row[column], [...(groups.get(row[column]) ?? []), row]);
  return groups;
}

/** A JSON column's list of numbers (`asns`). */
const numbersOf = (value: unknown): number[] =>
  (typeof value === 'string' ? (JSON.parse(value) as unknown[]) : Array.isArray(value) ? value : []).map(
    Number,
  );

/**
 * Reads what the IX-F member export shows: the exchange LANs that have not ended, their route
 * servers, and the configs of exchange-LAN access whose member asked to be listed (`listed`) that
 * have not ended nor are being cancelled. Only public facts are read: no billing, contact or
 * reference of any account.
 */
export function createMemberExportRepository(deps: { sequelize: Sequelize }) {
  const select = <T extends object>(sql: string, replacements: Record<string, unknown>) =>
    deps.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  return {
    async read(): Promise<MemberExportFacts> {
      const lans = (
        await select<Record<string, unknown>>(
          `SELECT s.id, s.name, s.state, s.subnet_v4, s.subnet_v6, s.peeringdb_ixid, s.ixfdb_ixid,
                  a.id AS exchange_account, a.name AS exchange_name, ma.display_name AS metro_area, ma.un_locode
             FROM network_services s
             JOIN accounts a ON a.id = s.managing_account
             LEFT JOIN metro_area_networks man ON man.id = s.metro_area_network
             LEFT JOIN metro_areas ma ON ma.id = man.metro_area
            WHERE s.type = 'exchange_lan' AND s.state NOT IN (:ended)
            ORDER BY s.id`,
          { ended: ENDED_STATES },
        )
      ).map((row): ExportedLan => ({
        id: String(row.id),
        name: String(row.name ?? row.id),
        state: String(row.state),
        subnetV4: (row.subnet_v4 as string | null) ?? null,
        subnetV6: (row.subnet_v6 as string | null) ?? null,
        peeringdbIxid: numberOrNull(row.peeringdb_ixid),
        ixfdbIxid: numberOrNull(row.ixfdb_ixid),
        exchangeAccount: String(row.exchange_account),
        exchangeName: String(row.exchange_name),
        metroArea: (row.metro_area as string | null) ?? null,
        unLocode: (row.un_locode as string | null) ?? null,
      }));
      if (!lans.length) return { lans, routeServers: [], configs: [] };
      const lanIds = lans.map((lan) => lan.id);

      const routeServers = (
        await select<Record<string, unknown>>(
          `SELECT id, network_service, asn, ip_v4, ip_v6, looking_glass_url FROM network_features
            WHERE type = 'route_server' AND network_service IN (:lans) ORDER BY id`,
          { lans: lanIds },
        )
      ).map((row): ExportedRouteServer => ({
        id: String(row.id),
        lan: String(row.network_service),
        asn: Number(row.asn),
        ipV4: (row.ip_v4 as string | null) ?? null,
        ipV6: (row.ip_v6 as string | null) ?? null,
        lookingGlassUrl: (row.looking_glass_url as string | null) ?? null,
      }));

      const rows = await select<Record<string, unknown>>(
        `SELECT n.id, n.network_service, n.state, n.asns, n.connection, c.state AS connection_state,
                a.id AS account, a.name AS account_name, a.is_exchange
           FROM network_service_configs n
           JOIN accounts a ON a.id = n.consuming_account
           JOIN connections c ON c.id = n.connection
          WHERE n.type = 'exchange_lan' AND n.listed = 1 AND n.network_service IN (:lans)
            AND n.state NOT IN (:ended) AND n.cancel_requested_at IS NULL
          ORDER BY n.id`,
        { lans: lanIds, ended: ENDED_STATES },
      );
      if (!rows.length) return { lans, routeServers, configs: [] };
      const configIds = rows.map((row) => String(row.id));
      const connectionIds = [...new Set(rows.map((row) => String(row.connection)))];

      const ports = await select<{ connection: string; speed: number | null; media_type: string }>(
        'SELECT connection, speed, media_type FROM ports WHERE connection IN (:connections) ORDER BY connection, name',
        { connections: connectionIds },
      );
      const addresses = await select<{ network_service_config: string; version: number; address: string }>(
        `SELECT network_service_config, version, address FROM ip_addresses
          WHERE network_service_config IN (:configs) AND released_at IS NULL
          ORDER BY network_service_config, version, address`,
        { configs: configIds },
      );
      const sessions = await select<Record<string, unknown>>(
        `SELECT f.network_service_config, i.version, f.as_set_v4, f.as_set_v6, f.max_prefix_v4, f.max_prefix_v6,
                rs.ip_v4
           FROM network_feature_configs f
           JOIN network_features rs ON rs.id = f.network_feature AND rs.type = 'route_server'
           LEFT JOIN ip_addresses i ON i.id = f.ip
          WHERE f.network_service_config IN (:configs) AND f.state NOT IN (:ended) AND f.cancel_requested_at IS NULL
          ORDER BY f.network_service_config, f.id`,
        { configs: configIds, ended: ENDED_STATES },
      );

      const portsOf = groupedBy(ports, 'connection');
      const addressesOf = groupedBy(addresses, 'network_service_config');
      const sessionsOf = groupedBy(sessions, 'network_service_config');
      const configs = rows.map((row): ListedConfig => {
        const id = String(row.id);
        return {
          id,
          lan: String(row.network_service),
          state: String(row.state),
          account: String(row.account),
          accountName: String(row.account_name),
          accountIsExchange: Boolean(Number(row.is_exchange)),
          asns: numbersOf(row.asns),
          connection: String(row.connection),
          connectionState: String(row.connection_state),
          ports: (portsOf.get(String(row.connection)) ?? []).map((port) => ({
            speed: numberOrNull(port.speed),
            mediaType: port.media_type,
          })),
          addresses: (addressesOf.get(id) ?? []).map((address) => ({
            version: Number(address.version) as 4 | 6,
            address: address.address,
          })),
          sessions: (sessionsOf.get(id) ?? []).map((session): ExportedSession => {
            // The session's address says its family; without one, the route server's does.
            const version = session.version !== null ? Number(session.version) : session.ip_v4 ? 4 : 6;
            return version === 4
              ? {
                  version: 4,
                  asSet: (session.as_set_v4 as string | null) ?? null,
                  maxPrefix: numberOrNull(session.max_prefix_v4),
                }
              : {
                  version: 6,
                  asSet: (session.as_set_v6 as string | null) ?? null,
                  maxPrefix: numberOrNull(session.max_prefix_v6),
                };
          }),
        };
      });
      return { lans, routeServers, configs };
    },
  };
}

export type MemberExportRepository = ReturnType<typeof createMemberExportRepository>;
