import type { RequestHandler } from 'express';
import { AuthenticationError } from '../domain/errors';
import type { Caller } from './operations';
import type { TokenService } from './token-service';

/** Verifies `Authorization: Bearer <access token>` and leaves the caller in `res.locals.caller`. */
export function createAuthenticate(tokens: TokenService): RequestHandler {
  return async (req, res, next) => {
    const header = req.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new AuthenticationError(
        header ? 'the Authorization header must be "Bearer <access token>"' : 'an access token is required',
      );
    }
    const claims = await tokens.verifyAccess(match[1]);
    const caller: Caller = { accountId: claims.accountId, apiKey: claims.apiKey };
    res.locals.caller = caller;
    next();
  };
}
