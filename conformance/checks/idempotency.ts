import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { HttpResponse } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import { cleanUp } from '../steps/cleanup';
import { announced } from '../steps/extensions';
import { wholeList } from '../steps/whole-lists';

/**
 * Retrying writes with an `Idempotency-Key` (the IETF httpapi draft "The Idempotency-Key HTTP
 * Header Field"), an extension IX-API does not define: the checks apply only to a server that
 * announces it in `GET /extensions` under this name, and are NOT_APPLICABLE elsewhere.
 */
export const IDEMPOTENCY_EXTENSION = 'idempotency-key';
const HEADER = 'idempotency-key';
const DRAFT = 'draft-ietf-httpapi-idempotency-key-header';
const UNKNOWN_ID = 'conformance-no-such-id';
/** How many copies of one request IDEM-005 sends at once. */
const CONCURRENT = 4;

type Item = Record<string, unknown>;

/** A new contact of the primary account, carrying `marker` as its external_ref. */
async function contact(t: CheckContext, marker: string): Promise<Item> {
  const account =
    (await t.session()).accountId ?? t.inconclusive('the access token names no account (no sub claim)');
  return {
    managing_account: account,
    consuming_account: account,
    external_ref: marker,
    name: 'Conformance retry',
  };
}

/** A marker of a contact this check may create, written into the ledger so that cleanup finds it. */
function intend(t: CheckContext): string {
  const marker = `conformance-idem-${randomBytes(6).toString('hex')}`;
  t.suite.ledger.intend({
    destroy: 'contacts_destroy',
    role: 'primary',
    marker,
    find: { list: 'contacts_list', query: `external_ref=${marker}` },
  });
  return marker;
}

const create = (t: CheckContext, body: Item, key: string) =>
  t.call('contacts_create', { body, headers: { [HEADER]: key } });

/** The contacts carrying a marker. */
async function carrying(t: CheckContext, marker: string): Promise<Item[]> {
  return wholeList(t, 'contacts_list', { query: `external_ref=${encodeURIComponent(marker)}` });
}

const idOf = (response: HttpResponse) => (response.body as Item | undefined)?.id;

/** The top-level properties two JSON bodies disagree on, for a finding. */
function differences(a: unknown, b: unknown): string {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return `${JSON.stringify(a)?.slice(0, 80)} against ${JSON.stringify(b)?.slice(0, 80)}`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const differing = [...keys].filter((key) => !isDeepStrictEqual((a as Item)[key], (b as Item)[key]));
  return differing.join(', ');
}

/** The first create of a check; anything but 201 ends it as a failure. */
async function created(t: CheckContext, body: Item, key: string): Promise<HttpResponse | undefined> {
  const response = await create(t, body, key);
  return t.must(
    response.status === 201,
    `POST /contacts with a new Idempotency-Key answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
  )
    ? response
    : undefined;
}

/** Keys of every form a client may send: a UUID, the draft's structured-field string, the longest. */
function keyForms(t: CheckContext): Array<{ label: string; key: string }> {
  const parameter = (t.suite.document.components.parameters as Record<string, { schema?: Item }> | undefined)
    ?.IdempotencyKey;
  const maxLength = Number(parameter?.schema?.maxLength ?? 0);
  // Visible ASCII but the two an sf-string must escape and the comma that separates list members.
  const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
    .filter((c) => !'"\\,'.includes(c))
    .join('');
  const forms = [
    { label: 'a UUID', key: randomUUID() },
    { label: 'a structured-field string ("…")', key: `"${randomUUID()}"` },
  ];
  if (maxLength > 2) {
    const inner = Array.from({ length: maxLength - 2 }, (_, i) =>
      i < 12 ? randomBytes(6).toString('hex')[i] : visible[i % visible.length],
    ).join('');
    forms.push({
      label: `the longest the document allows (${maxLength} characters, quoted)`,
      key: `"${inner}"`,
    });
  }
  return forms;
}

export const IDEMPOTENCY_CHECKS: CheckDefinition[] = [
  {
    id: 'IDEM-001',
    title: 'Idempotency-Key is taken in every form the document and the draft allow',
    clause: `Retrying writes: the document declares an optional Idempotency-Key header on writes (1 to 255 visible ASCII characters; ${DRAFT}, Syntax: a structured-field string). A write carrying one is not refused for it: DELETE of an id that does not exist still answers 404, so nothing changes.`,
    operations: ['contacts_destroy', 'api_extensions_list'],
    safety: 'read',
    async run(t) {
      await announced(t, IDEMPOTENCY_EXTENSION);
      for (const { label, key } of keyForms(t)) {
        const response = await t.call('contacts_destroy', { id: UNKNOWN_ID, headers: { [HEADER]: key } });
        const named = JSON.stringify(response.body ?? '')
          .toLowerCase()
          .includes(HEADER);
        t.must(
          response.status === 404,
          `DELETE of an unknown id with ${label} as Idempotency-Key answered ${response.status}, not 404${named ? ', refusing the key' : ''}`,
        );
      }
    },
  },
  {
    id: 'IDEM-002',
    title: 'A create sent again with its Idempotency-Key is answered as before, with one resource',
    clause: `Retrying writes (${DRAFT}, Idempotency Enforcement): a request repeated with the same key, method, path and body is not carried out again; it gets the first answer (status and body). A server announcing ${IDEMPOTENCY_EXTENSION} is held to it: a retry must not order twice.`,
    operations: ['contacts_create', 'contacts_list', 'contacts_destroy', 'api_extensions_list'],
    safety: 'mutate',
    async run(t) {
      await announced(t, IDEMPOTENCY_EXTENSION);
      try {
        const marker = intend(t);
        const body = await contact(t, marker);
        const key = randomUUID();
        const first = await created(t, body, key);
        if (!first) return;
        const again = await create(t, body, key);
        t.must(
          again.status === first.status,
          `sent again with its key, the create answered ${again.status}; the first answer was ${first.status}`,
        );
        t.must(
          isDeepStrictEqual(again.body, first.body),
          `sent again with its key, the create answered another body (differing: ${differences(first.body, again.body)})`,
        );
        const found = await carrying(t, marker);
        t.must(
          found.length === 1,
          `${found.length} contacts carry the marker after one create was sent twice with its key`,
        );
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'IDEM-003',
    title: 'An Idempotency-Key sent with another body is refused with 422, and nothing is created',
    clause: `Retrying writes (${DRAFT}, Error Scenarios): a key reused with another request payload is answered 422 (a SHOULD) and the other request is not carried out; the answer is a problem document like every IX-API error.`,
    operations: ['contacts_create', 'contacts_list', 'contacts_destroy', 'api_extensions_list'],
    safety: 'mutate',
    async run(t) {
      await announced(t, IDEMPOTENCY_EXTENSION);
      try {
        const marker = intend(t);
        const otherMarker = intend(t);
        const key = randomUUID();
        const first = await created(t, await contact(t, marker), key);
        if (!first) return;
        const other = await create(t, await contact(t, otherMarker), key);
        t.should(other.status === 422, `the key with another body answered ${other.status}, not 422`);
        if (other.status >= 400) {
          const problems = t.suite.problemDocumentProblems(other);
          t.must(!problems.length, `the refusal is not a problem document: ${problems.join('; ')}`);
        }
        t.must(
          other.status >= 300 || idOf(other) === idOf(first),
          `the key with another body answered ${other.status} with another resource (${String(idOf(other))})`,
        );
        const carried = await carrying(t, otherMarker);
        t.must(
          carried.length === 0,
          `the other body was carried out under the used key: ${carried.length} contact(s) carry its marker`,
        );
        const kept = await carrying(t, marker);
        t.must(kept.length === 1, `${kept.length} contacts carry the first body's marker, not 1`);
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'IDEM-004',
    title: 'The same body with another Idempotency-Key is a new request',
    clause: `Retrying writes (${DRAFT}, Uniqueness of Idempotency Key): the key, not the body, tells a retry from a new request; the same body under a new key is carried out again (201, another resource).`,
    operations: ['contacts_create', 'contacts_list', 'contacts_destroy', 'api_extensions_list'],
    safety: 'mutate',
    async run(t) {
      await announced(t, IDEMPOTENCY_EXTENSION);
      try {
        const marker = intend(t);
        const body = await contact(t, marker);
        const first = await created(t, body, randomUUID());
        if (!first) return;
        const second = await create(t, body, randomUUID());
        t.must(second.status === 201, `the same body under a new key answered ${second.status}, not 201`);
        t.must(
          second.status !== 201 || idOf(second) !== idOf(first),
          `the same body under a new key answered with the first resource (${String(idOf(first))})`,
        );
        const found = await carrying(t, marker);
        t.must(
          found.length === 2,
          `${found.length} contacts carry the marker after two creates with two keys`,
        );
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'IDEM-005',
    title: 'Copies of one create sent at once with one Idempotency-Key make one resource',
    clause: `Retrying writes (${DRAFT}, Idempotency Enforcement and Error Scenarios): a copy arriving while the first is still carried out either waits for its answer or is refused with a 409 problem; exactly one resource is created, and every success answers alike.`,
    operations: ['contacts_create', 'contacts_list', 'contacts_destroy', 'api_extensions_list'],
    safety: 'mutate',
    async run(t) {
      await announced(t, IDEMPOTENCY_EXTENSION);
      try {
        const marker = intend(t);
        const body = await contact(t, marker);
        const key = randomUUID();
        const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => create(t, body, key)));
        const successes = answers.filter((answer) => answer.status >= 200 && answer.status < 300);
        t.must(
          successes.length > 0,
          `none of ${CONCURRENT} copies succeeded (${answers.map((a) => a.status).join(', ')})`,
        );
        const [first] = successes;
        for (const answer of successes.slice(1)) {
          t.must(
            answer.status === first.status && isDeepStrictEqual(answer.body, first.body),
            `copies answered differently: ${first.status} and ${answer.status} (differing: ${differences(first.body, answer.body) || 'status'})`,
          );
        }
        for (const answer of answers.filter((a) => a.status < 200 || a.status >= 300)) {
          if (
            !t.must(answer.status === 409, `a copy answered ${answer.status}, neither as the first nor 409`)
          )
            continue;
          const problems = t.suite.problemDocumentProblems(answer);
          t.must(!problems.length, `a 409 is not a problem document: ${problems.join('; ')}`);
        }
        const found = await carrying(t, marker);
        t.must(
          found.length === 1,
          `${found.length} contacts carry the marker after ${CONCURRENT} copies of one create were sent at once with one key`,
        );
      } finally {
        await cleanUp(t);
      }
    },
  },
];
