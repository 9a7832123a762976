import type { Fault } from './faults';
import type { ProxiedRequest, ProxiedResponse } from './messages';
import { getHeader, problemResponse, readJson, withHeaders, withJson } from './messages';

/**
 * Faults in what lets a client retry: rate limits that answer 429 without saying when to come
 * back, or not as a problem (seen by a read run, whose requests they throttle now and then), and
 * an `Idempotency-Key` that does not make a retry safe (seen by a full run of the IDEM- checks).
 */

const IDEMPOTENCY_CHECKS = ['IDEM-001', 'IDEM-002', 'IDEM-003', 'IDEM-004', 'IDEM-005'];
const only = { only: IDEMPOTENCY_CHECKS };
const HEADER = 'idempotency-key';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The key of a write, or undefined. */
const keyOf = (req: ProxiedRequest): string | undefined =>
  WRITES.has(req.method) ? getHeader(req, HEADER) : undefined;

const isSuccess = (res: ProxiedResponse) => res.status >= 200 && res.status < 300;

/** What identifies a request apart from its key. */
const fingerprintOf = (req: ProxiedRequest) => `${req.method} ${req.path}\n${req.body.toString('utf8')}`;

/** Which requests (counted from the fault being set) a throttling fault answers 429. */
const THROTTLED = new Set([12, 40, 90]);

/** Answers the requests THROTTLED counts out with `answer`, leaving the rest alone. */
function throttling(
  id: string,
  description: string,
  answer: () => ProxiedResponse,
  breaks?: 'should',
): Fault {
  let count = 0;
  return {
    id,
    description,
    ...(breaks ? { breaks } : {}),
    reset: () => {
      count = 0;
    },
    request(req) {
      count += 1;
      return THROTTLED.has(count) ? answer() : req;
    },
  };
}

/** How long the first of concurrent copies takes, so that the others arrive while it runs. */
const SLOW_FIRST_MS = 300;

/** Fresh faults with empty memories; use one set per proxy. */
export function createRetryFaults(): Fault[] {
  const answered = new Set<string>();
  const bodies = new Map<string, string>();
  const byFingerprint = new Map<string, { key: string; answer: ProxiedResponse }>();
  const inFlight = new Map<string, number>();
  return [
    throttling(
      'throttle-without-retry-after',
      'now and then a request is answered 429 without Retry-After',
      () => problemResponse(429, 'too-many-requests', 'Too many requests of your account.'),
      'should',
    ),
    throttling('throttle-not-a-problem', 'now and then a request is answered 429 with an HTML page', () => {
      const body = Buffer.from('<html><body><h1>429 Too Many Requests</h1></body></html>');
      return {
        status: 429,
        headers: { 'content-type': 'text/html', 'content-length': String(body.length), 'retry-after': '1' },
        body,
      };
    }),
    {
      id: 'idempotency-quoted-key-refused',
      description: 'an Idempotency-Key sent as a structured-field string ("…") is refused with 400',
      request(req) {
        const key = keyOf(req);
        if (!key?.startsWith('"')) return req;
        return problemResponse(400, 'validation-error', 'The request did not validate.', {
          properties: [{ name: 'Idempotency-Key', reason: 'Must not be quoted.' }],
        });
      },
    },
    {
      id: 'idempotency-key-dropped',
      description:
        'Idempotency-Key is lost before the server (a proxy drops it), so every retry is carried out again',
      full: only,
      request: (req) => (keyOf(req) === undefined ? req : withHeaders(req, { [HEADER]: undefined })),
    },
    {
      id: 'idempotency-replay-other-body',
      description: 'a write repeated with its key is answered with another body than the first time',
      full: only,
      reset: () => answered.clear(),
      response(res, req) {
        const key = keyOf(req);
        if (key === undefined || !isSuccess(res)) return res;
        if (!answered.has(key)) {
          answered.add(key);
          return res;
        }
        const body = readJson(res);
        if (typeof body !== 'object' || body === null || Array.isArray(body)) return res;
        return withJson(res, { ...body, name: `${String((body as { name?: unknown }).name)} (replayed)` });
      },
    },
    {
      id: 'idempotency-reuse-accepted',
      description: 'a key sent again with another body is carried out as a new request instead of refused',
      full: only,
      reset: () => bodies.clear(),
      request(req) {
        const key = keyOf(req);
        if (key === undefined) return req;
        const body = fingerprintOf(req);
        const first = bodies.get(key);
        if (first === undefined) bodies.set(key, body);
        return first === undefined || first === body ? req : withHeaders(req, { [HEADER]: `${key}-again` });
      },
    },
    {
      id: 'idempotency-keyed-by-body',
      description: 'the same body under a new key gets the first answer again instead of being carried out',
      full: only,
      reset: () => byFingerprint.clear(),
      request(req) {
        const key = keyOf(req);
        const earlier = key === undefined ? undefined : byFingerprint.get(fingerprintOf(req));
        return earlier && earlier.key !== key ? earlier.answer : req;
      },
      response(res, req) {
        const key = keyOf(req);
        const fingerprint = fingerprintOf(req);
        if (key !== undefined && isSuccess(res) && !byFingerprint.has(fingerprint))
          byFingerprint.set(fingerprint, { key, answer: res });
        return res;
      },
    },
    {
      id: 'idempotency-concurrent-doubles',
      description:
        'copies of a write that arrive while the first with their key is still carried out are carried out too',
      full: only,
      reset: () => inFlight.clear(),
      request(req) {
        const key = keyOf(req);
        if (key === undefined) return req;
        const running = inFlight.get(key) ?? 0;
        inFlight.set(key, running + 1);
        return running ? withHeaders(req, { [HEADER]: undefined }) : req;
      },
      async response(res, req) {
        const key = keyOf(req);
        if (key === undefined) return res;
        // The first is slow, so that the copies sent with it arrive while it runs.
        if (inFlight.get(key) === 1) await new Promise((resolve) => setTimeout(resolve, SLOW_FIRST_MS));
        const running = (inFlight.get(key) ?? 1) - 1;
        if (running > 0) inFlight.set(key, running);
        else inFlight.delete(key);
        return res;
      },
    },
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const RETRY_FAULTS: readonly Fault[] = createRetryFaults();
