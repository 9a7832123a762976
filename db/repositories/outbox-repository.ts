import type { WorkflowStart } from '../../domain/families';
import { randomUUID } from 'node:crypto';
import { context, propagation } from '@opentelemetry/api';
import type { Transaction } from 'sequelize';
import { Op, QueryTypes } from 'sequelize';
import type { Models } from '../models';
import { isConflict } from '../unit-of-work';

export type { WorkflowStart };

/** A signal to a workflow that may be waiting for it (decided in a transaction, sent after commit). */
export interface WorkflowSignal {
  workflowId: string;
  signal: string;
}

export type OutboxMessage = WorkflowStart | WorkflowSignal;

export type PendingMessage = OutboxMessage & {
  id: number;
  attempts: number;
  /** The W3C trace context of the request that wrote it, for its delivery to join; null if none. */
  traceContext: Record<string, string> | null;
};

/** The trace the caller runs in, as W3C headers; null outside a sampled trace (tracing off). */
function activeTraceContext(): Record<string, string> | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : null;
}

export function isSignal(message: OutboxMessage): message is WorkflowSignal {
  return 'signal' in message;
}

/** Takes a message whose transaction has committed, to send it without holding up the writer. */
export type CommittedSender = (message: PendingMessage) => void;

/**
 * The outbox: every workflow start and signal a write decides is a row written in the write's own
 * transaction. Once that transaction has committed, its messages go to the process's sender (the
 * API's background sender), from this one place: no write hands them on by itself. A process
 * without a sender, or one that dies before sending, leaves them to the relay.
 */
export function createOutboxRepository({ models }: { models: Models }) {
  /** The senders named, latest last: the latest sends (API processes sharing a handle in tests). */
  const senders: CommittedSender[] = [];

  const toPending = (instance: InstanceType<Models['Outbox']>): PendingMessage => {
    const row = instance.get({ plain: true });
    const delivery = {
      id: Number(row.id),
      attempts: row.attempts,
      workflowId: row.workflowId,
      traceContext: row.traceContext ?? null,
    };
    if (row.signalName) return { ...delivery, signal: row.signalName };
    return {
      ...delivery,
      workflowType: row.workflowType,
      args: row.args,
      searchAttributes: row.searchAttributes as unknown as Record<string, string>,
    };
  };

  async function enqueue(message: OutboxMessage, transaction: Transaction): Promise<PendingMessage> {
    const row = await models.Outbox.create(
      isSignal(message)
        ? {
            workflowType: '',
            workflowId: message.workflowId,
            args: [],
            searchAttributes: {},
            signalName: message.signal,
            traceContext: activeTraceContext(),
          }
        : {
            ...message,
            searchAttributes: message.searchAttributes as unknown as Record<string, string[]>,
            traceContext: activeTraceContext(),
          },
      { transaction },
    );
    const pending = toPending(row);
    transaction.afterCommit(() => senders.at(-1)?.(pending));
    return pending;
  }

  const sequelize = models.Outbox.sequelize!;
  /** Claims run on the database's clock, which every replica shares. */
  const CLAIMABLE = 'delivered_at IS NULL AND (claimed_until IS NULL OR claimed_until < NOW(3))';
  const CLAIM_UNTIL = 'NOW(3) + INTERVAL :leaseUs MICROSECOND';
  /** How many batches of candidates a claim looks at when others take the first ones. */
  const CLAIM_ROUNDS = 3;

  return {
    enqueue,

    /**
     * Names who sends the messages of each committed transaction from now on; answers a function
     * that stops it (the sender named before it, if any, takes over again).
     */
    sendCommittedWith(send: CommittedSender): () => void {
      senders.push(send);
      return () => {
        const at = senders.lastIndexOf(send);
        if (at >= 0) senders.splice(at, 1);
      };
    },

    /**
     * Claims one message for `leaseMs` unless it was delivered or another process holds it: whoever
     * sends a message claims it first, so of several API replicas only one sends each. A claim that
     * lost to another node's at the same moment (a conflict, on a Galera cluster) is no claim.
     */
    async claim(id: number, leaseMs: number): Promise<boolean> {
      try {
        const [, affected] = await sequelize.query(
          `UPDATE workflow_outbox SET claimed_until = ${CLAIM_UNTIL}, claimed_by = NULL WHERE id = :id AND ${CLAIMABLE}`,
          { replacements: { id, leaseUs: leaseMs * 1000 }, type: QueryTypes.UPDATE },
        );
        return affected === 1;
      } catch (error) {
        if (isConflict(error)) return false;
        throw error;
      }
    },

    /**
     * Claims for `leaseMs` up to `limit` undelivered messages written more than `graceMs` ago that no
     * other process holds, oldest first. The rows are taken by one conditional update that marks
     * them with a token of this claim, and read back by it: a row another process claimed first
     * (on this node or another of a Galera cluster) no longer qualifies and stays theirs, and an
     * update that lost a conflict took nothing. Rows others took are passed over for the next ones,
     * a few times, so that concurrent relays take disjoint batches.
     */
    async claimDue(options: { graceMs: number; leaseMs: number; limit?: number }): Promise<PendingMessage[]> {
      const limit = options.limit ?? 50;
      const token = randomUUID();
      let taken = 0;
      let after = 0;
      for (let round = 0; round < CLAIM_ROUNDS && taken < limit; round += 1) {
        const candidates = await sequelize.query<{ id: number | string }>(
          `SELECT id FROM workflow_outbox
            WHERE ${CLAIMABLE} AND created_at < NOW(3) - INTERVAL :graceUs MICROSECOND AND id > :after
            ORDER BY id LIMIT :wanted`,
          {
            replacements: { graceUs: options.graceMs * 1000, after, wanted: limit - taken },
            type: QueryTypes.SELECT,
          },
        );
        if (candidates.length === 0) break;
        const ids = candidates.map((row) => Number(row.id));
        after = ids[ids.length - 1];
        try {
          const [, affected] = await sequelize.query(
            `UPDATE workflow_outbox SET claimed_until = ${CLAIM_UNTIL}, claimed_by = :token
              WHERE id IN (:ids) AND ${CLAIMABLE}`,
            { replacements: { ids, token, leaseUs: options.leaseMs * 1000 }, type: QueryTypes.UPDATE },
          );
          taken += affected;
        } catch (error) {
          // Another node claimed some of them first: they are theirs, and this update took none.
          if (!isConflict(error)) throw error;
        }
      }
      if (taken === 0) return [];
      const held = await sequelize.query<{ id: number | string }>(
        `SELECT id FROM workflow_outbox WHERE claimed_by = :token AND delivered_at IS NULL ORDER BY id`,
        { replacements: { token }, type: QueryTypes.SELECT },
      );
      if (held.length === 0) return [];
      const claimed = await models.Outbox.findAll({
        where: { id: held.map((row) => Number(row.id)) },
        order: [['id', 'ASC']],
      });
      return claimed.map(toPending);
    },

    /** Marks a message delivered; answers false when it was already (another process sent it too). */
    async markDelivered(id: number): Promise<boolean> {
      const [marked] = await models.Outbox.update(
        { deliveredAt: new Date() },
        { where: { id, deliveredAt: null } },
      );
      return marked === 1;
    },

    /** Counts a failed attempt and lets the message go, so that the next relay round tries again. */
    async markFailed(id: number, error: string): Promise<void> {
      await models.Outbox.update(
        {
          attempts: sequelize.literal('attempts + 1'),
          lastError: error.slice(0, 2000),
          claimedUntil: null,
        },
        { where: { id } },
      );
    },

    /** Gives up this process's claim of messages it did not send. */
    async release(ids: number[]): Promise<void> {
      if (ids.length === 0) return;
      await models.Outbox.update({ claimedUntil: null }, { where: { id: ids, deliveredAt: null } });
    },

    /** Deletes messages delivered before `deliveredBefore`, in batches; answers how many went. */
    async prune(deliveredBefore: Date, batch = 1000): Promise<number> {
      let pruned = 0;
      for (;;) {
        const gone = await models.Outbox.destroy({
          where: { deliveredAt: { [Op.lt]: deliveredBefore } },
          limit: batch,
        });
        pruned += gone;
        if (gone < batch) return pruned;
      }
    },

    /** Undelivered messages and when the oldest of them was written. */
    async backlog(): Promise<{ undelivered: number; oldest: Date | null }> {
      const [row] = await sequelize.query<{
        undelivered: number | string;
        oldest: Date | null;
      }>(
        'SELECT COUNT(*) AS undelivered, MIN(created_at) AS oldest FROM workflow_outbox WHERE delivered_at IS NULL',
        { type: QueryTypes.SELECT },
      );
      return { undelivered: Number(row.undelivered), oldest: row.oldest ? new Date(row.oldest) : null };
    },

    async isDelivered(id: number): Promise<boolean> {
      const row = (await models.Outbox.findByPk(id, { attributes: ['deliveredAt'] }))?.get({ plain: true });
      return row !== undefined && row.deliveredAt !== null;
    },
  };
}

export type OutboxRepository = ReturnType<typeof createOutboxRepository>;
