import { context } from '@opentelemetry/api';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimiterMemory, RateLimiterMySQL } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';

/** The table every limiter counts in (a MEMORY table: counters need no durability, see migration 0017). */
export const RATE_LIMIT_TABLE = 'rate_limits';

type Connection = { query: (...args: unknown[]) => unknown };

/**
 * Sequelize's connections as the limiter sees them, each statement's callback run in the context
 * of the request that counts. The library chains its statements in the callbacks of raw mysql2
 * queries, which otherwise run in the context of the connection's socket: a trace would then hold
 * the counts of every later request served on the connection its request opened.
 */
function storeKeepingContext(sequelize: Sequelize) {
  const manager = sequelize.connectionManager as unknown as {
    getConnection(): Promise<Connection>;
    releaseConnection(connection: Connection): Promise<void>;
  };
  const originals = new WeakMap<Connection, Connection>();
  return {
    connectionManager: {
      async getConnection(): Promise<Connection> {
        const connection = await manager.getConnection();
        const query = (...args: unknown[]) => {
          const last = args.length - 1;
          if (typeof args[last] === 'function') args[last] = context.bind(context.active(), args[last]);
          return connection.query(...args);
        };
        const kept = new Proxy(connection, {
          get: (target, property) =>
            property === 'query' ? query : (Reflect.get(target, property, target) as unknown),
        });
        originals.set(kept, connection);
        return kept;
      },
      releaseConnection: (connection: Connection) =>
        manager.releaseConnection(originals.get(connection) ?? connection),
    },
  };
}

type Callback = (error: Error | null, result?: unknown) => void;
type CountingConnection = { query: (sql: string, values: unknown[], callback: Callback) => void };

type Counted = Array<{ points: number; expire: number | null }>;

interface Batch {
  points: number;
  msDuration: number;
  /** The context of the request that opened the batch: the statement belongs to its trace. */
  context: ReturnType<typeof context.active>;
  members: Array<{ points: number; resolve: (counted: Counted) => void; reject: (error: unknown) => void }>;
}

/**
 * The library's MySQL limiter, counting in one statement instead of a transaction of four (BEGIN,
 * upsert, SELECT, COMMIT): the upsert hands the new count back through `LAST_INSERT_ID(expr)`, which
 * MySQL and MariaDB report in the statement's answer. The window's end is read only for a refusal,
 * which needs it for `Retry-After`. The table is a MEMORY table, which a transaction never made
 * atomic anyway: the count is the upsert's own.
 *
 * Requests of one key that arrive while its count is on its way to the database are counted
 * together by the next statement, and each is told its own place in the window, as if counted one
 * by one in the order they came: the limit stays exact, and a busy client costs the database one
 * statement per round trip rather than one per request.
 */
class OneStatementLimiter extends RateLimiterMySQL {
  private readonly waiting = new Map<string, Batch>();
  private readonly counting = new Set<string>();

  _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<Counted> {
    if (forceExpire || points <= 0) return this.store(key, points, msDuration, forceExpire);
    return new Promise<Counted>((resolve, reject) => {
      let batch = this.waiting.get(key);
      if (!batch) {
        batch = { points: 0, msDuration, context: context.active(), members: [] };
        this.waiting.set(key, batch);
      }
      batch.points += points;
      batch.members.push({ points, resolve, reject });
      if (!this.counting.has(key)) this.countNext(key);
    });
  }

  /** The library's own upsert: a connection from the pool, then `_upsertTransaction` below. */
  private store(key: string, points: number, msDuration: number, forceExpire: boolean): Promise<Counted> {
    const library = RateLimiterMySQL.prototype as unknown as {
      _upsert(key: string, points: number, msDuration: number, forceExpire: boolean): Promise<Counted>;
    };
    return library._upsert.call(this, key, points, msDuration, forceExpire);
  }

  private countNext(key: string): void {
    const batch = this.waiting.get(key);
    if (!batch) {
      this.counting.delete(key);
      return;
    }
    this.waiting.delete(key);
    this.counting.add(key);
    context
      .with(batch.context, () => this.store(key, batch.points, batch.msDuration, false))
      .then(
        ([row]) => {
          let place = row.points - batch.points;
          for (const member of batch.members) {
            place += member.points;
            member.resolve([{ points: place, expire: row.expire }]);
          }
        },
        (error: unknown) => batch.members.forEach((member) => member.reject(error)),
      )
      .finally(() => this.countNext(key));
  }

  _upsertTransaction(
    connection: CountingConnection,
    key: string,
    points: number,
    msDuration: number,
    forceExpire: boolean,
  ): Promise<Counted> {
    const self = this as unknown as { dbName: string; tableName: string; points: number };
    const table = `\`${self.dbName}\`.\`${self.tableName}\``;
    const query = (sql: string, values: unknown[]) =>
      new Promise<unknown>((resolve, reject) =>
        connection.query(sql, values, (error, result) => (error ? reject(error) : resolve(result))),
      );
    const now = Date.now();
    const expire = msDuration > 0 ? now + msDuration : null;
    const update = forceExpire
      ? 'points = LAST_INSERT_ID(?), expire = ?'
      : 'points = LAST_INSERT_ID(IF(expire <= ?, ?, points + ?)), expire = IF(expire <= ?, ?, expire)';
    const values = forceExpire ? [points, expire] : [now, points, points, now, expire];
    return query(`INSERT INTO ${table} VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE ${update}`, [
      key,
      points,
      expire,
      ...values,
    ]).then(async (result) => {
      const { insertId, affectedRows } = result as { insertId: number; affectedRows: number };
      // A new row answers no id: it holds the points just counted, in a window that starts now.
      const counted = affectedRows === 1 ? points : Number(insertId);
      if (counted === points || counted <= self.points)
        return [{ points: counted, expire: counted === points ? expire : null }];
      const [row] = (await query(`SELECT expire FROM ${table} WHERE \`key\` = ?`, [key])) as Array<{
        expire: number | null;
      }>;
      return [{ points: counted, expire: row ? Number(row.expire) : expire }];
    });
  }
}

/**
 * Counters in the database, shared by every API replica, one per limit (`keyPrefix`) of `points` in
 * `duration` seconds. Should the database fail to count, each process counts on its own instead
 * (the library's insurance limiter).
 */
export function rateLimitCounters(sequelize: Sequelize) {
  const dbName = sequelize.getDatabaseName();
  const store = storeKeepingContext(sequelize);
  return (options: { keyPrefix: string; points: number; duration: number }): RateLimiterAbstract =>
    new OneStatementLimiter({
      ...options,
      storeClient: store,
      storeType: 'sequelize',
      dbName,
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      // Expired rows are deleted by the API's housekeeping instead of a timer per limiter.
      clearExpiredByTimeout: false,
      insuranceLimiter: new RateLimiterMemory(options),
    });
}

/** Deletes counters whose window ended more than a minute ago; answers how many. */
export async function clearExpiredRateLimits(sequelize: Sequelize, now = Date.now()): Promise<number> {
  const [result] = await sequelize.query(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE expire < :before`, {
    replacements: { before: now - 60_000 },
  });
  return Number((result as { affectedRows?: number }).affectedRows ?? 0);
}
