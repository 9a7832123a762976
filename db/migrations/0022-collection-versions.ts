import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

/**
 * The tables of the collections the API lists (and those their filters and scopes read). Each has a
 * version that moves with every row inserted, changed or deleted, in the transaction that does it:
 * what was computed from a table at one version (a collection's total, where a deep page starts)
 * holds for as long as the version stays.
 */
export const VERSIONED_TABLES = [
  'accounts',
  'availability_zones',
  'connections',
  'contacts',
  'devices',
  'facilities',
  'ip_addresses',
  'macs',
  'member_joining_rules',
  'metro_area_networks',
  'metro_areas',
  'network_feature_configs',
  'network_features',
  'network_service_config_macs',
  'network_service_configs',
  'network_services',
  'pops',
  'port_reservations',
  'ports',
  'product_offerings',
  'role_assignments',
  'roles',
] as const;

/**
 * Rows of a table's version: a writer moves the row of its connection (`CONNECTION_ID()` modulo
 * this), so that concurrent writers of one table seldom wait for each other's commit; the version
 * is the sum of the rows.
 */
export const VERSION_SHARDS = 32;

const EVENTS = ['insert', 'update', 'delete'] as const;

/** The name of the trigger that moves the version of `table` on `event`. */
export const versionTriggerName = (table: string, event: (typeof EVENTS)[number]) =>
  `${table}_versioned_${event}`;

/** The statements that create the triggers moving the version of each table (of this migration's). */
export function versionTriggers(tables: readonly string[] = VERSIONED_TABLES): string[] {
  return tables.flatMap((table) =>
    EVENTS.map(
      (event) =>
        `CREATE TRIGGER \`${versionTriggerName(table, event)}\` AFTER ${event.toUpperCase()} ON \`${table}\` FOR EACH ROW
           UPDATE collection_versions SET version = version + 1
            WHERE table_name = '${table}' AND shard = CONNECTION_ID() % ${VERSION_SHARDS}`,
    ),
  );
}

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'collection_versions',
    {
      table_name: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
      shard: { type: DataTypes.SMALLINT, primaryKey: true, allowNull: false },
      version: { type: DataTypes.BIGINT.UNSIGNED, allowNull: false, defaultValue: 0 },
    },
    tableOptions,
  );
  const rows = VERSIONED_TABLES.flatMap((table) =>
    Array.from({ length: VERSION_SHARDS }, (_, shard) => ({ table_name: table, shard, version: 0 })),
  );
  await qi.bulkInsert('collection_versions', rows);
  for (const statement of versionTriggers()) await qi.sequelize.query(statement);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const table of VERSIONED_TABLES)
    for (const event of EVENTS)
      await qi.sequelize.query(`DROP TRIGGER IF EXISTS \`${versionTriggerName(table, event)}\``);
  await qi.dropTable('collection_versions');
}
