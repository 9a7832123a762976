import { QueryTypes } from 'sequelize';
import { serviceWorkflowId } from '../../db/repositories/network-service-repository';
import { settleConnections } from './connections';
import { stack } from './stack';
import { eventually } from './wait';

/**
 * Tables that change while nobody asks anything, so that comparing them says nothing about what a
 * request did; each with the reason. Everything else must be the same before and after requests
 * that were all refused.
 */
export const SELF_CHANGING_TABLES: Readonly<Record<string, string>> = {
  traffic_samples:
    'the statistics collector workflow stores a sample per subject every STATS_SAMPLE_INTERVAL_S (1 s in tests that start it) and prunes old ones',
  port_optics:
    "the statistics collector replaces each port's last light levels in every round (every STATS_SAMPLE_INTERVAL_S)",
  rate_limits:
    'the rate limits count every request, refused or not, by design (a MEMORY table), and the housekeeping deletes expired counters once a minute',
};

/** What one table holds: how many rows, and a checksum of their contents. */
export interface TableState {
  rows: number;
  checksum: string;
}

/** The database at one moment, minus the tables that change by themselves. */
export interface DatabaseState {
  tables: Record<string, TableState>;
  newestEventSerial: number;
}

async function tableNames(): Promise<string[]> {
  const rows = await stack().db.sequelize.query<{ name: string }>(
    `SELECT TABLE_NAME AS name FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.name).filter((name) => !(name in SELF_CHANGING_TABLES));
}

/** Row counts and `CHECKSUM TABLE` of every table that does not change by itself, and the newest event. */
export async function databaseState(): Promise<DatabaseState> {
  const { sequelize } = stack().db;
  const names = await tableNames();
  const quoted = names.map((name) => `\`${name}\``);
  const checksums = await sequelize.query<{ Table: string; Checksum: string | number | null }>(
    `CHECKSUM TABLE ${quoted.join(', ')} EXTENDED`,
    { type: QueryTypes.SELECT },
  );
  const counts = await sequelize.query<{ name: string; n: number }>(
    names.map((name, i) => `SELECT '${name}' AS name, COUNT(*) AS n FROM ${quoted[i]}`).join(' UNION ALL '),
    { type: QueryTypes.SELECT },
  );
  const tables: Record<string, TableState> = {};
  for (const { name, n } of counts) tables[name] = { rows: Number(n), checksum: '' };
  for (const row of checksums) {
    const name = row.Table.split('.').pop()!;
    if (tables[name]) tables[name].checksum = String(row.Checksum);
  }
  const [newest] = await sequelize.query<{ serial: number | null }>(
    'SELECT MAX(serial) AS serial FROM events',
    { type: QueryTypes.SELECT },
  );
  return { tables, newestEventSerial: Number(newest.serial ?? 0) };
}

/** Every difference between two states, one line each; empty when they are the same. */
export function stateDifferences(before: DatabaseState, after: DatabaseState): string[] {
  const differences: string[] = [];
  if (before.newestEventSerial !== after.newestEventSerial)
    differences.push(`events: newest serial ${before.newestEventSerial} → ${after.newestEventSerial}`);
  for (const name of new Set([...Object.keys(before.tables), ...Object.keys(after.tables)])) {
    const was = before.tables[name];
    const now = after.tables[name];
    if (!was || !now) differences.push(`${name}: ${was ? 'gone' : 'new table'}`);
    else if (was.rows !== now.rows) differences.push(`${name}: ${was.rows} → ${now.rows} rows`);
    else if (was.checksum !== now.checksum)
      differences.push(`${name}: same ${now.rows} rows, contents changed`);
  }
  return differences;
}

/** States of a service config in which its route-server sessions go ahead (their workflow's ON_DEVICE). */
const CONFIG_ON_DEVICE = ['allocated', 'testing', 'production', 'production_change_pending'];

/** Waits until every route-server session whose config is on the device has been configured. */
async function settleFeatureConfigs(): Promise<void> {
  await eventually(
    'route-server sessions coming to rest',
    async () => {
      const [row] = await stack().db.sequelize.query<{ moving: number }>(
        `SELECT COUNT(*) AS moving FROM network_feature_configs f
           JOIN network_service_configs n ON n.id = f.network_service_config
          WHERE f.state IN ('requested', 'allocated', 'testing') AND n.state IN (:onDevice)`,
        { replacements: { onDevice: CONFIG_ON_DEVICE }, type: QueryTypes.SELECT },
      );
      return Number(row.moving) === 0 ? true : undefined;
    },
    30_000,
    200,
  );
}

/** Whether a workflow is running (a resource made straight in the database has none). */
async function running(workflowId: string): Promise<boolean> {
  try {
    const description = await stack().temporal.client.workflow.getHandle(workflowId).describe();
    return description.status.name === 'RUNNING';
  } catch {
    return false;
  }
}

/**
 * Waits until every service whose workflow runs has been set up, and every one whose ends are all
 * there has gone to production (its workflow looks at its configs again only now and then).
 */
async function settleNetworkServices(): Promise<void> {
  const { db } = stack();
  await eventually(
    'network services coming to rest',
    async () => {
      const rows = await db.sequelize.query<{ id: string; state: string; type: string }>(
        `SELECT id, state, type FROM network_services
          WHERE type <> 'exchange_lan' AND state IN ('requested', 'allocated', 'testing')`,
        { type: QueryTypes.SELECT },
      );
      const moving: string[] = [];
      for (const row of rows) {
        const agenda = row.state === 'requested' ? undefined : await db.networkServices.agenda(row.id);
        const due = row.state === 'requested' || (agenda !== undefined && agenda.missing.length === 0);
        if (due && (await running(serviceWorkflowId(row.id))))
          moving.push(`${row.id} (${row.type}, ${row.state})`);
      }
      if (moving.length) throw new Error(`still moving: ${moving.join(', ')}`);
      return true;
    },
    90_000,
    250,
  );
}

/**
 * Waits until the provisioning of earlier tests has come to rest: connections, services, configs
 * and sessions out of the states they move on from by themselves (some workflows look again only
 * every few seconds), then two looks a second apart that find the database the same.
 */
export async function settledDatabaseState(): Promise<DatabaseState> {
  await settleConnections();
  await settleFeatureConfigs();
  await settleNetworkServices();
  let previous = await databaseState();
  return eventually(
    'the database coming to rest',
    async () => {
      const current = await databaseState();
      const same = stateDifferences(previous, current).length === 0;
      previous = current;
      return same ? current : undefined;
    },
    60_000,
    1_000,
  );
}

/** The events appended after `serial`, one line each, to say what a change of the database was. */
export async function eventsSince(serial: number): Promise<string[]> {
  const rows = await stack().db.sequelize.query<{ serial: number; type: string; payload: unknown }>(
    'SELECT serial, type, payload FROM events WHERE serial > :serial ORDER BY serial',
    { replacements: { serial }, type: QueryTypes.SELECT },
  );
  return rows.map(
    (row) =>
      `#${row.serial} ${row.type}: ${(typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload)).slice(0, 200)}`,
  );
}
