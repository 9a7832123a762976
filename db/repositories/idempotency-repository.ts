import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { sqlOf } from '../collection';

/** An answer kept for a key, to be given again to a retry. */
export interface StoredAnswer {
  status: number;
  contentType: string | null;
  body: Buffer | null;
}

/** What a key holds when a request arrives with it. */
export type KeyClaim =
  | { outcome: 'claimed' }
  | { outcome: 'answered'; fingerprint: string; answer: StoredAnswer }
  | { outcome: 'in progress'; fingerprint: string }
  | { outcome: 'abandoned'; fingerprint: string };

interface KeyRow {
  fingerprint: string;
  status: number | null;
  content_type: string | null;
  body: Buffer | null;
  expired: number;
  lease_over: number;
}

/**
 * Idempotency keys per account (table `idempotency_keys`): the first request with a key claims it
 * with a lease, and its answer is kept for the key's lifetime. Times come from the database's clock,
 * so API replicas agree on leases and expiry.
 */
export function createIdempotencyRepository(sequelize: Sequelize) {
  const { select, run } = sqlOf(sequelize);
  const where = 'account = :account AND idempotency_key = :key';

  return {
    /**
     * Claims `key` for a request with this fingerprint, or says what an earlier request left: its
     * answer, that it is still being processed, or that it stopped without answering (lease over).
     * An expired key is claimed afresh.
     */
    async claim(entry: {
      account: string;
      key: string;
      fingerprint: string;
      method: string;
      path: string;
      leaseSeconds: number;
      lifetimeSeconds: number;
    }): Promise<KeyClaim> {
      const replacements = { ...entry };
      for (;;) {
        const [, inserted] = await sequelize.query(
          `INSERT IGNORE INTO idempotency_keys
             (account, idempotency_key, fingerprint, method, path, created_at, locked_until, expires_at)
           VALUES (:account, :key, :fingerprint, :method, :path, NOW(3),
             NOW(3) + INTERVAL :leaseSeconds SECOND, NOW(3) + INTERVAL :lifetimeSeconds SECOND)`,
          { replacements, type: QueryTypes.INSERT },
        );
        if (inserted === 1) return { outcome: 'claimed' };
        const [row] = await select<KeyRow>(
          `SELECT fingerprint, status, content_type, body, expires_at <= NOW(3) AS expired,
             locked_until <= NOW(3) AS lease_over
           FROM idempotency_keys WHERE ${where}`,
          replacements,
        );
        if (!row) continue; // deleted meanwhile: claim again
        if (Number(row.expired)) {
          await run(`DELETE FROM idempotency_keys WHERE ${where} AND expires_at <= NOW(3)`, replacements);
          continue;
        }
        if (row.status !== null) {
          return {
            outcome: 'answered',
            fingerprint: row.fingerprint,
            answer: { status: row.status, contentType: row.content_type, body: row.body },
          };
        }
        return {
          outcome: Number(row.lease_over) ? 'abandoned' : 'in progress',
          fingerprint: row.fingerprint,
        };
      }
    },

    /** Keeps the answer of the request that claimed the key. */
    async answer(account: string, key: string, answer: StoredAnswer): Promise<void> {
      await run(
        `UPDATE idempotency_keys SET status = :status, content_type = :contentType, body = :body
         WHERE ${where} AND status IS NULL`,
        { account, key, ...answer },
      );
    },

    /** Frees a key whose request changed nothing, so that a retry is carried out anew. */
    async release(account: string, key: string): Promise<void> {
      await run(`DELETE FROM idempotency_keys WHERE ${where} AND status IS NULL`, { account, key });
    },

    /** Deletes keys past their lifetime; answers how many. */
    async purgeExpired(): Promise<number> {
      const [result] = await run('DELETE FROM idempotency_keys WHERE expires_at <= NOW(3) LIMIT 10000', {});
      return Number((result as { affectedRows?: number }).affectedRows ?? 0);
    },
  };
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;
