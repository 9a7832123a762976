import type { Transaction } from 'sequelize';
import { Op } from 'sequelize';
import type { Models } from '../models';

export interface NewEvent {
  type: string;
  payload: Record<string, unknown>;
  account: string | null;
}

export interface StoredEvent extends NewEvent {
  serial: number;
  timestamp: string;
}

export function createEventRepository({ models }: { models: Models }) {
  return {
    /** Appends an event inside the caller's transaction, so it exists exactly when the change does. */
    async append(event: NewEvent, transaction: Transaction): Promise<void> {
      await models.Event.create({ ...event, timestamp: new Date() }, { transaction });
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
