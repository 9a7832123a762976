import { STATUS_CODES } from 'node:http';

/**
 * The proxied HTTP messages and the pure helpers faults edit them with: headers, JSON bodies,
 * problems and query strings.
 */

/** A request as the proxy received it: plain data, so faults stay pure functions. */
export interface ProxiedRequest {
  method: string;
  /** Path and query as the client sent them, base path included (`/api/v2/facilities?id=a`). */
  path: string;
  /** Lower-case names; hop-by-hop headers and `host` are already gone. */
  headers: Record<string, string>;
  body: Buffer;
}

/** A response on its way back to the client. */
export interface ProxiedResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Buffer;
}

/** Sends a request to the upstream server and buffers its answer. */
export type Forward = (request: ProxiedRequest) => Promise<ProxiedResponse>;

export type Item = Record<string, unknown>;
type Message = ProxiedRequest | ProxiedResponse;

export function isResponse(value: ProxiedRequest | ProxiedResponse): value is ProxiedResponse {
  return typeof (value as Partial<ProxiedResponse>).status === 'number';
}

export function getHeader(message: { headers: Record<string, string> }, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(message.headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

/** A copy with headers set; an `undefined` value removes the header. */
export function withHeaders<T extends Message>(message: T, changes: Record<string, string | undefined>): T {
  const changed = new Set(Object.keys(changes).map((name) => name.toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (!changed.has(name.toLowerCase())) headers[name] = value;
  }
  for (const [name, value] of Object.entries(changes)) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  return { ...message, headers };
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

export function isJsonType(contentType: string | undefined): boolean {
  return contentType !== undefined && JSON_MEDIA_TYPE.test(contentType);
}

/** The parsed JSON body, or undefined when the body is empty, encoded or not JSON. */
export function readJson(message: Message): unknown {
  if (!message.body.length || !isJsonType(getHeader(message, 'content-type'))) return undefined;
  const encoding = getHeader(message, 'content-encoding');
  if (encoding && encoding.toLowerCase() !== 'identity') return undefined;
  try {
    return JSON.parse(message.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** A copy with a new body and the length headers that fit it. */
export function withBody<T extends Message>(message: T, body: Buffer, contentType?: string): T {
  const changes: Record<string, string | undefined> = {
    'content-length': String(body.length),
    'transfer-encoding': undefined,
    'content-encoding': undefined,
  };
  if (contentType) changes['content-type'] = contentType;
  return { ...withHeaders(message, changes), body };
}

/** A copy whose body is `value` as JSON, keeping a JSON content type if there was one. */
export function withJson<T extends Message>(message: T, value: unknown): T {
  const contentType = getHeader(message, 'content-type');
  return withBody(
    message,
    Buffer.from(JSON.stringify(value)),
    isJsonType(contentType) ? contentType : 'application/json',
  );
}

export function jsonResponse(status: number, value: unknown): ProxiedResponse {
  const body = Buffer.from(JSON.stringify(value));
  return {
    status,
    headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
    body,
  };
}

export const problemType = (name: string): string => `https://errors.ix-api.net/v2/${name}.html`;

export function problemResponse(
  status: number,
  name: string,
  detail: string,
  extra: Item = {},
): ProxiedResponse {
  return jsonResponse(status, {
    type: problemType(name),
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    ...extra,
  });
}

/** Path and query of a request path, split. */
export function splitPath(path: string): { pathname: string; query: URLSearchParams } {
  const at = path.indexOf('?');
  if (at < 0) return { pathname: path, query: new URLSearchParams() };
  return { pathname: path.slice(0, at), query: new URLSearchParams(path.slice(at + 1)) };
}

/** The pathname without query and trailing slash, for matching. */
export const pathnameOf = (req: ProxiedRequest): string => splitPath(req.path).pathname.replace(/\/+$/, '');

/** Whether the request targets `suffix` below whatever base path the server uses. */
export const targets = (req: ProxiedRequest, method: string, suffix: string): boolean =>
  req.method === method && pathnameOf(req).endsWith(suffix);

/** A copy with its query rewritten; the same request when `edit` changes nothing. */
export function editQuery(req: ProxiedRequest, edit: (query: URLSearchParams) => void): ProxiedRequest {
  const { pathname, query } = splitPath(req.path);
  const before = query.toString();
  edit(query);
  const after = query.toString();
  if (after === before) return req;
  return { ...req, path: after ? `${pathname}?${after}` : pathname };
}

export const isItem = (value: unknown): value is Item =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A scalar property as text (ids and names), or undefined. */
export const scalar = (value: unknown): string | undefined =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;

export const isSuccess = (res: ProxiedResponse) => res.status >= 200 && res.status < 300;

/** The items of a list answer (a JSON array to a GET), or undefined for anything else. */
export function listItems(
  res: ProxiedResponse,
  req: ProxiedRequest,
  statuses = [200, 206],
): unknown[] | undefined {
  if (req.method !== 'GET' || !statuses.includes(res.status)) return undefined;
  const body = readJson(res);
  return Array.isArray(body) ? body : undefined;
}

/** Applies `edit` to every top-level object of a JSON success body (the body or its items). */
export function editReadObjects(
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

/** The ids an `id` filter asks for, comma-separated or repeated. */
export const idsAskedFor = (query: URLSearchParams): string[] =>
  query
    .getAll('id')
    .flatMap((value) => value.split(','))
    .filter(Boolean);
