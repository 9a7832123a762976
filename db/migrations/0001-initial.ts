import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const accountRef = (allowNull: boolean) => ({ type: DataTypes.STRING(80), allowNull });

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'accounts',
    {
      id,
      name: { type: DataTypes.STRING(80), allowNull: false },
      legal_name: { type: DataTypes.STRING(80), allowNull: true },
      address: { type: DataTypes.TEXT, allowNull: true },
      billing_information: { type: DataTypes.TEXT, allowNull: true },
      discoverable: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      external_ref: { type: DataTypes.STRING(80), allowNull: true },
      managing_account: {
        ...accountRef(true),
        references: { model: 'accounts', key: 'id' },
        onDelete: 'RESTRICT',
      },
      metro_area_network_presence: { type: DataTypes.TEXT, allowNull: false },
      state: { type: DataTypes.STRING(32), allowNull: false },
      status: { type: DataTypes.TEXT, allowNull: false },
      is_exchange: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('accounts', ['state']);
  await qi.addIndex('accounts', ['external_ref']);
  await qi.addIndex('accounts', ['name']);

  await qi.createTable(
    'contacts',
    {
      id,
      managing_account: {
        ...accountRef(false),
        references: { model: 'accounts', key: 'id' },
        onDelete: 'CASCADE',
      },
      consuming_account: {
        ...accountRef(false),
        references: { model: 'accounts', key: 'id' },
        onDelete: 'CASCADE',
      },
      external_ref: { type: DataTypes.STRING(128), allowNull: true },
      name: { type: DataTypes.STRING(128), allowNull: true },
      email: { type: DataTypes.STRING(80), allowNull: true },
      telephone: { type: DataTypes.STRING(40), allowNull: true },
      ...timestamps,
    },
    tableOptions,
  );

  await qi.createTable(
    'roles',
    {
      id,
      name: { type: DataTypes.STRING(80), allowNull: false, unique: true },
      required_fields: { type: DataTypes.TEXT, allowNull: false },
    },
    tableOptions,
  );

  await qi.createTable(
    'role_assignments',
    {
      id,
      role: { type: DataTypes.STRING(80), allowNull: false, references: { model: 'roles', key: 'id' } },
      contact: {
        type: DataTypes.STRING(80),
        allowNull: false,
        references: { model: 'contacts', key: 'id' },
        onDelete: 'CASCADE',
      },
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('role_assignments', ['contact', 'role'], { unique: true });

  await qi.createTable(
    'api_keys',
    {
      api_key: { type: DataTypes.STRING(16).BINARY, primaryKey: true, allowNull: false },
      account_id: { ...accountRef(false), references: { model: 'accounts', key: 'id' }, onDelete: 'CASCADE' },
      secret_hash: { type: DataTypes.STRING(64), allowNull: false },
      label: { type: DataTypes.STRING(120), allowNull: false, defaultValue: '' },
      created_at: { type: DataTypes.DATE(3), allowNull: false },
      revoked_at: { type: DataTypes.DATE(3), allowNull: true },
    },
    tableOptions,
  );

  await qi.createTable(
    'refresh_tokens',
    {
      jti: { type: DataTypes.STRING(64).BINARY, primaryKey: true, allowNull: false },
      api_key: {
        type: DataTypes.STRING(16).BINARY,
        allowNull: false,
        references: { model: 'api_keys', key: 'api_key' },
        onDelete: 'CASCADE',
      },
      account_id: { ...accountRef(false), references: { model: 'accounts', key: 'id' }, onDelete: 'CASCADE' },
      family_id: { type: DataTypes.STRING(64).BINARY, allowNull: false },
      expires_at: { type: DataTypes.DATE(3), allowNull: false },
      used_at: { type: DataTypes.DATE(3), allowNull: true },
      revoked_at: { type: DataTypes.DATE(3), allowNull: true },
      created_at: { type: DataTypes.DATE(3), allowNull: false },
    },
    tableOptions,
  );
  await qi.addIndex('refresh_tokens', ['family_id']);
  await qi.addIndex('refresh_tokens', ['expires_at']);

  await qi.createTable(
    'events',
    {
      serial: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true, allowNull: false },
      type: { type: DataTypes.STRING(64), allowNull: false },
      payload: { type: DataTypes.TEXT, allowNull: false },
      timestamp: { type: DataTypes.DATE(3), allowNull: false },
      account: { ...accountRef(true) },
    },
    tableOptions,
  );
  await qi.addIndex('events', ['account', 'serial']);

  await qi.createTable(
    'workflow_outbox',
    {
      id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true, allowNull: false },
      workflow_type: { type: DataTypes.STRING(120), allowNull: false },
      workflow_id: { type: DataTypes.STRING(200), allowNull: false },
      args: { type: DataTypes.TEXT, allowNull: false },
      search_attributes: { type: DataTypes.TEXT, allowNull: false },
      created_at: { type: DataTypes.DATE(3), allowNull: false },
      delivered_at: { type: DataTypes.DATE(3), allowNull: true },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      last_error: { type: DataTypes.TEXT, allowNull: true },
    },
    tableOptions,
  );
  await qi.addIndex('workflow_outbox', ['delivered_at', 'id']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const table of [
    'workflow_outbox',
    'events',
    'refresh_tokens',
    'api_keys',
    'role_assignments',
    'roles',
    'contacts',
    'accounts',
  ]) {
    await qi.dropTable(table);
  }
}
