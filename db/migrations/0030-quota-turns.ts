import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

/**
 * A turn of each account tree's orders: an order that counts against the quotas of a tree moves its
 * top account's turn in its transaction. Two orders of one tree so write the same row, which
 * serialises them on one database and, on a Galera cluster, makes certification refuse the second to
 * commit (it then runs again and counts the first), where a row lock would hold on one node only.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'quota_turns',
    {
      account: {
        type: DataTypes.STRING(80),
        primaryKey: true,
        allowNull: false,
        references: { model: 'accounts', key: 'id' },
        onDelete: 'CASCADE',
      },
      turn: { type: DataTypes.BIGINT.UNSIGNED, allowNull: false, defaultValue: 0 },
    },
    tableOptions,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('quota_turns');
}
