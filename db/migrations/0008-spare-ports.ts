import type { QueryInterface } from 'sequelize';

/**
 * The index the allocation of spare ports reads through: one device's free ports of one speed, in
 * id order. Locking reads then touch only the candidates, not every port of the PoP, which keeps
 * concurrent orders from blocking (and deadlocking) one another.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addIndex('ports', ['device', 'connection', 'speed', 'id'], { name: 'ports_spare' });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeIndex('ports', 'ports_spare');
}
