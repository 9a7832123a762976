import { STATUS_CODES } from 'node:http';
import { loadSpec, operationParameters, specOperations } from '../../spec';
import { COMMON_PARAMETERS, PAGINATION_HEADERS, PAGING_PARAMETERS } from '../protocol';
import type { Forward, Item, ProxiedRequest, ProxiedResponse } from './messages';
import {
  editQuery,
  getHeader,
  isItem,
  isJsonType,
  jsonResponse,
  pathnameOf,
  problemResponse,
  problemType,
  readJson,
  scalar,
  splitPath,
  targets,
  withBody,
  withHeaders,
  withJson,
} from './messages';

/** One way a server can break IX-API, injected between the suite and a correct server. */
export interface Fault {
  id: string;
  description: string;
  /** May rewrite the request before forwarding, or answer it without asking the upstream. */
  request?(req: ProxiedRequest): ProxiedRequest | ProxiedResponse;
  /**
   * May rewrite the response. `req` is the request as the client sent it; `forward` lets a fault
   * ask the upstream again (a server that quietly retries with other credentials, say).
   */
  response?(
    res: ProxiedResponse,
    req: ProxiedRequest,
    forward: Forward,
  ): ProxiedResponse | Promise<ProxiedResponse>;
  /** Forgets what the fault remembered; the proxy calls it whenever the fault is set. */
  reset?(): void;
  /**
   * A fault in what only the full profile does (changes, cancellations, uploads) shows in a full
   * run, limited to the checks `only` selects; other faults show in a read run of every check.
   */
  full?: { only: readonly string[] };
  /** The fault breaks a SHOULD only: a check that warns with it, and not without it, catches it. */
  breaks?: 'should';
}

const isSuccess = (res: ProxiedResponse) => res.status >= 200 && res.status < 300;

/** The items of a list answer (a JSON array to a GET), or undefined for anything else. */
function listItems(res: ProxiedResponse, req: ProxiedRequest, statuses = [200, 206]): unknown[] | undefined {
  if (req.method !== 'GET' || !statuses.includes(res.status)) return undefined;
  const body = readJson(res);
  return Array.isArray(body) ? body : undefined;
}

const isPage = (res: ProxiedResponse): boolean =>
  res.status === 206 && PAGINATION_HEADERS.some((name) => getHeader(res, name) !== undefined);

function intHeader(res: ProxiedResponse, name: string): number | undefined {
  const value = Number(getHeader(res, name));
  return Number.isInteger(value) ? value : undefined;
}

/** Rewrites the query of a non-empty X-Pagination-Next link, relative or absolute. */
function rewriteNext(res: ProxiedResponse, edit: (query: URLSearchParams) => void): ProxiedResponse {
  const next = getHeader(res, 'x-pagination-next');
  if (!next) return res;
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(next);
  const url = new URL(next, 'http://relative.invalid');
  edit(url.searchParams);
  const rewritten = absolute ? url.href : `${url.pathname}${url.search}`;
  return rewritten === next ? res : withHeaders(res, { 'x-pagination-next': rewritten });
}

function dropPaginationHeader(name: (typeof PAGINATION_HEADERS)[number]): Fault {
  const short = name.replace('x-pagination-', '');
  return {
    id: `pagination-drop-${short}`,
    description: `206 pages lack the X-Pagination-${short[0].toUpperCase()}${short.slice(1)} header`,
    response: (res) =>
      isPage(res) && getHeader(res, name) !== undefined ? withHeaders(res, { [name]: undefined }) : res,
  };
}

/** Changes a numeric pagination header of every page. */
function shiftPaginationHeader(id: string, description: string, name: string, by: number): Fault {
  return {
    id,
    description,
    response(res) {
      const value = intHeader(res, name);
      return isPage(res) && value !== undefined ? withHeaders(res, { [name]: String(value + by) }) : res;
    },
  };
}

/** A constant the faulty server hands out as its page token. */
const STATIC_TOKEN = '1';

function paginationFaults(): Fault[] {
  return [
    ...PAGINATION_HEADERS.map(dropPaginationHeader),
    shiftPaginationHeader(
      'pagination-wrong-items',
      'X-Pagination-Items counts one item more than the collection holds',
      'x-pagination-items',
      1,
    ),
    shiftPaginationHeader(
      'pagination-wrong-page-number',
      'X-Pagination-Page counts from 0 instead of 1',
      'x-pagination-page',
      -1,
    ),
    {
      id: 'pagination-next-skips-page',
      description: 'X-Pagination-Next points one page too far, so a page is never visited',
      response(res) {
        const limit = intHeader(res, 'x-pagination-limit');
        if (!isPage(res) || !limit) return res;
        const offset = intHeader(res, 'x-pagination-offset') ?? 0;
        return rewriteNext(res, (query) => {
          const given = Number(query.get('page_offset'));
          const next = query.has('page_offset') && Number.isInteger(given) ? given : offset + limit;
          query.set('page_offset', String(next + limit));
        });
      },
    },
    {
      id: 'pagination-next-repeats-page',
      description: 'X-Pagination-Next points at the page just served, so walking never ends',
      response(res, req) {
        if (!isPage(res)) return res;
        const offset = intHeader(res, 'x-pagination-offset') ?? 0;
        const token = splitPath(req.path).query.get('page_token');
        return rewriteNext(res, (query) => {
          query.set('page_offset', String(offset));
          if (token === null) query.delete('page_token');
          else query.set('page_token', token);
        });
      },
    },
    {
      id: 'pagination-token-never-changes',
      description: 'X-Pagination-Token is a constant and page_token is never checked',
      request: (req) => (req.method === 'GET' ? editQuery(req, (query) => query.delete('page_token')) : req),
      response(res) {
        if (!isPage(res)) return res;
        const fixed =
          getHeader(res, 'x-pagination-token') === undefined
            ? res
            : withHeaders(res, { 'x-pagination-token': STATIC_TOKEN });
        return rewriteNext(fixed, (query) => {
          if (query.has('page_token')) query.set('page_token', STATIC_TOKEN);
        });
      },
    },
    {
      id: 'pagination-bad-token-accepted',
      description: 'a page_token the server refuses is silently dropped and the page served anyway',
      async response(res, req, forward) {
        if (req.method !== 'GET' || res.status !== 400 || !splitPath(req.path).query.has('page_token'))
          return res;
        return forward(editQuery(req, (query) => query.delete('page_token')));
      },
    },
    {
      id: 'pagination-206-as-200',
      description: 'pages are answered 200 instead of 206',
      response: (res) => (isPage(res) ? { ...res, status: 200 } : res),
    },
    {
      id: 'pagination-ignore-limit',
      description: 'page_limit is ignored: the whole collection comes back, labelled as one 206 page',
      request: (req) =>
        req.method === 'GET' && splitPath(req.path).query.has('page_limit')
          ? editQuery(req, (query) => PAGING_PARAMETERS.forEach((name) => query.delete(name)))
          : req,
      response(res, req) {
        const asked = Number(splitPath(req.path).query.get('page_limit'));
        const items = listItems(res, req, [200]);
        if (!items || !Number.isInteger(asked) || asked < 1) return res;
        return withHeaders(
          { ...res, status: 206 },
          {
            'x-pagination-limit': String(asked),
            'x-pagination-offset': '0',
            'x-pagination-items': String(items.length),
            'x-pagination-pages': String(Math.max(1, Math.ceil(items.length / asked))),
            'x-pagination-page': '1',
            'x-pagination-token': STATIC_TOKEN,
            'x-pagination-next': '',
          },
        );
      },
    },
    {
      id: 'pagination-page-gap',
      description: 'every 206 page loses its last item, leaving gaps between pages',
      response(res, req) {
        const items = listItems(res, req, [206]);
        return items?.length && isPage(res) ? withJson(res, items.slice(0, -1)) : res;
      },
    },
  ];
}

/** Applies `edit` to every top-level object of a JSON success body (the body or its items). */
function editObjects(
  res: ProxiedResponse,
  req: ProxiedRequest,
  edit: (item: Item) => Item | undefined,
): ProxiedResponse {
  if (req.method !== 'GET' || !isSuccess(res)) return res;
  const body = readJson(res);
  let changed = false;
  const apply = (value: unknown): unknown => {
    if (!isItem(value)) return value;
    const edited = edit(value);
    if (edited === undefined) return value;
    changed = true;
    return edited;
  };
  const result = Array.isArray(body) ? body.map(apply) : apply(body);
  return changed ? withJson(res, result) : res;
}

function listFaults(): Fault[] {
  return [
    {
      id: 'list-drop-last-item',
      description: 'a 200 list leaves out its last item',
      response(res, req) {
        const items = listItems(res, req, [200]);
        return items?.length ? withJson(res, items.slice(0, -1)) : res;
      },
    },
    {
      id: 'list-duplicate-item',
      description: 'a 200 list holds its first item twice',
      response(res, req) {
        const items = listItems(res, req, [200]);
        return items?.length ? withJson(res, [items[0], ...items]) : res;
      },
    },
    {
      id: 'list-item-missing-id',
      description: 'list items lack the required id property',
      response(res, req) {
        const items = listItems(res, req);
        if (!items?.some((item) => isItem(item) && 'id' in item)) return res;
        return withJson(
          res,
          items.map((item) => {
            if (!isItem(item)) return item;
            const { id: _id, ...rest } = item;
            return rest;
          }),
        );
      },
    },
    {
      id: 'schema-integer-as-string',
      description: 'integer properties of resources are sent as strings',
      response: (res, req) =>
        editObjects(res, req, (item) => {
          const entries = Object.entries(item);
          if (!entries.some(([, value]) => Number.isInteger(value))) return undefined;
          return Object.fromEntries(
            entries.map(([key, value]) => [key, Number.isInteger(value) ? String(value) : value]),
          );
        }),
    },
    {
      id: 'content-type-text-plain',
      description: 'JSON success answers are labelled text/plain',
      response: (res) =>
        isSuccess(res) && res.body.length && isJsonType(getHeader(res, 'content-type'))
          ? withHeaders(res, { 'content-type': 'text/plain; charset=utf-8' })
          : res,
    },
  ];
}

let knownParameters: Set<string> | undefined;

/** Every query parameter IX-API defines on any operation. */
function queryParameterNames(): Set<string> {
  if (!knownParameters) {
    const document = loadSpec();
    knownParameters = new Set(COMMON_PARAMETERS);
    for (const op of specOperations(document)) {
      for (const [parameter] of operationParameters(document, op.path, op.method, op.operation, 'query'))
        knownParameters.add(parameter.name);
    }
  }
  return knownParameters;
}

/** The ids an `id` filter asks for, comma-separated or repeated. */
const idsAskedFor = (query: URLSearchParams): string[] =>
  query
    .getAll('id')
    .flatMap((value) => value.split(','))
    .filter(Boolean);

function filterFaults(): Fault[] {
  return [
    {
      id: 'filter-ignore-id',
      description: 'the id filter is ignored',
      request: (req) => (req.method === 'GET' ? editQuery(req, (query) => query.delete('id')) : req),
    },
    {
      id: 'filter-id-first-only',
      description: 'an id filter naming several ids keeps only the first',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          const ids = idsAskedFor(query);
          if (ids.length > 1) query.set('id', ids[0]);
        });
      },
    },
    {
      id: 'filter-ignore-properties',
      description: 'filters on properties (state, name, external_ref, …) are ignored',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          for (const name of [...query.keys()]) if (!COMMON_PARAMETERS.has(name)) query.delete(name);
        });
      },
    },
    {
      id: 'filter-first-only',
      description: 'of several property filters only the first is applied',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          const filters = [...new Set(query.keys())].filter((name) => !COMMON_PARAMETERS.has(name));
          for (const name of filters.slice(1)) query.delete(name);
        });
      },
    },
    {
      id: 'filter-dropped-when-paging',
      description: 'property filters are ignored as soon as page_limit is given',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          if (!query.has('page_limit')) return;
          for (const name of [...query.keys()]) if (!COMMON_PARAMETERS.has(name)) query.delete(name);
        });
      },
    },
    {
      id: 'fields-ignored',
      description: 'the fields projection is ignored: whole items come back',
      request: (req) => (req.method === 'GET' ? editQuery(req, (query) => query.delete('fields')) : req),
    },
    {
      id: 'filter-bad-value-accepted',
      description: 'a filter value the server refuses is silently dropped instead of answering 400',
      async response(res, req, forward) {
        if (req.method !== 'GET' || res.status !== 400) return res;
        const body = readJson(res);
        const properties = isItem(body) && Array.isArray(body.properties) ? body.properties : [];
        const { query } = splitPath(req.path);
        const refused = properties
          .map((property) => (isItem(property) ? (scalar(property.name) ?? '') : ''))
          .filter((name) => query.has(name) && !PAGING_PARAMETERS.has(name));
        if (!refused.length) return res;
        return forward(editQuery(req, (edited) => refused.forEach((name) => edited.delete(name))));
      },
    },
    {
      id: 'events-resource-ignored',
      description: "the event log's resource filter, announced in GET /extensions, is ignored",
      request: (req) =>
        req.method === 'GET' && pathnameOf(req).endsWith('/events')
          ? editQuery(req, (query) => query.delete('resource'))
          : req,
    },
    {
      id: 'query-unknown-parameter-rejected',
      description: 'a query parameter IX-API does not define is refused with 400 instead of ignored',
      request(req) {
        if (req.method !== 'GET') return req;
        const known = queryParameterNames();
        const unknown = [...new Set(splitPath(req.path).query.keys())].filter((name) => !known.has(name));
        if (!unknown.length) return req;
        return problemResponse(400, 'validation-error', 'The query names unknown parameters.', {
          properties: unknown.map((name) => ({ name, reason: 'Unknown query parameter.' })),
        });
      },
    },
  ];
}

/** Rewrites the JSON object body of error answers. */
function editProblem(res: ProxiedResponse, edit: (problem: Item) => Item | undefined): ProxiedResponse {
  if (res.status < 400) return res;
  const body = readJson(res);
  if (!isItem(body)) return res;
  const edited = edit(body);
  return edited ? withJson(res, edited) : res;
}

/** A fault on the first collection listed through the proxy, and on everything below its path. */
function firstCollectionFault(
  id: string,
  description: string,
  methods: readonly string[] | 'all',
  answer: () => ProxiedResponse,
): Fault {
  let collection: string | undefined;
  const covers = (req: ProxiedRequest) => {
    if (collection === undefined || (methods !== 'all' && !methods.includes(req.method))) return false;
    const pathname = pathnameOf(req);
    return pathname === collection || pathname.startsWith(`${collection}/`);
  };
  return {
    id,
    description,
    reset: () => {
      collection = undefined;
    },
    request: (req) => (covers(req) ? answer() : req),
    response(res, req) {
      if (collection !== undefined || !listItems(res, req)) return res;
      collection = pathnameOf(req);
      return answer();
    },
  };
}

function errorFaults(): Fault[] {
  return [
    {
      id: 'problem-missing-type',
      description: 'problem documents lack the type property',
      response: (res) =>
        editProblem(res, (problem) => {
          if (!('type' in problem)) return undefined;
          const { type: _type, ...rest } = problem;
          return rest;
        }),
    },
    {
      id: 'problem-foreign-type',
      description: 'problem types are URIs outside the IX-API error namespace',
      response: (res) =>
        editProblem(res, (problem) => {
          if (typeof problem.type !== 'string') return undefined;
          const name = /([a-z-]+)(?:\.html)?$/.exec(problem.type)?.[1] ?? 'error';
          return { ...problem, type: `https://problems.example.net/${name}` };
        }),
    },
    {
      id: 'problem-status-mismatch',
      description:
        'problem documents give another status than the HTTP one (500 for client errors, 400 for a 500)',
      response: (res) =>
        editProblem(res, (problem) => ({ ...problem, status: res.status === 500 ? 400 : 500 })),
    },
    {
      id: 'validation-missing-properties',
      description: '400 validation errors do not say which properties failed',
      response: (res) =>
        res.status !== 400
          ? res
          : editProblem(res, (problem) => {
              if (!('properties' in problem)) return undefined;
              const { properties: _properties, ...rest } = problem;
              return rest;
            }),
    },
    {
      id: 'error-as-html',
      description: 'errors are answered as an HTML page instead of a JSON problem',
      response(res) {
        if (res.status < 400) return res;
        const reason = STATUS_CODES[res.status] ?? 'Error';
        const page = `<!DOCTYPE html>\n<html><head><title>${res.status} ${reason}</title></head><body><h1>${reason}</h1></body></html>\n`;
        return withBody(res, Buffer.from(page), 'text/html; charset=utf-8');
      },
    },
    firstCollectionFault(
      'collection-500',
      'reading the first collection listed (and its items) fails with 500',
      ['GET'],
      () => problemResponse(500, 'server-error', 'The server failed to answer.'),
    ),
    firstCollectionFault(
      'collection-404',
      'the first collection listed is not routed: every request below its path answers 404',
      'all',
      () => problemResponse(404, 'not-found', 'No operation matches this path.'),
    ),
    {
      id: 'accept-invalid-body',
      description: 'a POST the server refuses with 400 is answered 201 with the request body echoed',
      response(res, req) {
        if (req.method !== 'POST' || res.status !== 400) return res;
        const echoed = req.body.length ? req.body : Buffer.from('{}');
        return withBody({ status: 201, headers: {}, body: echoed }, echoed, 'application/json');
      },
    },
    (() => {
      const collections = new Set<string>();
      return {
        id: 'read-not-found-as-null',
        description: 'reading an unknown id of a listed collection answers 200 with null instead of 404',
        reset: () => collections.clear(),
        response(res, req) {
          if (listItems(res, req)) collections.add(pathnameOf(req));
          const pathname = pathnameOf(req);
          const parent = pathname.slice(0, pathname.lastIndexOf('/'));
          if (req.method !== 'GET' || res.status !== 404 || !collections.has(parent)) return res;
          return jsonResponse(200, null);
        },
      } satisfies Fault;
    })(),
    {
      id: 'foreign-change-accepted',
      description: 'a change the caller is not allowed to make answers 202 instead of 403',
      response: (res, req) =>
        ['PUT', 'PATCH', 'DELETE'].includes(req.method) && res.status === 403 ? jsonResponse(202, {}) : res,
    },
    {
      id: 'mutation-of-unknown-200',
      description: 'PUT, PATCH and DELETE of a resource that does not exist answer 200 instead of 404',
      response: (res, req) =>
        ['PUT', 'PATCH', 'DELETE'].includes(req.method) && res.status === 404 ? jsonResponse(200, {}) : res,
    },
  ];
}

const hasNoToken = (req: ProxiedRequest) => getHeader(req, 'authorization') === undefined;
const isTokenEndpoint = (req: ProxiedRequest) =>
  targets(req, 'POST', '/auth/token') || targets(req, 'POST', '/auth/refresh');

/** The refresh token of a 201 token answer, if any. */
function issuedRefreshToken(res: ProxiedResponse, req: ProxiedRequest): string | undefined {
  if (!isTokenEndpoint(req) || res.status !== 201) return undefined;
  const body = readJson(res);
  return isItem(body) && typeof body.refresh_token === 'string' ? body.refresh_token : undefined;
}

function authFaults(): Fault[] {
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

/** Rewrites the JSON object a GET on `suffix` answers with 200. */
function editDocument(suffix: string, edit: (body: Item) => Item | undefined): Fault['response'] {
  return (res, req) => {
    if (!targets(req, 'GET', suffix) || res.status !== 200) return res;
    const body = readJson(res);
    const edited = isItem(body) ? edit(body) : undefined;
    return edited ? withJson(res, edited) : res;
  };
}

/** An operation to declare that the server does not route: a real one it lacks, else an unknown one. */
function undeclaredOperation(declared: ReadonlySet<string>): string {
  const missing = specOperations(loadSpec()).find(
    (op) => op.method === 'get' && !op.path.includes('{') && !declared.has(op.operationId),
  );
  return missing?.operationId ?? 'facility_statistics_list';
}

function discoveryFaults(): Fault[] {
  return [
    {
      id: 'implementation-declares-unrouted',
      description: 'GET /implementation declares an operation the server does not route',
      response: editDocument('/implementation', (body) => {
        if (!Array.isArray(body.supported_operations)) return undefined;
        const declared = body.supported_operations.map(String);
        return { ...body, supported_operations: [...declared, undeclaredOperation(new Set(declared))] };
      }),
    },
    {
      id: 'implementation-missing-schema-version',
      description: 'GET /implementation does not say which schema version it implements',
      response: editDocument('/implementation', (body) => {
        if (!('schema_version' in body)) return undefined;
        const { schema_version: _version, ...rest } = body;
        return rest;
      }),
    },
    {
      id: 'health-status-ok',
      description: 'GET /health reports status "ok" instead of pass, warn or fail',
      response: editDocument('/health', (body) => ('status' in body ? { ...body, status: 'ok' } : undefined)),
    },
  ];
}

const PUBLIC_ACCOUNT_VIEW = new Set(['id', 'name', 'metro_area_network_presence']);

/** The account id of GET /accounts/{id}, '' for GET /accounts, undefined for other requests. */
function accountsTarget(req: ProxiedRequest): string | undefined {
  if (req.method !== 'GET') return undefined;
  const match = /\/accounts(?:\/([^/]+))?$/.exec(pathnameOf(req));
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1] ?? '');
  } catch {
    return match[1];
  }
}

const isPublicView = (item: Item) =>
  'id' in item && Object.keys(item).every((key) => PUBLIC_ACCOUNT_VIEW.has(key));

function isolationFaults(): Fault[] {
  const accounts = new Map<string, Item>();
  const seenItems = new Map<string, Map<string, unknown>>();
  return [
    {
      id: 'isolation-read-foreign-account',
      description:
        "reading an account outside the caller's scope answers 200 with the full account instead of 404",
      reset: () => accounts.clear(),
      response(res, req) {
        const target = accountsTarget(req);
        if (target === undefined) return res;
        const body = readJson(res);
        for (const item of Array.isArray(body) ? body : [body]) {
          const id = isItem(item) ? scalar(item.id) : undefined;
          if (id !== undefined && isItem(item) && !isPublicView(item) && !accounts.has(id))
            accounts.set(id, item);
        }
        if (!target || res.status !== 404 || !accounts.size) return res;
        const account = accounts.get(target) ?? accounts.values().next().value;
        return jsonResponse(200, account);
      },
    },
    {
      id: 'isolation-leak-sensitive',
      description: "accounts outside the caller's scope show legal_name and billing_information",
      response(res, req) {
        if (accountsTarget(req) === undefined) return res;
        return editObjects(res, req, (item) =>
          isPublicView(item)
            ? {
                ...item,
                legal_name: 'leaked',
                billing_information: {
                  name: 'leaked',
                  address: {
                    country: 'DE',
                    locality: 'Berlin',
                    postal_code: '10115',
                    street_address: 'Leaked Str. 1',
                  },
                },
              }
            : undefined,
        );
      },
    },
    {
      id: 'isolation-service-leak-sensitive',
      description: 'network services show an external_ref to every caller, whoever manages them',
      response(res, req) {
        if (req.method !== 'GET' || !/\/network-services(?:\/[^/]+)?$/.test(pathnameOf(req))) return res;
        return editObjects(res, req, (item) =>
          'managing_account' in item && !item.external_ref
            ? { ...item, external_ref: 'leaked-ref' }
            : undefined,
        );
      },
    },
    {
      id: 'isolation-id-filter-leak',
      description:
        'an id filter finds items the caller cannot see (any item seen earlier through the same collection)',
      reset: () => seenItems.clear(),
      response(res, req) {
        const items = listItems(res, req);
        if (!items) return res;
        const pathname = pathnameOf(req);
        const seen = seenItems.get(pathname) ?? new Map<string, unknown>();
        seenItems.set(pathname, seen);
        for (const item of items) {
          const id = isItem(item) ? scalar(item.id) : undefined;
          if (id !== undefined) seen.set(id, item);
        }
        if (items.length) return res;
        const leaked = idsAskedFor(splitPath(req.path).query).flatMap((id) =>
          seen.has(id) ? [seen.get(id)] : [],
        );
        return leaked.length ? withJson(res, leaked) : res;
      },
    },
  ];
}

/** Fresh faults with empty memories; use one set per proxy. */
export function createFaults(): Fault[] {
  return [
    ...paginationFaults(),
    ...listFaults(),
    ...filterFaults(),
    ...errorFaults(),
    ...authFaults(),
    ...discoveryFaults(),
    ...isolationFaults(),
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const FAULTS: readonly Fault[] = createFaults();

export const FAULT_IDS: readonly string[] = FAULTS.map((fault) => fault.id);
