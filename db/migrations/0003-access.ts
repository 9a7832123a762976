import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

/**
 * Writes on accounts, contacts and role assignments: the outbox learns to carry signals to running
 * workflows, and the columns that visibility and conflict checks search by get indexes.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('workflow_outbox', 'signal_name', { type: DataTypes.STRING(120), allowNull: true });
  await qi.addIndex('accounts', ['managing_account']);
  await qi.addIndex('contacts', ['managing_account']);
  await qi.addIndex('contacts', ['consuming_account']);
  await qi.addIndex('role_assignments', ['role']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeIndex('role_assignments', ['role']);
  await qi.removeIndex('contacts', ['consuming_account']);
  await qi.removeIndex('contacts', ['managing_account']);
  await qi.removeIndex('accounts', ['managing_account']);
  await qi.removeColumn('workflow_outbox', 'signal_name');
}
