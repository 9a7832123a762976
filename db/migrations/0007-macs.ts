import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const account = { type: DataTypes.STRING(80), allowNull: false };
const instant = { type: DataTypes.DATE(3), allowNull: true };

/** MAC addresses customers register for use on their network service configs. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'macs',
    {
      id,
      managing_account: account,
      consuming_account: account,
      external_ref: { type: DataTypes.STRING(128), allowNull: true },
      address: { type: DataTypes.STRING(17), allowNull: false },
      valid_not_before: instant,
      valid_not_after: instant,
      ...timestamps,
    },
    tableOptions,
  );
  for (const column of ['managing_account', 'consuming_account', 'address', 'updated_at'])
    await qi.addIndex('macs', [column]);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('macs');
}
