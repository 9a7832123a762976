import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

const text = (length: number, allowNull = false) => ({ type: DataTypes.STRING(length), allowNull });
/** Keys tell upper from lower case, as providers and the exchange's request keys do. */
const key = (allowNull: boolean) => ({ type: DataTypes.STRING(200).BINARY, allowNull });
const count = { type: DataTypes.INTEGER, allowNull: false };
const instant = { type: DataTypes.DATE(3), allowNull: false };

/** What lab services gain: the segment they join and whether they are isolated in it. */
const SERVICE_COLUMNS = {
  segment: { type: DataTypes.STRING(80), allowNull: false, defaultValue: '' },
  isolated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
} as const;

/**
 * The lab's cloud providers, and the segments of lab services.
 *
 * `lab_cloud_circuits` holds the circuits the lab's providers keep: those the exchange makes for
 * its customers and those customers make themselves and hand to the exchange. `cloud_key` is the
 * circuit's key as the contract shows it (the customer's account at the provider, or the key a
 * customer's circuit is named by); `service_key` repeats the latter only for customers' circuits, so
 * that a provider never gives one key to two of them. `request_key` is the exchange's request that
 * made or accepted the circuit. `attachments` lists the handovers' connected VLANs as JSON.
 * `lab_cloud_faults` are injected failures, as `lab_faults` are for devices.
 *
 * Services on lab devices join a segment (their network service), as leaves isolated in it; the
 * services configured before are given those of the configs they are named after.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const [name, column] of Object.entries(SERVICE_COLUMNS))
    await qi.addColumn('lab_services', name, column);
  await qi.sequelize.query(
    `UPDATE lab_services s JOIN network_service_configs n ON n.id = s.name
     SET s.segment = n.network_service, s.isolated = (n.role <=> 'leaf')`,
  );

  await qi.createTable(
    'lab_cloud_circuits',
    {
      ref: { type: DataTypes.STRING(80).BINARY, allowNull: false, primaryKey: true },
      provider: text(128),
      cloud_key: key(false),
      service_key: key(true),
      region: text(80),
      pop: text(80),
      bandwidth: count,
      bandwidth_limit: count,
      handovers: count,
      vlans: text(8),
      state: text(10),
      origin: text(10),
      /** Whose circuit it is, as the lab notes it for demos; providers' own records are not modelled. */
      customer: text(200, true),
      request_key: key(true),
      attachments: { type: DataTypes.TEXT, allowNull: false },
      created_at: instant,
      updated_at: instant,
    },
    tableOptions,
  );
  await qi.addIndex('lab_cloud_circuits', ['provider', 'service_key'], { unique: true });
  await qi.addIndex('lab_cloud_circuits', ['request_key'], { unique: true });

  await qi.createTable(
    'lab_cloud_faults',
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      provider: text(128, true),
      operation: text(32),
      code: text(32),
      message: text(240),
      /** The provider does the work and only then fails to answer. */
      after_work: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      remaining: count,
    },
    tableOptions,
  );
  await qi.addIndex('lab_cloud_faults', ['operation']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('lab_cloud_faults');
  await qi.dropTable('lab_cloud_circuits');
  for (const name of Object.keys(SERVICE_COLUMNS)) await qi.removeColumn('lab_services', name);
}
