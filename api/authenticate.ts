import type { RequestHandler } from 'express';
import { AuthenticationError } from '../domain/errors';
import type { Caller } from './operations';
import type { TokenService } from './token-service';

/** How long an API key's state is trusted before it is read again: a revocation takes effect within it. */
export const KEY_STATE_TTL_MS = 5_000;
/** Keys whose state is remembered at once; the oldest are forgotten first. */
const KEY_STATE_ENTRIES = 10_000;

/**
 * Whether an API key may still be used, read from the key store at most once per `ttlMs` per key
 * (and per process), so that every request checks it without a query of its own. Concurrent requests
 * with the same unknown key share one read.
 */
export function createKeyStates(options: {
  isActive: (apiKey: string) => Promise<boolean>;
  ttlMs?: number;
  now?: () => number;
}) {
  const ttl = options.ttlMs ?? KEY_STATE_TTL_MS;
  const now = options.now ?? Date.now;
  const known = new Map<string, { active: Promise<boolean>; readAt: number }>();
  return {
    isActive(apiKey: string): Promise<boolean> {
      const entry = known.get(apiKey);
      if (entry && now() - entry.readAt < ttl) return entry.active;
      known.delete(apiKey);
      if (known.size >= KEY_STATE_ENTRIES) known.delete(known.keys().next().value!);
      const active = options.isActive(apiKey);
      known.set(apiKey, { active, readAt: now() });
      // A failed read is not remembered: the next request asks again.
      active.catch(() => known.delete(apiKey));
      return active;
    },
  };
}

export type KeyStates = ReturnType<typeof createKeyStates>;

/**
 * Verifies `Authorization: Bearer <access token>`, checks that the token's API key has not been
 * revoked since, and leaves the caller in `res.locals.caller`. `rejected` runs before a request is
 * refused for its token, so that guessing at tokens is counted like any other unauthenticated request.
 */
export function createAuthenticate(deps: {
  tokens: TokenService;
  keys: KeyStates;
  rejected?: (req: Parameters<RequestHandler>[0]) => Promise<void>;
}): RequestHandler {
  const { tokens, keys } = deps;
  return async (req, res, next) => {
    try {
      const header = req.headers.authorization;
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match) {
        throw new AuthenticationError(
          header ? 'the Authorization header must be "Bearer <access token>"' : 'an access token is required',
        );
      }
      const claims = await tokens.verifyAccess(match[1]);
      if (!(await keys.isActive(claims.apiKey))) {
        throw new AuthenticationError('the API key this token was issued for has been revoked');
      }
      const caller: Caller = { accountId: claims.accountId, apiKey: claims.apiKey };
      res.locals.caller = caller;
    } catch (error) {
      await deps.rejected?.(req);
      throw error;
    }
    next();
  };
}
