import { setTimeout as sleep } from 'node:timers/promises';
import type { Sequelize } from 'sequelize';
import { ConnectionError, Transaction } from 'sequelize';

/** How often a write the database rolled back for a conflict is run again before the error stands. */
const CONFLICT_ATTEMPTS = 5;

/** The transactions begun READ COMMITTED (`isolation: 'read-committed'`). */
const readCommitted = new WeakSet<Transaction>();

/** Whether `transaction` reads committed rows at each statement (begun with `isolation: 'read-committed'`). */
export const isReadCommitted = (transaction: Transaction): boolean => readCommitted.has(transaction);

/**
 * Whether the database refused the transaction to resolve a conflict: a deadlock, or on a Galera
 * cluster a certification conflict with a transaction another node committed first (both answer
 * 1213), or a wait for a row lock that timed out (1205; on a cluster, a lock an applied write of
 * another node held). The unit of work rolls it back whole, so it may simply run again.
 */
export function isConflict(error: unknown): boolean {
  const cause = (error as { parent?: { errno?: number; code?: string } } | null)?.parent;
  return (
    cause?.errno === 1213 ||
    cause?.errno === 1205 ||
    cause?.code === 'ER_LOCK_DEADLOCK' ||
    cause?.code === 'ER_LOCK_WAIT_TIMEOUT'
  );
}

/** What a connection whose server went away, or never answered, fails with (mysql2's codes). */
const CONNECTION_GONE: ReadonlySet<string> = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);

/**
 * The server's own refusals that say it cannot serve now: a Galera node that is not part of the
 * primary component yet (1047, "WSREP has not yet prepared node for application use"), a server
 * shutting down (1053), a connection the server killed (1927), and the client library's "server
 * has gone away" and "lost connection" (2006, 2013).
 */
const SERVER_NOT_SERVING: ReadonlySet<number> = new Set([1047, 1053, 1927, 2006, 2013]);

/**
 * Whether the database could not be reached or could not serve: its server (on a cluster, the
 * node this process uses) is down, restarting or not yet part of the cluster. Another try a little
 * later may well succeed. A write whose connection went while it committed may have been taken.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  const cause = (error as { parent?: { errno?: number; code?: string; fatal?: boolean } } | null)?.parent;
  if (!cause) return false;
  return (
    (cause.code !== undefined && CONNECTION_GONE.has(cause.code)) ||
    (cause.errno !== undefined && SERVER_NOT_SERVING.has(cause.errno)) ||
    cause.fatal === true
  );
}

let retried = 0;

/** How many transactions of this process the unit of work ran again after a conflict, in all. */
export const conflictsRetried = (): number => retried;

export interface UnitOfWorkOptions {
  /**
   * `read-committed` for a write that takes something scarce (ports, VLAN tags, addresses) after
   * locking what serialises the takers: each statement sees what committed while it waited for the
   * lock (a repeatable read would show the snapshot of its first read), and it takes no gap locks.
   * It is each connection's default, so it costs no statement. Otherwise repeatable read.
   */
  isolation?: 'read-committed';
  /** Told of each transaction begun (a retried write begins one per attempt). */
  started?: (transaction: Transaction) => void;
}

/**
 * The unit of work every write of the stores runs as: one transaction holding its rows, its events
 * and its outbox rows, which commit together or not at all. The outbox sends the workflow messages
 * once the transaction has committed (db/repositories/outbox-repository.ts). A transaction the
 * database rolled back for a conflict (`isConflict`) is run again whole, a few times, after a
 * short random pause; `work` must therefore change nothing but the database.
 */
export async function unitOfWork<T>(
  sequelize: Sequelize,
  work: (transaction: Transaction) => Promise<T>,
  options: UnitOfWorkOptions = {},
): Promise<T> {
  // Connections begin READ COMMITTED (db/connection.ts): only a repeatable read is asked for.
  const settings =
    options.isolation === 'read-committed'
      ? {}
      : { isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await sequelize.transaction(settings, (transaction) => {
        if (options.isolation === 'read-committed') readCommitted.add(transaction);
        options.started?.(transaction);
        return work(transaction);
      });
    } catch (error) {
      if (!isConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
      retried += 1;
      await sleep(10 + Math.floor(Math.random() * 40 * attempt));
    }
  }
}
