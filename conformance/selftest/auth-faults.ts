import { STATUS_CODES } from 'node:http';
import type { Fault } from './faults';
import type { ProxiedRequest, ProxiedResponse } from './messages';
import {
  getHeader,
  isItem,
  problemResponse,
  problemType,
  readJson,
  targets,
  withHeaders,
  withJson,
} from './messages';

/**
 * Faults of authentication: long credentials failing, tokens issued with the wrong status or
 * without a refresh token, missing and expired tokens taken, refresh tokens of anyone accepted.
 */

const hasNoToken = (req: ProxiedRequest) => getHeader(req, 'authorization') === undefined;
const isTokenEndpoint = (req: ProxiedRequest) =>
  targets(req, 'POST', '/auth/token') || targets(req, 'POST', '/auth/refresh');

/** The refresh token of a 201 token answer, if any. */
function issuedRefreshToken(res: ProxiedResponse, req: ProxiedRequest): string | undefined {
  if (!isTokenEndpoint(req) || res.status !== 201) return undefined;
  const body = readJson(res);
  return isItem(body) && typeof body.refresh_token === 'string' ? body.refresh_token : undefined;
}

export function authFaults(): Fault[] {
  let lastAccepted: string | undefined;
  let lastRefresh: string | undefined;
  return [
    {
      id: 'auth-long-credentials-500',
      description: 'POST /auth/token fails with 500 when api_key or api_secret is longer than allowed',
      request(req) {
        if (!targets(req, 'POST', '/auth/token')) return req;
        const body = readJson(req);
        const tooLong =
          isItem(body) &&
          ((typeof body.api_key === 'string' && body.api_key.length > 16) ||
            (typeof body.api_secret === 'string' && body.api_secret.length > 86));
        return tooLong ? problemResponse(500, 'server-error', 'value too long for column') : req;
      },
    },
    {
      id: 'auth-token-200',
      description: 'POST /auth/token answers 200 instead of 201',
      response: (res, req) =>
        targets(req, 'POST', '/auth/token') && res.status === 201 ? { ...res, status: 200 } : res,
    },
    {
      id: 'auth-refresh-200',
      description: 'POST /auth/refresh answers 200 instead of 201',
      response: (res, req) =>
        targets(req, 'POST', '/auth/refresh') && res.status === 201 ? { ...res, status: 200 } : res,
    },
    {
      id: 'auth-token-missing-refresh',
      description: 'POST /auth/token gives no refresh_token',
      response(res, req) {
        const body = readJson(res);
        if (!targets(req, 'POST', '/auth/token') || res.status !== 201 || !isItem(body)) return res;
        if (!('refresh_token' in body)) return res;
        const { refresh_token: _refresh, ...rest } = body;
        return withJson(res, rest);
      },
    },
    {
      id: 'auth-missing-token-403',
      description: 'a request without a token is answered 403 instead of 401',
      response(res, req) {
        if (res.status !== 401 || !hasNoToken(req) || isTokenEndpoint(req)) return res;
        const body = readJson(res);
        const denied = {
          type: problemType('permission-denied'),
          title: STATUS_CODES[403],
          status: 403,
          detail: isItem(body) && typeof body.detail === 'string' ? body.detail : 'Not allowed.',
        };
        return withJson({ ...res, status: 403 }, denied);
      },
    },
    {
      id: 'auth-expired-token-accepted',
      description:
        'a token the server refuses (expired, tampered, garbage) works: the last accepted token is used',
      reset: () => {
        lastAccepted = undefined;
      },
      async response(res, req, forward) {
        const authorization = getHeader(req, 'authorization');
        if (authorization === undefined) return res;
        if (res.status !== 401) {
          lastAccepted = authorization;
          return res;
        }
        if (lastAccepted === undefined || lastAccepted === authorization) return res;
        return forward(withHeaders(req, { authorization: lastAccepted }));
      },
    },
    {
      id: 'auth-refresh-accepts-any-token',
      description:
        'POST /auth/refresh accepts tokens it should refuse (access tokens, used ones): the last issued refresh token is used',
      reset: () => {
        lastRefresh = undefined;
      },
      async response(res, req, forward) {
        const issued = issuedRefreshToken(res, req);
        if (issued !== undefined) lastRefresh = issued;
        if (!targets(req, 'POST', '/auth/refresh') || res.status < 400 || res.status >= 500) return res;
        if (lastRefresh === undefined) return res;
        const retried = await forward(withJson(req, { refresh_token: lastRefresh }));
        lastRefresh = issuedRefreshToken(retried, req) ?? lastRefresh;
        return retried;
      },
    },
  ];
}
