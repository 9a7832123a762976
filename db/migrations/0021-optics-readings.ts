import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

/**
 * The last light levels read from each port's optics, by the traffic collector: the API shows them
 * with a port's statistics without reaching a device itself. One row per port, replaced each round.
 * A lab fault may name an interface, so that it affects only reads of that interface (the
 * collector reads the optics of ports in service while a workflow tests a new connection's).
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'port_optics',
    {
      port: { type: DataTypes.STRING(80), primaryKey: true, allowNull: false },
      tx_dbm: { type: DataTypes.DOUBLE, allowNull: false },
      rx_dbm: { type: DataTypes.DOUBLE, allowNull: false },
      read_at: { type: DataTypes.DATE(3), allowNull: false },
    },
    tableOptions,
  );
  await qi.addColumn('lab_faults', 'interface', { type: DataTypes.STRING(96), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('lab_faults', 'interface');
  await qi.dropTable('port_optics');
}
