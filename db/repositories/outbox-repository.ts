import type { Transaction } from 'sequelize';
import { Op } from 'sequelize';
import type { Models } from '../models';

/** A workflow start that was decided inside a database transaction and must happen after commit. */
export interface WorkflowStart {
  workflowType: string;
  workflowId: string;
  args: unknown[];
  searchAttributes: Record<string, string>;
}

export interface PendingStart extends WorkflowStart {
  id: number;
  attempts: number;
}

export function createOutboxRepository({ models }: { models: Models }) {
  const toPending = (instance: InstanceType<Models['Outbox']>): PendingStart => {
    const row = instance.get({ plain: true });
    return {
      id: Number(row.id),
      workflowType: row.workflowType,
      workflowId: row.workflowId,
      args: row.args,
      searchAttributes: row.searchAttributes as unknown as Record<string, string>,
      attempts: row.attempts,
    };
  };

  return {
    async enqueue(start: WorkflowStart, transaction: Transaction): Promise<PendingStart> {
      const row = await models.Outbox.create(
        { ...start, searchAttributes: start.searchAttributes as unknown as Record<string, string[]> },
        { transaction },
      );
      return toPending(row);
    },

    /** Undelivered starts created before `olderThan`, oldest first. */
    async due(olderThan: Date, limit = 50): Promise<PendingStart[]> {
      const rows = await models.Outbox.findAll({
        where: { deliveredAt: null, createdAt: { [Op.lt]: olderThan } },
        order: [['id', 'ASC']],
        limit,
      });
      return rows.map(toPending);
    },

    async markDelivered(id: number): Promise<void> {
      await models.Outbox.update({ deliveredAt: new Date() }, { where: { id, deliveredAt: null } });
    },

    async markFailed(id: number, error: string): Promise<void> {
      await models.Outbox.increment('attempts', { where: { id } });
      await models.Outbox.update({ lastError: error.slice(0, 2000) }, { where: { id } });
    },

    async isDelivered(id: number): Promise<boolean> {
      const row = (await models.Outbox.findByPk(id, { attributes: ['deliveredAt'] }))?.get({ plain: true });
      return row !== undefined && row.deliveredAt !== null;
    },
  };
}

export type OutboxRepository = ReturnType<typeof createOutboxRepository>;
