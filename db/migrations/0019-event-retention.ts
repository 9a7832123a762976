import type { QueryInterface } from 'sequelize';

/** Events past their retention are found by their time, so the housekeeping's deletion reads no others. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addIndex('events', ['timestamp']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeIndex('events', ['timestamp']);
}
