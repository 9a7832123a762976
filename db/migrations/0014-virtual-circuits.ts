import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const text = (length: number, allowNull = false) => ({ type: DataTypes.STRING(length), allowNull });
const date = { type: DataTypes.DATEONLY, allowNull: true };
const instant = { type: DataTypes.DATE(3), allowNull: true };
const count = { type: DataTypes.INTEGER, allowNull: true };

/** Columns customer-ordered network services add to the exchange LANs' table. */
const SERVICE_COLUMNS = {
  /** The B side of a point-to-point circuit. */
  joining_member_account: text(80, true),
  /** Mbit/s of the circuit; null for the offering's maximum. */
  capacity: count,
  /** A public multipoint service admits every account no rule denies. */
  public: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
  cloud_key: text(200, true),
  diversity: count,
  /** The circuit's name at the cloud provider. */
  provider_ref: text(128, true),
  decommission_at: date,
  charged_until: date,
  current_billing_start_date: date,
  cancel_requested_at: instant,
  /** Counts the changes the fabric has to carry out; the workflow configures each once. */
  revision: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
  /** The open change request of a point-to-point circuit (at most one), asked for by its B side. */
  change_requested_at: instant,
  change_product_offering: text(80, true),
  change_capacity: count,
} as const;

/** Columns the configs of virtual circuits add. */
const CONFIG_COLUMNS = {
  /** Point-to-multipoint: `root` reaches everyone, a `leaf` only the roots. */
  role: text(8, true),
  /** Cloud: which of the service's redundant handovers (1..diversity) the config is. */
  handover: count,
  /** Cloud: the provider-side VLAN the config selects; null for all of them (or the only one). */
  cloud_vlan: { type: DataTypes.SMALLINT, allowNull: true },
} as const;

/**
 * Virtual circuits: point-to-point, multipoint and cloud services ordered by customers, their
 * configs' extra properties, and the rules that admit members to private multipoint services.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const [name, column] of Object.entries(SERVICE_COLUMNS))
    await qi.addColumn('network_services', name, column);
  for (const columns of [['managing_account'], ['consuming_account'], ['joining_member_account'], ['state']])
    await qi.addIndex('network_services', columns);
  for (const [name, column] of Object.entries(CONFIG_COLUMNS))
    await qi.addColumn('network_service_configs', name, column);

  await qi.createTable(
    'member_joining_rules',
    {
      id,
      type: text(8),
      network_service: text(80),
      consuming_account: text(80),
      managing_account: text(80),
      external_ref: text(128, true),
      capacity_min: count,
      capacity_max: count,
      ...timestamps,
    },
    tableOptions,
  );
  // One rule per account and service: an account is either allowed (with its caps) or denied.
  await qi.addIndex('member_joining_rules', ['network_service', 'consuming_account'], { unique: true });
  await qi.addIndex('member_joining_rules', ['managing_account']);
  await qi.addIndex('member_joining_rules', ['consuming_account']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('member_joining_rules');
  for (const name of Object.keys(CONFIG_COLUMNS)) await qi.removeColumn('network_service_configs', name);
  for (const columns of [['managing_account'], ['consuming_account'], ['joining_member_account'], ['state']])
    await qi.removeIndex('network_services', columns);
  for (const name of Object.keys(SERVICE_COLUMNS)) await qi.removeColumn('network_services', name);
}
