import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

/**
 * Each API key records when it was last used: when a token pair was last issued through it (a login,
 * or a refresh of one of its logins), to the minute, so that operators see which keys are still in
 * use before revoking one. Keys used before this was recorded show as never used until their next login.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('api_keys', 'last_used_at', { type: DataTypes.DATE(3), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('api_keys', 'last_used_at');
}
