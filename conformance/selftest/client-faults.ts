import type { Fault } from './faults';
import type { ProxiedRequest, ProxiedResponse } from './messages';
import {
  getHeader,
  isItem,
  pathnameOf,
  problemResponse,
  readJson,
  splitPath,
  targets,
  withBody,
  withJson,
} from './messages';

/**
 * Faults in what the public IX-API clients (the Terraform provider, pyixapi) rely on: bodies and
 * media types they send refused, answers they parse given another shape. Those a read run shows are
 * caught by the `CLIENT-` read checks; a DELETE answered without the resource and PATCHes judged by
 * their type show in a full run of `CLIENT-008` and `CLIENT-009`.
 */

const only = (...checks: string[]) => ({ only: checks });

const SERVICE = /\/network-services\/[^/]+$/;

/** The request body as text, without surrounding white space. */
const bodyText = (req: ProxiedRequest) => req.body.toString('utf8').trim();

/** Whether a request's Content-Type is JSON followed by a bare `;`. */
const strayParameter = (value: string | undefined) => value !== undefined && /^[^;]+;\s*$/.test(value);

/** A copy of the access token of a token answer whose exp lies five minutes after its iat. */
function shortLived(token: string): string {
  const parts = token.split('.');
  if (parts.length !== 3) return token;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString()) as Record<string, unknown>;
    const issued = typeof claims.iat === 'number' ? claims.iat : Math.floor(Date.now() / 1000);
    const payload = Buffer.from(JSON.stringify({ ...claims, exp: issued + 300 })).toString('base64url');
    return `${parts[0]}.${payload}.${parts[2]}`;
  } catch {
    return token;
  }
}

/** Ids made unfit for a URL path: a space and a slash in them. */
const unsafeId = (id: unknown) => (typeof id === 'string' ? `${id.slice(0, 60)} x/y` : id);

/** The PATCH of a service whose body names a type. */
function typedServicePatch(req: ProxiedRequest): Record<string, unknown> | undefined {
  if (req.method !== 'PATCH' || !SERVICE.test(pathnameOf(req))) return undefined;
  const body = readJson(req);
  return isItem(body) && 'type' in body ? body : undefined;
}

/** Fresh faults; they remember nothing. */
export function createClientFaults(): Fault[] {
  return [
    {
      id: 'delete-null-body-refused',
      description:
        'a DELETE with the JSON body null is refused with 400, as the default JSON parser of Express does',
      request: (req) =>
        req.method === 'DELETE' && bodyText(req) === 'null'
          ? problemResponse(400, 'validation-error', 'The request body is not valid JSON.', {
              properties: [{ name: 'body', reason: 'Unexpected token n in JSON at position 0.' }],
            })
          : req,
    },
    {
      id: 'delete-empty-object-refused',
      description: 'a DELETE with the JSON body {} is refused with 415, as if it took no body',
      request: (req) =>
        req.method === 'DELETE' && bodyText(req) === '{}'
          ? problemResponse(415, 'unsupported-media-type', 'This operation takes no request body.')
          : req,
    },
    {
      id: 'delete-null-body-204',
      description:
        'a DELETE with the JSON body null of an existing resource is answered 204 with no body, not the resource',
      full: only('CLIENT-008'),
      response: (res, req) =>
        req.method === 'DELETE' && bodyText(req) === 'null' && [200, 202].includes(res.status)
          ? { status: 204, headers: {}, body: Buffer.alloc(0) }
          : res,
    },
    {
      id: 'accounts-external-ref-404',
      description: 'GET /accounts?external_ref= matching no account answers 404 instead of 200 []',
      response(res, req) {
        if (!targets(req, 'GET', '/accounts') || !splitPath(req.path).query.has('external_ref')) return res;
        const body = readJson(res);
        return res.status === 200 && Array.isArray(body) && !body.length
          ? problemResponse(404, 'not-found', 'No account has this external_ref.')
          : res;
      },
    },
    {
      id: 'health-version-number',
      description: 'GET /health gives version as the number 2, not the string "2"',
      response(res, req) {
        const body = readJson(res);
        return targets(req, 'GET', '/health') && isItem(body) && 'version' in body
          ? withJson(res, { ...body, version: Number.parseInt(String(body.version), 10) })
          : res;
      },
    },
    {
      id: 'health-version-release',
      description: 'GET /health gives the full release ("2.6.0") as version, which int() cannot read',
      breaks: 'should',
      response(res, req) {
        const body = readJson(res);
        return targets(req, 'GET', '/health') && isItem(body) && 'version' in body
          ? withJson(res, { ...body, version: '2.6.0' })
          : res;
      },
    },
    {
      id: 'health-pass-503',
      description: 'GET /health answers 503 though it reports status pass',
      response(res, req) {
        const body = readJson(res);
        return targets(req, 'GET', '/health') && isItem(body) && body.status === 'pass'
          ? { ...res, status: 503 }
          : res;
      },
    },
    {
      id: 'auth-bearer-refused',
      description:
        'POST /auth/token and /auth/refresh refuse a request carrying an Authorization header that is no valid access token (401)',
      request: (req) =>
        (targets(req, 'POST', '/auth/token') || targets(req, 'POST', '/auth/refresh')) &&
        getHeader(req, 'authorization') !== undefined
          ? problemResponse(401, 'authentication-error', 'The bearer token is not a valid access token.')
          : req,
    },
    {
      id: 'content-type-stray-semicolon-415',
      description: 'a JSON body labelled application/json; (a trailing semicolon) is refused with 415',
      request: (req) =>
        req.body.length && strayParameter(getHeader(req, 'content-type'))
          ? problemResponse(415, 'unsupported-media-type', 'Send the request body as application/json.')
          : req,
    },
    {
      id: 'content-type-charset-415',
      description: 'a JSON body labelled application/json; charset=utf-8 is refused with 415',
      request: (req) =>
        req.body.length && /;\s*charset=/i.test(getHeader(req, 'content-type') ?? '')
          ? problemResponse(415, 'unsupported-media-type', 'Send the request body as application/json.')
          : req,
    },
    {
      id: 'accept-stray-semicolon-406',
      description: 'a GET accepting application/json; (a trailing semicolon) is answered 406',
      request: (req) =>
        req.method === 'GET' && strayParameter(getHeader(req, 'accept'))
          ? problemResponse(406, 'not-acceptable', 'This server answers application/json only.')
          : req,
    },
    {
      id: 'auth-short-lived-token',
      description: 'access tokens expire five minutes after they are issued',
      breaks: 'should',
      response(res: ProxiedResponse, req) {
        const body = readJson(res);
        if (!targets(req, 'POST', '/auth/token') || res.status !== 201 || !isItem(body)) return res;
        return typeof body.access_token === 'string'
          ? withJson(res, { ...body, access_token: shortLived(body.access_token) })
          : res;
      },
    },
    {
      id: 'ids-not-url-safe',
      description: 'ids of listed resources hold a space and a slash',
      breaks: 'should',
      response(res, req) {
        const body = readJson(res);
        if (req.method !== 'GET' || res.status !== 200 || !Array.isArray(body)) return res;
        const items: unknown[] = body;
        if (!items.some((item) => isItem(item) && typeof item.id === 'string')) return res;
        return withJson(
          res,
          items.map((item) => (isItem(item) ? { ...item, id: unsafeId(item.id) } : item)),
        );
      },
    },
    {
      id: 'patch-without-type-refused',
      description: 'a PATCH of a network service without type is refused with a 400 naming type',
      full: only('CLIENT-009'),
      breaks: 'should',
      request(req) {
        if (req.method !== 'PATCH' || !SERVICE.test(pathnameOf(req))) return req;
        const body = readJson(req);
        return isItem(body) && !('type' in body)
          ? problemResponse(400, 'validation-error', 'Some fields did not validate.', {
              properties: [{ name: 'type', reason: 'This field is required.' }],
            })
          : req;
      },
    },
    {
      id: 'patch-other-type-ignored',
      description:
        'a PATCH of a network service with another type than its own is carried out as if it named none',
      full: only('CLIENT-009'),
      async response(res, req, forward) {
        const typed = typedServicePatch(req);
        if (!typed || res.status !== 400) return res;
        const { type: _type, ...rest } = typed;
        return forward(withBody(req, Buffer.from(JSON.stringify(rest))));
      },
    },
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const CLIENT_FAULTS: readonly Fault[] = createClientFaults();
