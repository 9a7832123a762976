import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const text = (length: number, allowNull = false) => ({ type: DataTypes.STRING(length), allowNull });
const date = { type: DataTypes.DATEONLY, allowNull: true };
/** A letter of authorisation as uploaded (PDF, at most a few MB). */
const document = { type: DataTypes.BLOB('medium'), allowNull: true };

/**
 * Port reservations: one per port of a connection, the unit a customer adds to or takes from a
 * bundle, with its cross-connect details. Letters of authorisation uploaded for connections and
 * reservations are kept with them; events name a second account that may read them.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'port_reservations',
    {
      id,
      state: text(32),
      status: { type: DataTypes.TEXT, allowNull: false },
      connection: text(80),
      port: text(80, true),
      subscriber_side_demarc: text(255, true),
      exchange_side_demarc: text(255, true),
      connecting_party: text(160, true),
      cross_connect_id: text(128, true),
      external_ref: text(128, true),
      purchase_order: text(80),
      contract_ref: text(128, true),
      decommission_at: date,
      charged_until: date,
      current_billing_start_date: date,
      loa: document,
      ...timestamps,
    },
    tableOptions,
  );
  for (const column of ['connection', 'port', 'state', 'updated_at'])
    await qi.addIndex('port_reservations', [column]);
  await qi.addColumn('connections', 'loa', document);
  // An event about a resource with two sides is the consuming account's to read as well.
  await qi.addColumn('events', 'also_account', { type: DataTypes.STRING(80), allowNull: true });
  await qi.addIndex('events', ['also_account', 'serial']);
  // A cancellation asked for while provisioning was still under way; the workflow carries it out.
  await qi.addColumn('connections', 'cancel_requested_at', { type: DataTypes.DATE(3), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('connections', 'cancel_requested_at');
  await qi.removeColumn('events', 'also_account');
  await qi.removeColumn('connections', 'loa');
  await qi.dropTable('port_reservations');
}
