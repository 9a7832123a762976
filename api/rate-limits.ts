import { context } from '@opentelemetry/api';
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimiterMemory, RateLimiterMySQL, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';
import type { RateLimit } from '../config/config';
import { tooManyRequests } from './request-problems';

/** The table every limiter counts in (a MEMORY table: counters need no durability, see migration 0017). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/** The limits of config/config.ts, by what they count. */
export interface RateLimitSettings {
  authPerAddress: RateLimit | null;
  authPerKey: RateLimit | null;
  perAccount: RateLimit | null;
  perAddress: RateLimit | null;
}

/** Counts one request of a client; throws a 429 problem once its limit is used up. */
export type Limiter = (key: string) => Promise<void>;

export interface RateLimits {
  /** The two auth operations, per client address. */
  authByAddress: Limiter;
  /** `POST /auth/token`, per API key named in the body. */
  authByKey: Limiter;
  /** Authenticated operations, per account. */
  byAccount: Limiter;
  /** Requests without a valid token (discovery, rejected tokens), per client address. */
  byAddress: Limiter;
}

/**
 * A client address as a limit counts it: an IPv6 client usually holds a whole /64, so its addresses
 * count as one; IPv4 (also mapped into IPv6) as itself.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The limits as metrics label them, after their settings (RATE_LIMIT_AUTH_PER_ADDRESS, ...). */
export const RATE_LIMIT_NAMES: Record<keyof RateLimits, string> = {
  authByAddress: 'auth_per_address',
  authByKey: 'auth_per_key',
  byAccount: 'per_account',
  byAddress: 'per_address',
};

const what: Record<keyof RateLimits, string> = {
  authByAddress: 'token requests from your address',
  authByKey: 'token requests for this API key',
  byAccount: 'requests of your account',
  byAddress: 'requests without a valid access token from your address',
};

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

/**
 * The limits, counted in the database so that every API replica shares them. Should the database
 * fail to count, each process counts on its own instead (the library's insurance limiter), so a
 * limit never turns into a server error.
 */
export function createRateLimits(deps: {
  sequelize: Sequelize;
  settings: RateLimitSettings;
  logger: Logger;
  /** Told of every request a limit refuses, by the limit's name of RATE_LIMIT_NAMES. */
  onRefused?: (limit: string) => void;
}): RateLimits {
  const dbName = deps.sequelize.getDatabaseName();
  const store = storeKeepingContext(deps.sequelize);
  const make = (name: keyof RateLimits, limit: RateLimit | null): Limiter => {
    if (!limit) return () => Promise.resolve();
    const options = { keyPrefix: name, points: limit.points, duration: limit.durationSeconds };
    const limiter: RateLimiterAbstract = new RateLimiterMySQL({
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
    return async (key) => {
      try {
        await limiter.consume(key);
      } catch (outcome) {
        if (!(outcome instanceof RateLimiterRes)) {
          deps.logger.warn({ err: outcome, limit: name }, 'a rate limit could not be counted');
          return;
        }
        deps.onRefused?.(RATE_LIMIT_NAMES[name]);
        const seconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
        throw tooManyRequests(
          `Too many ${what[name]}: at most ${limit.points} in ${limit.durationSeconds} s. Try again in ${seconds} s.`,
          seconds,
        );
      }
    };
  };
  return {
    authByAddress: make('authByAddress', deps.settings.authPerAddress),
    authByKey: make('authByKey', deps.settings.authPerKey),
    byAccount: make('byAccount', deps.settings.perAccount),
    byAddress: make('byAddress', deps.settings.perAddress),
  };
}

/** Deletes counters whose window ended more than a minute ago; answers how many. */
export async function clearExpiredRateLimits(sequelize: Sequelize, now = Date.now()): Promise<number> {
  const [result] = await sequelize.query(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE expire < :before`, {
    replacements: { before: now - 60_000 },
  });
  return Number((result as { affectedRows?: number }).affectedRows ?? 0);
}
