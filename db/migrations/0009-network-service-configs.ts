import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const text = (length: number, allowNull = false) => ({ type: DataTypes.STRING(length), allowNull });
const date = { type: DataTypes.DATEONLY, allowNull: true };
const instant = { type: DataTypes.DATE(3), allowNull: true };
const tag = { type: DataTypes.SMALLINT, allowNull: true };
const json = { type: DataTypes.TEXT, allowNull: false };

/**
 * Network service configs (a connection's access to a network service, on a VLAN of it), the MAC
 * addresses each config lets through, and IP addresses: those the exchange allocates to configs
 * from its services' subnets, kept after release until their quarantine is over.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'network_service_configs',
    {
      id,
      type: text(16),
      state: text(32),
      status: json,
      managing_account: text(80),
      consuming_account: text(80),
      billing_account: text(80),
      role_assignments: json,
      external_ref: text(128, true),
      purchase_order: text(80),
      contract_ref: text(128, true),
      network_service: text(80),
      connection: text(80),
      product_offering: text(80, true),
      vlan_type: text(8),
      /** The dot1q tag, or the outer tag of qinq; null for port. */
      outer_vlan: tag,
      outer_vlan_ethertype: text(8, true),
      inner_vlan: tag,
      /** Whether the tags still occupy the connection (until the config is gone). */
      vlan_held: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      capacity: { type: DataTypes.INTEGER, allowNull: true },
      asns: json,
      listed: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      decommission_at: date,
      charged_until: date,
      current_billing_start_date: date,
      cancel_requested_at: instant,
      /** Counts the changes the device has to carry out; the workflow configures each once. */
      revision: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
      ...timestamps,
    },
    tableOptions,
  );
  for (const columns of [
    ['connection', 'vlan_held'],
    ['network_service'],
    ['managing_account'],
    ['consuming_account'],
    ['state'],
    ['updated_at'],
  ])
    await qi.addIndex('network_service_configs', columns);

  await qi.createTable(
    'network_service_config_macs',
    {
      network_service_config: { ...text(80), primaryKey: true },
      mac: { ...text(80), primaryKey: true },
    },
    tableOptions,
  );
  await qi.addIndex('network_service_config_macs', ['mac']);

  await qi.createTable(
    'ip_addresses',
    {
      id,
      managing_account: text(80),
      consuming_account: text(80),
      external_ref: text(128, true),
      version: { type: DataTypes.TINYINT, allowNull: false },
      address: text(39),
      prefix_length: { type: DataTypes.SMALLINT, allowNull: false },
      fqdn: text(100, true),
      valid_not_before: instant,
      valid_not_after: instant,
      /** The service whose subnet the address is from. */
      network_service: text(80, true),
      network_service_config: text(80, true),
      /** Set once the address went back to the exchange; reusable after the quarantine. */
      released_at: instant,
      ...timestamps,
    },
    tableOptions,
  );
  // One row per address of a subnet: two configs can never hold the same one.
  await qi.addIndex('ip_addresses', ['network_service', 'address'], { unique: true });
  for (const column of ['network_service_config', 'managing_account', 'consuming_account', 'updated_at'])
    await qi.addIndex('ip_addresses', [column]);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('ip_addresses');
  await qi.dropTable('network_service_config_macs');
  await qi.dropTable('network_service_configs');
}
