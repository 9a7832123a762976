import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';
import type { Config, RateLimit, RateLimitName } from '../config/config';
import { rateLimitCounters } from '../db/rate-limit-store';
import type { RequestProblem } from './request-problems';
import { tooManyRequests } from './request-problems';

/** The limits of config/config.ts, by what they count. */
export type RateLimitSettings = Config['rateLimits'];

/** Counts one request of a client; throws a 429 problem once its limit is used up. */
export type Limiter = (key: string) => Promise<void>;

/** A login: the API key it names, from a client address as addressKey gives it. */
export interface LoginAttempt {
  apiKey: string;
  address: string;
}

/**
 * Runs a login's check of key and secret within the failure budgets of its address and of its key
 * from that address: answers what `verify` answers (null for wrong credentials), or throws a 429
 * problem without verifying once either budget is used up.
 */
export type LoginLimiter = <T>(attempt: LoginAttempt, verify: () => Promise<T | null>) => Promise<T | null>;

export interface RateLimits {
  /** The two auth operations, per client address, whatever their outcome. */
  authByAddress: Limiter;
  /** `POST /auth/token`'s failures, per client address and per API key from that address. */
  login: LoginLimiter;
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

/**
 * The counter of an API key from an address. The key is the client's own text: any character but
 * printable ASCII (and the escape sign) is escaped, as the table's keys are ASCII.
 */
function loginKey({ apiKey, address }: LoginAttempt): string {
  const escaped = apiKey.replace(/[^!-~]|%/g, (unit) => `%${unit.charCodeAt(0).toString(16)}`);
  return `${escaped}@${address}`;
}

/** The limits as metrics label them, after their settings (RATE_LIMIT_AUTH_PER_ADDRESS, ...). */
export const RATE_LIMIT_NAMES: Record<RateLimitName, string> = {
  authPerAddress: 'auth_per_address',
  authFailuresPerAddress: 'auth_failures_per_address',
  authFailuresPerKey: 'auth_failures_per_key',
  perAccount: 'per_account',
  perAddress: 'per_address',
};

const what: Record<RateLimitName, string> = {
  authPerAddress: 'token requests from your address',
  authFailuresPerAddress: 'failed logins from your address',
  authFailuresPerKey: 'failed logins for this API key from your address',
  perAccount: 'requests of your account',
  perAddress: 'requests without a valid access token from your address',
};

/** A limit and its counter in the database. */
interface Counter {
  name: RateLimitName;
  limit: RateLimit;
  counts: RateLimiterAbstract;
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
  const counterIn = rateLimitCounters(deps.sequelize);
  const counterOf = (name: RateLimitName): Counter | null => {
    const limit = deps.settings[name];
    if (!limit) return null;
    const counts = counterIn({ keyPrefix: name, points: limit.points, duration: limit.durationSeconds });
    return { name, limit, counts };
  };
  /** What a counter could not count is let through: a limit is no reason to fail a request. */
  const uncounted = (counter: Counter, error: unknown) => {
    if (error instanceof RateLimiterRes) return;
    deps.logger.warn({ err: error, limit: counter.name }, 'a rate limit could not be counted');
  };
  const refusal = ({ name, limit }: Counter, msBeforeNext: number): RequestProblem => {
    deps.onRefused?.(RATE_LIMIT_NAMES[name]);
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return tooManyRequests(
      `Too many ${what[name]}: at most ${limit.points} in ${limit.durationSeconds} s. Try again in ${seconds} s.`,
      seconds,
    );
  };
  const limiterOf = (name: RateLimitName): Limiter => {
    const counter = counterOf(name);
    if (!counter) return () => Promise.resolve();
    return async (key) => {
      try {
        await counter.counts.consume(key);
      } catch (outcome) {
        if (outcome instanceof RateLimiterRes) throw refusal(counter, outcome.msBeforeNext);
        uncounted(counter, outcome);
      }
    };
  };
  return {
    authByAddress: limiterOf('authPerAddress'),
    login: loginLimiter({
      perAddress: counterOf('authFailuresPerAddress'),
      perKey: counterOf('authFailuresPerKey'),
      uncounted,
      refusal,
    }),
    byAccount: limiterOf('perAccount'),
    byAddress: limiterOf('perAddress'),
  };
}

/**
 * Failures are what is counted, never logins as such: a client with the right secret may log in as
 * often as the limit on all auth requests of its address allows, and wrong secrets sent for its
 * key from another address spend that address's budgets, not the key's. An address out of budget
 * is refused whatever secret it sends, so it learns nothing more until its window ends.
 *
 * Requests of one address that are in flight together are all checked before any of their failures
 * is counted: such a burst may try a few secrets more than the budget, as many as the limit on all
 * its auth requests lets through, against secrets of 64 random bytes. Counting each attempt before
 * verifying it and handing the count back on success would close that gap, but would refuse correct
 * logins that merely arrive together.
 */
function loginLimiter(deps: {
  /** Failed logins per client address, whatever key they name. */
  perAddress: Counter | null;
  /** Failed logins per API key from one client address. */
  perKey: Counter | null;
  uncounted: (counter: Counter, error: unknown) => void;
  refusal: (counter: Counter, msBeforeNext: number) => RequestProblem;
}): LoginLimiter {
  const { perAddress, perKey } = deps;
  /** The failures a counter holds for a key; none when the limit is off or cannot be read. */
  const failuresOf = async (counter: Counter | null, key: string): Promise<RateLimiterRes | null> => {
    if (!counter) return null;
    try {
      return await counter.counts.get(key);
    } catch (error) {
      deps.uncounted(counter, error);
      return null;
    }
  };
  const refuseIfSpent = (counter: Counter | null, failures: RateLimiterRes | null) => {
    if (counter && failures && failures.consumedPoints >= counter.limit.points) {
      throw deps.refusal(counter, failures.msBeforeNext);
    }
  };
  const spend = async (counter: Counter | null, key: string) => {
    // Over the budget, the failure is still answered as the failure it is; the next attempt is refused.
    await counter?.counts.consume(key).catch((error: unknown) => deps.uncounted(counter, error));
  };
  return async (attempt, verify) => {
    const keyed = loginKey(attempt);
    const [fromAddress, forKey] = await Promise.all([
      failuresOf(perAddress, attempt.address),
      failuresOf(perKey, keyed),
    ]);
    refuseIfSpent(perAddress, fromAddress);
    refuseIfSpent(perKey, forKey);
    const verified = await verify();
    if (verified === null) {
      await Promise.all([spend(perAddress, attempt.address), spend(perKey, keyed)]);
    } else if (perKey && forKey) {
      // A key that proves its secret at an address starts afresh there; the address's own budget
      // stays spent, so one good key does not buy guesses at the others.
      await perKey.counts.delete(keyed).catch((error: unknown) => deps.uncounted(perKey, error));
    }
    return verified;
  };
}
