import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

/**
 * Outbox rows are claimed before they are sent: `claimed_until` is the end of the claim of the
 * process sending the row (the API replica that wrote it, or a relay that took it over). While it
 * runs, no other replica sends the row; once it has passed, the row may be claimed again (the
 * claimant died or gave up).
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('workflow_outbox', 'claimed_until', { type: DataTypes.DATE(3), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('workflow_outbox', 'claimed_until');
}
