import { randomBytes } from 'node:crypto';
import type { Identity } from '../matrix';
import type { BodyDraft } from './bodies';
import type { Draft, IdDraft } from './drafts';
import { Large, Raw } from './hostile-values';
import type { CampaignOperation } from './operations';
import { asText } from './schema-values';
import type { CampaignWorld, Target } from './targets';

/** One request as it goes over the wire, with what the campaign knows about it. */
export interface WireRequest {
  index: number;
  identity: Identity;
  /** The operation it was drafted for (it may reach another, or none, with another method). */
  drafted: CampaignOperation;
  method: string;
  /** Path and query below the API's base path, exactly as sent. */
  path: string;
  headers: Array<[string, string]>;
  body?: Buffer;
  /** What the body was made from, for the report. */
  bodyFrom?: string;
  /** The real resource the path names, if any. */
  target?: Target;
  /** A well-formed Idempotency-Key sent with it, which must leave no row. */
  freshKey?: string;
}

/** Every byte except the unreserved ones percent-encoded (lone surrogates too, as U+FFFD). */
export function percentEncode(text: string): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9_.~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** JSON text of a drafted value: raw values written as they are, large values made now. */
export function jsonText(value: unknown): string | undefined {
  const raws: string[] = [];
  const nonce = randomBytes(6).toString('hex');
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (inner instanceof Raw) {
      raws.push(inner.text);
      return `@@raw-${nonce}-${raws.length - 1}@@`;
    }
    if (inner instanceof Large) return inner.make();
    return inner;
  });
  if (text === undefined) return undefined;
  return raws.length
    ? text.replace(new RegExp(`"@@raw-${nonce}-(\\d+)@@"`, 'g'), (_m, i: string) => raws[Number(i)])
    : text;
}

/** Header values as Node sends them: Latin-1 without control characters. */
const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

/** The most query text a request carries, well below the 64 KiB the server takes for its request line. */
const QUERY_BUDGET = 12_000;

function segmentOf(id: IdDraft, campaign: CampaignWorld): { segment: string; target?: Target } {
  if ('target' in id) {
    const target = campaign.targets[id.target];
    return { segment: percentEncode(target.id), target };
  }
  if ('segment' in id) return { segment: id.segment };
  return { segment: percentEncode(asText(id.text, 400)) };
}

function queryOf(entries: Array<[string, unknown]>): string {
  let query = '';
  for (const [name, value] of entries) {
    const pair = `${percentEncode(asText(name, 200))}=${percentEncode(asText(value, 6_000))}`;
    if (query.length + pair.length > QUERY_BUDGET) break;
    query += `${query ? '&' : ''}${pair}`;
  }
  return query;
}

function bodyBytes(body: BodyDraft | undefined): Buffer | undefined {
  if (!body) return undefined;
  const text = 'text' in body ? body.text : jsonText(body.value);
  return text === undefined ? undefined : Buffer.from(text, 'utf8');
}

/** Writes a draft down as the bytes and headers it is sent as. */
export function toWire(
  index: number,
  draft: Draft,
  op: CampaignOperation,
  campaign: CampaignWorld,
  tokens: Record<Identity, string | undefined>,
  seed: number,
): WireRequest {
  const method = draft.method ?? op.method;
  let path = op.path;
  let target: Target | undefined;
  if (draft.id) {
    const resolved = segmentOf(draft.id, campaign);
    target = resolved.target;
    path = path.replace(/\{[^}]+\}/, resolved.segment);
  }
  const query = queryOf(draft.query);
  const headers: Array<[string, string]> = [];
  const token = tokens[draft.identity];
  if (token) headers.push(['Authorization', `Bearer ${token}`]);
  for (const [name, value] of draft.headers) {
    if (name === 'Authorization' && draft.identity !== 'anonymous') continue;
    headers.push([name, headerSafe(value)]);
  }
  const body = bodyBytes(draft.body);
  const contentType =
    draft.contentType === undefined
      ? body
        ? (op.mediaTypes[0] ?? 'application/json')
        : undefined
      : draft.contentType;
  for (const value of Array.isArray(contentType)
    ? contentType
    : contentType === null || contentType === undefined
      ? []
      : [contentType])
    headers.push(['Content-Type', headerSafe(value)]);
  let freshKey: string | undefined;
  if (draft.idempotencyKey === 'fresh') {
    freshKey = `negative-${seed}-${index}`;
    headers.push(['Idempotency-Key', freshKey]);
  } else if (draft.idempotencyKey !== undefined)
    headers.push(['Idempotency-Key', headerSafe(draft.idempotencyKey)]);
  return {
    index,
    identity: draft.identity,
    drafted: op,
    method,
    path: query ? `${path}?${query}` : path,
    headers,
    ...(body ? { body, bodyFrom: draft.body?.from } : {}),
    ...(target ? { target } : {}),
    ...(freshKey ? { freshKey } : {}),
  };
}

/** How the request would look to a person replaying it with curl. */
export function asCurl(request: WireRequest, baseUrl: string): string {
  const lines = [
    `curl -X ${request.method} '${baseUrl}${request.path.length > 300 ? `${request.path.slice(0, 300)}…` : request.path}'`,
  ];
  for (const [name, value] of request.headers)
    lines.push(
      `  -H '${name}: ${name === 'Authorization' ? `${value.slice(0, 16)}…(${request.identity})` : value.slice(0, 120)}'`,
    );
  if (request.body) {
    const text = request.body.toString('utf8');
    lines.push(
      `  --data-binary '${text.length > 400 ? `${text.slice(0, 400)}…(${request.body.length} bytes)` : text}'`,
    );
  }
  return lines.join('\n');
}
