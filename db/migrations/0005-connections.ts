import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const account = { type: DataTypes.STRING(80), allowNull: false };
const text = (length: number, allowNull = false) => ({ type: DataTypes.STRING(length), allowNull });
const json = { type: DataTypes.TEXT, allowNull: false };

/**
 * Connections: a customer's ports at the exchange, bundled or standalone. Their ports are the
 * catalogue's ports rows whose `connection` names them; `device` and `lag_name` say where the
 * bundle lives on the fabric.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'connections',
    {
      id,
      name: text(80),
      state: text(32),
      status: json,
      managing_account: account,
      consuming_account: account,
      billing_account: account,
      role_assignments: json,
      external_ref: text(128, true),
      purchase_order: text(80),
      contract_ref: text(128, true),
      product_offering: text(80),
      pop: text(80),
      device: text(80),
      lag_name: text(80, true),
      mode: text(16),
      lacp_timeout: text(8, true),
      port_quantity: { type: DataTypes.INTEGER, allowNull: false },
      subscriber_side_demarcs: json,
      connecting_party: text(160, true),
      speed: { type: DataTypes.INTEGER, allowNull: true },
      capacity_allocation_limit: { type: DataTypes.INTEGER, allowNull: true },
      decommission_at: { type: DataTypes.DATEONLY, allowNull: true },
      charged_until: { type: DataTypes.DATEONLY, allowNull: true },
      current_billing_start_date: { type: DataTypes.DATEONLY, allowNull: true },
      ...timestamps,
    },
    tableOptions,
  );
  for (const column of ['managing_account', 'consuming_account', 'state', 'pop', 'updated_at'])
    await qi.addIndex('connections', [column]);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('connections');
}
