import type { QueryInterface } from 'sequelize';

/**
 * What guards requests across API replicas:
 * - `rate_limits`: the counters of the rate limits (rate-limiter-flexible's layout). A MEMORY table:
 *   a counter lives for a minute or so and needs no durability, so counting a request costs no
 *   write to the redo log; a database restart merely resets the counters.
 * - `idempotency_keys`: per account and `Idempotency-Key`, the request it was first used with (a
 *   fingerprint) and, once answered, the answer to repeat; `locked_until` is the lease of the request
 *   still being processed.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(
    `CREATE TABLE rate_limits (
       \`key\` VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
       points INT NOT NULL DEFAULT 0,
       expire BIGINT UNSIGNED,
       PRIMARY KEY (\`key\`)
     ) ENGINE = MEMORY`,
  );
  await qi.sequelize.query(
    `CREATE TABLE idempotency_keys (
       account VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
       idempotency_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
       fingerprint CHAR(64) CHARACTER SET ascii NOT NULL,
       method VARCHAR(8) CHARACTER SET ascii NOT NULL,
       path VARCHAR(2048) NOT NULL,
       status SMALLINT NULL,
       content_type VARCHAR(255) NULL,
       body LONGBLOB NULL,
       created_at DATETIME(3) NOT NULL,
       locked_until DATETIME(3) NOT NULL,
       expires_at DATETIME(3) NOT NULL,
       PRIMARY KEY (account, idempotency_key),
       KEY idempotency_keys_expires_at (expires_at)
     ) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci`,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('idempotency_keys');
  await qi.dropTable('rate_limits');
}
