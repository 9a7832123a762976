import fc from 'fast-check';
import type { Identity } from '../matrix';
import type { BodyDraft } from './bodies';
import { bodyDraft } from './bodies';
import { Large, hostileText, hostileValue } from './hostile-values';
import type { CampaignOperation } from './operations';
import type { SchemaReader } from './schema-values';
import type { CampaignWorld } from './targets';

/**
 * Requests of a negative campaign, drafted by fast-check from one operation of the document: who
 * sends it, with which method, at which id (a real resource, one that does not exist, or a segment
 * that is no id), with which query, body, media type, Idempotency-Key and stray headers.
 */

/** The identities and how often each sends: the accounts more, the refused tokens less. */
const IDENTITY_WEIGHTS: Array<[Identity, number]> = [
  ['owner', 4],
  ['reseller', 3],
  ['sub-account', 3],
  ['unrelated', 3],
  ['expired token', 1],
  ['tampered token', 1],
  ['anonymous', 2],
];

/** What names the resource of a path: a real one (by its index among the targets) or any text. */
export type IdDraft = { target: number } | { text: unknown } | { segment: string };

/** One request, before it is written down: everything random about it, decided by the seed. */
export interface Draft {
  identity: Identity;
  operationId: string;
  /** Another method than the operation's, now and then. */
  method?: string;
  id?: IdDraft;
  query: Array<[string, unknown]>;
  body?: BodyDraft;
  /** The Content-Type header(s); undefined sends the operation's own when there is a body. */
  contentType?: string | string[] | null;
  /** `fresh` sends a new, well-formed key; any other string is sent as it is. */
  idempotencyKey?: string;
  headers: Array<[string, string]>;
  /** What makes a write certain to be refused when nothing else does (see certainty.ts). */
  fallback: 'idempotency-key' | 'media-type' | 'malformed-json';
}

/** Path segments that are not what they look like once decoded or normalised. */
const RAW_SEGMENTS = [
  '.',
  '..',
  '%2e%2e',
  '%2F',
  '%2f..%2f',
  '%zz',
  '%',
  'a%00b',
  '%C0%AE',
  ';',
  'a;b=c',
  '%20',
  '~',
  '*',
];

const CONTENT_TYPES = [
  'application/json',
  'application/json;',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/merge-patch+json',
  'application/vnd.ixapi+json',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; boundary=;;;',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/pdf',
  'application/octet-stream',
  'application/xml',
  '*/*',
  '',
  'json',
  ';',
];

const MALFORMED_KEYS = [
  '',
  ' ',
  'a b',
  '"a b"',
  '""',
  '"',
  'k'.repeat(256),
  'ké',
  'key\u00a0',
  '"unterminated',
];

const EXTRA_HEADERS: Array<[string, string]> = [
  ['Accept', 'application/xml'],
  ['Accept', '*/*;q=0'],
  ['Accept-Charset', 'utf-7'],
  ['Content-Encoding', 'gzip'],
  ['Content-Encoding', 'x-unknown'],
  ['Content-Encoding', 'identity'],
  ['X-Request-Id', 'x'.repeat(200)],
  ['X-Request-Id', '../../etc'],
  ['X-Forwarded-For', '1.2.3.4, ::1, not-an-ip'],
  ['X-HTTP-Method-Override', 'DELETE'],
  ['X-Original-URL', '/api/v2/accounts'],
  ['If-None-Match', '*'],
  ['Range', 'bytes=0-1'],
  ['Expect', '100-continue'],
  ['Cookie', 'session=x'],
];

const BROKEN_AUTHORIZATION = [
  'Bearer',
  'Bearer ',
  'Bearer  .',
  'Bearer a.b.c',
  'bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.',
  'Basic dXNlcjpwYXNz',
  'Token abc',
  `Bearer ${'a'.repeat(8_000)}`,
  'Bearer a b',
];

function idDraft(
  op: CampaignOperation,
  reader: SchemaReader,
  campaign: CampaignWorld,
): fc.Arbitrary<IdDraft> {
  const family = campaign.targets.flatMap((target, index) => (target.family === op.family ? [index] : []));
  const any = campaign.targets.map((_, index) => index);
  const options: Array<fc.WeightedArbitrary<IdDraft>> = [
    { weight: 2, arbitrary: fc.constantFrom(...any).map((target) => ({ target })) },
    {
      weight: 2,
      arbitrary: fc.stringMatching(/^[A-Za-z0-9:_-]{0,60}$/).map((rest) => ({ text: `zz-unknown-${rest}` })),
    },
    {
      weight: 3,
      arbitrary: reader.negativeValueOf(op.pathParameter ?? { type: 'string' }).map((text) => ({ text })),
    },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((segment) => ({ segment })) },
  ];
  if (family.length)
    options.push({ weight: 8, arbitrary: fc.constantFrom(...family).map((target) => ({ target })) });
  return fc.oneof(...options);
}

function queryDraft(op: CampaignOperation, reader: SchemaReader): fc.Arbitrary<Array<[string, unknown]>> {
  const declared = op.queryParameters;
  const entry: fc.Arbitrary<[string, unknown]> = fc.oneof(
    ...(declared.length
      ? [
          {
            weight: 6,
            arbitrary: fc
              .constantFrom(...declared)
              .chain(({ name, schema }) =>
                fc.tuple(
                  fc.constant(name),
                  fc.oneof(reader.negativeValueOf(schema), reader.plausibleValueOf(schema)),
                ),
              ),
          },
        ]
      : []),
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom('page_limit', 'page_token', 'id', 'fields', 'state__lt', 'x', 'id[]', 'a[b]'),
        hostileValue(),
      ),
    },
    { weight: 1, arbitrary: fc.tuple(hostileText(), hostileValue()) },
  );
  const arrays = declared.filter(({ schema }) => schema.type === 'array');
  const long: Array<fc.Arbitrary<Array<[string, unknown]>>> = arrays.length
    ? [
        fc
          .constantFrom(...arrays)
          .map(({ name }): Array<[string, unknown]> => [[name, new Large('array', 3_000, 'x')]]),
      ]
    : [];
  const entries = fc.array(entry, { maxLength: 5 });
  return fc.oneof(
    { weight: 8, arbitrary: entries },
    // A parameter given twice, the second time with another value.
    {
      weight: 2,
      arbitrary: fc
        .tuple(entries, entry, hostileValue())
        .map(([rest, [name, first], second]): Array<[string, unknown]> => [
          ...rest,
          [name, first],
          [name, second],
        ]),
    },
    ...long.map((arbitrary) => ({ weight: 1, arbitrary })),
  );
}

/** Mostly `usual`, now and then one of `rare`. */
const mostly = <T>(usual: T, rare: fc.Arbitrary<T>, rareWeight = 1, usualWeight = 4): fc.Arbitrary<T> =>
  fc.oneof({ weight: usualWeight, arbitrary: fc.constant(usual) }, { weight: rareWeight, arbitrary: rare });

/** Every request the campaign may send to one operation. */
export function draftsFor(
  op: CampaignOperation,
  reader: SchemaReader,
  campaign: CampaignWorld,
): fc.Arbitrary<Draft> {
  const contentTypes: fc.Arbitrary<string | string[] | null | undefined> = fc.oneof(
    fc.constantFrom<string | null>(...CONTENT_TYPES, null),
    fc.constant<string[]>(['application/json', 'text/plain']),
  );
  const keys: fc.Arbitrary<string | undefined> =
    op.write && op.authenticated
      ? fc.oneof(fc.constant(undefined), fc.constant('fresh'), fc.constantFrom(...MALFORMED_KEYS))
      : fc.constant(undefined);
  const stray: fc.Arbitrary<BodyDraft | undefined> = mostly(
    undefined,
    hostileValue().map((value) => ({ value, from: 'a body nobody asked for' })),
  );
  return fc.record({
    identity: fc.oneof(
      ...IDENTITY_WEIGHTS.map(([identity, weight]) => ({ weight, arbitrary: fc.constant(identity) })),
    ),
    operationId: fc.constant(op.operationId),
    method: mostly<string | undefined>(
      undefined,
      fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
      1,
      12,
    ),
    id: op.pathParameter ? idDraft(op, reader, campaign) : fc.constant(undefined),
    query: queryDraft(op, reader),
    body: op.mediaTypes.length ? bodyDraft(reader, op, campaign) : stray,
    contentType: mostly(undefined, contentTypes, 1, 3),
    idempotencyKey: keys,
    headers: fc.array(
      fc.oneof(
        fc.constantFrom(...EXTRA_HEADERS),
        fc.constantFrom(...BROKEN_AUTHORIZATION).map((value): [string, string] => ['Authorization', value]),
      ),
      { maxLength: 2 },
    ),
    fallback: fc.constantFrom('idempotency-key' as const, 'media-type' as const, 'malformed-json' as const),
  });
}

/** Requests drafted at a time, as they go out. */
const CHUNK = 200;

/**
 * Draft number `index` of a campaign: drafted in chunks as the requests go out, each chunk from its
 * own seed derived from `seed`, so that a request is the same in every run with the seed, however
 * many are sent and whichever are picked (NEGATIVE_ONLY).
 */
export function chunkedDrafts(arbitrary: fc.Arbitrary<Draft>, seed: number): (index: number) => Draft {
  const chunks = new Map<number, Draft[]>();
  return (index) => {
    const chunk = Math.floor(index / CHUNK);
    let drafts = chunks.get(chunk);
    if (!drafts) {
      drafts = fc.sample(arbitrary, { seed: (seed + chunk * 7_919) % 2 ** 31, numRuns: CHUNK });
      chunks.set(chunk, drafts);
      // Requests go out in order, a few at a time: chunks well behind are done with.
      chunks.delete(chunk - 2);
    }
    return drafts[index % CHUNK];
  };
}
