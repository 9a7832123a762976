import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

/**
 * Each claim of outbox rows names its holder: `claimed_by` is a token drawn for one claim, written
 * by the conditional update that takes the rows and read back to learn which rows it took. A claim
 * is so decided by the rows' own update, which holds on every node of a Galera cluster, rather than
 * by row locks, which hold only on the node that took them.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('workflow_outbox', 'claimed_by', { type: DataTypes.STRING(36), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('workflow_outbox', 'claimed_by');
}
