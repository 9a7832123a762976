import type { RequestHandler } from 'express';
import { AuthenticationError } from '../domain/errors';
import { sharedFreshReads } from '../db/fresh-reads';
import type { Login } from '../db/visibility';
import type { Caller } from './operations';
import type { TokenService } from './token-service';

/**
 * The accounts a caller acts for, read for every request, or none once its API key or its login is
 * revoked (a revocation stops the very next request, on every replica); requests of one login that
 * arrive together share a read.
 */
export function createCallerReads(options: { actingFor: (login: Login) => Promise<readonly string[]> }) {
  const read = sharedFreshReads((key) => {
    const [apiKey, accountId, familyId] = key.split('\n');
    return options.actingFor({ apiKey, accountId, familyId });
  });
  return {
    actingFor: (login: Login) => read(`${login.apiKey}\n${login.accountId}\n${login.familyId}`),
  };
}

export type CallerReads = ReturnType<typeof createCallerReads>;

/**
 * Verifies `Authorization: Bearer <access token>`, checks that neither the token's API key nor its
 * login has been revoked since, and leaves the caller in `res.locals.caller`. `rejected` runs before
 * a request is refused for its token, so that guessing at tokens is counted like any other
 * unauthenticated request.
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
      const accounts = await callers.actingFor(claims);
      // A key is deleted with its account, so no account means no key.
      if (!accounts.length) {
        throw new AuthenticationError('the API key or the login this token was issued for has been revoked');
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
