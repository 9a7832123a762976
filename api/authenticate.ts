import type { RequestHandler } from 'express';
import { AuthenticationError } from '../domain/errors';
import { sharedFreshReads } from './fresh-reads';
import type { Caller } from './operations';
import type { TokenService } from './token-service';

/**
 * Whether an API key may still be used, read for every request (a revocation stops the very next
 * request, on every replica); requests of one key that arrive together share a read.
 */
export function createKeyStates(options: { isActive: (apiKey: string) => Promise<boolean> }) {
  return { isActive: sharedFreshReads(options.isActive) };
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
