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

/** A signal to a workflow that may be waiting for it (decided in a transaction, sent after commit). */
export interface WorkflowSignal {
  workflowId: string;
  signal: string;
}

export type OutboxMessage = WorkflowStart | WorkflowSignal;

export type PendingMessage<M extends OutboxMessage = OutboxMessage> = M & { id: number; attempts: number };

/** An undelivered workflow start. */
export type PendingStart = PendingMessage<WorkflowStart>;

export function isSignal(message: OutboxMessage): message is WorkflowSignal {
  return 'signal' in message;
}

export function createOutboxRepository({ models }: { models: Models }) {
  const toPending = (instance: InstanceType<Models['Outbox']>): PendingMessage => {
    const row = instance.get({ plain: true });
    const delivery = { id: Number(row.id), attempts: row.attempts, workflowId: row.workflowId };
    if (row.signalName) return { ...delivery, signal: row.signalName };
    return {
      ...delivery,
      workflowType: row.workflowType,
      args: row.args,
      searchAttributes: row.searchAttributes as unknown as Record<string, string>,
    };
  };

  async function enqueue(message: WorkflowStart, transaction: Transaction): Promise<PendingStart>;
  async function enqueue(message: WorkflowSignal, transaction: Transaction): Promise<PendingMessage>;
  async function enqueue(message: OutboxMessage, transaction: Transaction): Promise<PendingMessage> {
    const row = await models.Outbox.create(
      isSignal(message)
        ? {
            workflowType: '',
            workflowId: message.workflowId,
            args: [],
            searchAttributes: {},
            signalName: message.signal,
          }
        : {
            ...message,
            searchAttributes: message.searchAttributes as unknown as Record<string, string[]>,
          },
      { transaction },
    );
    return toPending(row);
  }

  return {
    enqueue,

    /** Undelivered messages created before `olderThan`, oldest first. */
    async due(olderThan: Date, limit = 50): Promise<PendingMessage[]> {
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
