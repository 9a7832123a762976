import type { RequestHandler } from 'express';
import { AuthenticationError } from '../domain/errors';
import { sharedFreshReads } from '../db/fresh-reads';
import type { Caller } from './operations';
import type { TokenService } from './token-service';

/**
 * The accounts a caller acts for, read for every request, or none once its API key is revoked (a
 * revocation stops the very next request, on every replica); requests of one key that arrive
 * together share a read.
 */
export function createCallerReads(options: {
  actingFor: (apiKey: string, accountId: string) => Promise<readonly string[]>;
}) {
  const read = sharedFreshReads((key) => {
    const [apiKey, accountId] = key.split('\n');
    return options.actingFor(apiKey, accountId);
  });
  return { actingFor: (apiKey: string, accountId: string) => read(`${apiKey}\n${accountId}`) };
}

export type CallerReads = ReturnType<typeof createCallerReads>;

/**
 * Verifies `Authorization: Bearer <access token>`, checks that the token's API key has not been
 * revoked since, and leaves the caller in `res.locals.caller`. `rejected` runs before a request is
 * refused for its token, so that guessing at tokens is counted like any other unauthenticated request.
 */
export function createAuthenticate(deps: {
  tokens: TokenService;
  callers: CallerReads;
  rejected?: (req: Parameters<RequestHandler>[0]) => Promise<void>;
}): RequestHandler {
  const { tokens, callers } = deps;
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
      const accounts = await callers.actingFor(claims.apiKey, claims.accountId);
      // A key is deleted with its account, so no account means no key.
      if (!accounts.length) {
        throw new AuthenticationError('the API key this token was issued for has been revoked');
      }
      const caller: Caller = { accountId: claims.accountId, apiKey: claims.apiKey, accounts };
      res.locals.caller = caller;
    } catch (error) {
      await deps.rejected?.(req);
      throw error;
    }
    next();
  };
}
