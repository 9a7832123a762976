import type { QueryInterface } from 'sequelize';

/**
 * Every authenticated request asks whether its login has been revoked (db/visibility.ts): whether a
 * refresh token of its family is. The index answers that from the index alone, however many times
 * the login has been refreshed; it serves the family's other look-ups too, so it replaces the index
 * on the family alone.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addIndex('refresh_tokens', ['family_id', 'revoked_at']);
  await qi.removeIndex('refresh_tokens', ['family_id']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addIndex('refresh_tokens', ['family_id']);
  await qi.removeIndex('refresh_tokens', ['family_id', 'revoked_at']);
}
