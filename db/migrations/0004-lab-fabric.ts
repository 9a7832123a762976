import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

const device = { type: DataTypes.STRING(80), allowNull: false };
const name = { type: DataTypes.STRING(80), allowNull: false };
const createdAt = { type: DataTypes.DATE(3), allowNull: false };

/**
 * The lab fabric: what the lab device driver keeps in place of real switches. Each device has a
 * configuration version; interfaces mirror the catalogue's ports; LAGs bundle them; candidates and
 * commits make changes atomic and reversible; faults are injected failures for tests and demos.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'lab_devices',
    {
      device: { ...device, primaryKey: true },
      version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      latency_ms: { type: DataTypes.INTEGER, allowNull: true },
    },
    tableOptions,
  );
  await qi.createTable(
    'lab_interfaces',
    {
      device: { ...device, primaryKey: true },
      name: { ...name, primaryKey: true },
      description: { type: DataTypes.STRING(240), allowNull: false, defaultValue: '' },
      enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      speed: { type: DataTypes.INTEGER, allowNull: false },
      lag: { type: DataTypes.STRING(80), allowNull: true },
      rx_dbm: { type: DataTypes.DOUBLE, allowNull: false },
      tx_dbm: { type: DataTypes.DOUBLE, allowNull: false },
    },
    tableOptions,
  );
  await qi.createTable(
    'lab_lags',
    {
      device: { ...device, primaryKey: true },
      name: { ...name, primaryKey: true },
      description: { type: DataTypes.STRING(240), allowNull: false, defaultValue: '' },
      mode: { type: DataTypes.STRING(16), allowNull: false },
      lacp_timeout: { type: DataTypes.STRING(8), allowNull: true },
      members: { type: DataTypes.TEXT, allowNull: false },
    },
    tableOptions,
  );
  await qi.createTable(
    'lab_candidates',
    {
      id: { type: DataTypes.STRING(80), primaryKey: true, allowNull: false },
      device,
      base_version: { type: DataTypes.INTEGER, allowNull: false },
      changes: { type: DataTypes.TEXT('medium'), allowNull: false },
      created_at: createdAt,
    },
    tableOptions,
  );
  await qi.createTable(
    'lab_commits',
    {
      id: { type: DataTypes.STRING(80), primaryKey: true, allowNull: false },
      commit_key: { type: DataTypes.STRING(160), allowNull: false, unique: true },
      device,
      version: { type: DataTypes.INTEGER, allowNull: false },
      changes: { type: DataTypes.TEXT('medium'), allowNull: false },
      rolled_back: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      created_at: createdAt,
    },
    tableOptions,
  );
  await qi.createTable(
    'lab_faults',
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      device: { type: DataTypes.STRING(80), allowNull: true },
      operation: { type: DataTypes.STRING(32), allowNull: false },
      code: { type: DataTypes.STRING(32), allowNull: false },
      message: { type: DataTypes.STRING(240), allowNull: false },
      remaining: { type: DataTypes.INTEGER, allowNull: false },
    },
    tableOptions,
  );
  await qi.addIndex('lab_faults', ['operation']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const table of [
    'lab_faults',
    'lab_commits',
    'lab_candidates',
    'lab_lags',
    'lab_interfaces',
    'lab_devices',
  ])
    await qi.dropTable(table);
}
