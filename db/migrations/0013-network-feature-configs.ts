import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const text = (length: number, allowNull = false) => ({ type: DataTypes.STRING(length), allowNull });
const date = { type: DataTypes.DATEONLY, allowNull: true };
const count = { type: DataTypes.INTEGER, allowNull: true };

/** Network feature configs: a member's sessions with the route servers of an exchange LAN. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'network_feature_configs',
    {
      id,
      type: text(16),
      state: text(32),
      status: { type: DataTypes.TEXT, allowNull: false },
      managing_account: text(80),
      consuming_account: text(80),
      billing_account: text(80),
      role_assignments: { type: DataTypes.TEXT, allowNull: false },
      external_ref: text(128, true),
      purchase_order: text(80),
      contract_ref: text(128, true),
      network_feature: text(80),
      network_service_config: text(80),
      asn: { type: DataTypes.BIGINT, allowNull: false },
      password: text(128, true),
      as_set_v4: text(100, true),
      as_set_v6: text(100, true),
      max_prefix_v4: count,
      max_prefix_v6: count,
      insert_ixp_asn: { type: DataTypes.BOOLEAN, allowNull: true },
      session_mode: text(16),
      bgp_session_type: text(16),
      ip: text(80),
      flags: { type: DataTypes.TEXT, allowNull: false },
      decommission_at: date,
      charged_until: date,
      current_billing_start_date: date,
      cancel_requested_at: { type: DataTypes.DATE(3), allowNull: true },
      /** Counts the changes the route server has to carry out; the workflow configures each once. */
      revision: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
      ...timestamps,
    },
    tableOptions,
  );
  for (const column of [
    'network_service_config',
    'network_feature',
    'managing_account',
    'consuming_account',
    'state',
    'updated_at',
  ])
    await qi.addIndex('network_feature_configs', [column]);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('network_feature_configs');
}
