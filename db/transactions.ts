import { setTimeout as sleep } from 'node:timers/promises';
import type { Sequelize } from 'sequelize';
import { Transaction } from 'sequelize';

/** How often a transaction chosen as a deadlock victim is run again before the error stands. */
const DEADLOCK_ATTEMPTS = 5;

/** The transactions `allocatingTransaction` began (READ COMMITTED). */
const readCommitted = new WeakSet<Transaction>();

/** Whether `transaction` came from `allocatingTransaction`, so each statement sees what committed. */
export const isReadCommitted = (transaction: Transaction): boolean => readCommitted.has(transaction);

/** Whether the database rolled the transaction back to break a deadlock. */
export function isDeadlock(error: unknown): boolean {
  const cause = (error as { parent?: { errno?: number; code?: string } } | null)?.parent;
  return cause?.errno === 1213 || cause?.code === 'ER_LOCK_DEADLOCK';
}

/**
 * A transaction that takes something scarce (ports, VLAN tags, addresses) after locking what
 * serialises the takers. READ COMMITTED lets each statement see what committed while it waited
 * for the lock (a repeatable read would show the snapshot of its first read) and takes no gap
 * locks. A deadlock victim is run again (everything it did was undone), a few times, after a short
 * random pause; `started` tells the caller about each transaction begun.
 */
export async function allocatingTransaction<T>(
  sequelize: Sequelize,
  work: (transaction: Transaction) => Promise<T>,
  started: (transaction: Transaction) => void = () => {},
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await sequelize.transaction(
        { isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED },
        (transaction) => {
          readCommitted.add(transaction);
          started(transaction);
          return work(transaction);
        },
      );
    } catch (error) {
      if (!isDeadlock(error) || attempt >= DEADLOCK_ATTEMPTS) throw error;
      await sleep(10 + Math.floor(Math.random() * 40 * attempt));
    }
  }
}
