import type { Transaction } from 'sequelize';
import { Op } from 'sequelize';
import type { EventType } from '../../domain/events';
import { eventResourceOf } from '../../domain/events';
import type { Models } from '../models';

export interface NewEvent {
  type: EventType;
  payload: Record<string, unknown>;
  account: string | null;
}

/** An event as stored; rows written before a kind was renamed may carry a type no longer written. */
export interface StoredEvent extends Omit<NewEvent, 'type'> {
  type: string;
  serial: number;
  timestamp: string;
}

/** An event as it is stored: with its time, and the id of the resource it is about. */
const stored = <E extends NewEvent>(event: E) => ({
  ...event,
  resource: eventResourceOf(event.type, event.payload),
  timestamp: new Date(),
});

export function createEventRepository({ models }: { models: Models }) {
  return {
    /** Deletes up to 10,000 events recorded before `cutoff`, oldest first; answers how many went. */
    async purgeBefore(cutoff: Date): Promise<number> {
      return models.Event.destroy({
        where: { timestamp: { [Op.lt]: cutoff } },
        limit: 10_000,
      });
    },

    /** Appends an event inside the caller's transaction, so it exists exactly when the change does. */
    async append(event: NewEvent, transaction: Transaction): Promise<void> {
      await models.Event.create(stored(event), { transaction });
    },

    /**
     * Appends an event that concerns two accounts (a resource's managing and consuming sides):
     * both read it among their events, and whoever acts for both reads it once.
     */
    async appendFor(
      event: Omit<NewEvent, 'account'>,
      [account, also]: readonly [string, string],
      transaction: Transaction,
    ): Promise<void> {
      await models.Event.create(stored({ ...event, account, also_account: also === account ? null : also }), {
        transaction,
      });
    },

    /**
     * Appends an event of a declared family (domain/declared-family.ts), whose kinds the family
     * declares rather than the list of kinds: `resource` is the id of the resource it is about.
     */
    async appendDeclared(
      event: { type: string; payload: Record<string, unknown>; resource: string },
      [account, also]: readonly [string, string],
      transaction: Transaction,
    ): Promise<void> {
      await models.Event.create(
        { ...event, account, also_account: also === account ? null : also, timestamp: new Date() },
        { transaction },
      );
    },

    async listForAccount(account: string, afterSerial = 0): Promise<StoredEvent[]> {
      const rows = await models.Event.findAll({
        where: { account, serial: { [Op.gt]: afterSerial } },
        order: [['serial', 'ASC']],
      });
      return rows.map((row) => {
        const event = row.get({ plain: true });
        return { ...event, serial: Number(event.serial), timestamp: event.timestamp.toISOString() };
      });
    },
  };
}

export type EventRepository = ReturnType<typeof createEventRepository>;
