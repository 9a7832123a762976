import type { CheckContext, CheckDefinition } from '../runner';
import type { Throttle } from '../throttling';
import { retryAfterMs } from '../throttling';

/** Throttled answers a result shows as its evidence; the rest are counted. */
const SHOWN = 5;

/**
 * The 429s the server answered during the run so far (the suite waits them out and retries, see
 * throttling.ts). Nothing here provokes one: exhausting a production account's limits is no
 * conformance check; a run that was never throttled leaves these INCONCLUSIVE.
 */
function throttlesSeen(t: CheckContext): readonly Throttle[] {
  const throttles = t.suite.http.throttles;
  if (!throttles.length)
    t.inconclusive(
      'the server answered no request of this run with 429, so there was none to judge',
      'a 429 answer: the server throttled no request of the run',
    );
  t.evidence.push(...throttles.slice(0, SHOWN).map((throttle) => throttle.exchange));
  return throttles;
}

const where = (throttle: Throttle) =>
  `${throttle.exchange.request.method} ${throttle.exchange.request.url.replace(/^https?:\/\/[^/]+/, '')}`;

/** Lists at most a few of the requests a finding is about. */
function some(throttles: readonly Throttle[]): string {
  const named = throttles.slice(0, 3).map(where).join('; ');
  return throttles.length > 3 ? `${named}; and ${throttles.length - 3} more` : named;
}

/** How the server's rate limits answer: judged from every 429 the run met. Registered last. */
export const LIMIT_CHECKS: CheckDefinition[] = [
  {
    id: 'RATE-001',
    title: 'A 429 Too Many Requests is a problem document',
    clause:
      'Errors: every error answer, 429 Too Many Requests included, is a JSON problem document with an IX-API error type and the HTTP status (RFC 6585 §4: the answer explains the condition).',
    operations: [],
    safety: 'read',
    run(t) {
      const throttles = throttlesSeen(t);
      const schema = t.suite.validator('/components/schemas/Problem');
      const broken = new Map<string, Throttle[]>();
      for (const throttle of throttles) {
        const problems = t.suite.problemDocumentProblems(throttle.response);
        if (!problems.length && !schema(throttle.response.body))
          problems.push(`the problem does not match the schema: ${t.suite.ajv.errorsText(schema.errors)}`);
        for (const problem of problems) broken.set(problem, [...(broken.get(problem) ?? []), throttle]);
      }
      for (const [problem, where] of broken)
        t.must(false, `${where.length} of ${throttles.length} 429 answers: ${problem} (${some(where)})`);
      return Promise.resolve();
    },
  },
  {
    id: 'RATE-002',
    title: 'A 429 Too Many Requests says when to try again',
    clause:
      'Limits: a 429 carries Retry-After, in seconds or as an HTTP date (RFC 9110 §10.2.3). RFC 6585 §4 lets a server include it and the document declares it on every 429; without it a client can only guess when to try again, so its absence is a warning.',
    operations: [],
    safety: 'read',
    run(t) {
      const throttles = throttlesSeen(t);
      const missing = throttles.filter((throttle) => throttle.response.headers['retry-after'] === undefined);
      const unreadable = throttles.filter(
        (throttle) =>
          throttle.response.headers['retry-after'] !== undefined &&
          retryAfterMs(throttle.response.headers['retry-after']) === undefined,
      );
      t.should(
        !missing.length,
        `${missing.length} of ${throttles.length} 429 answers carry no Retry-After (${some(missing)})`,
      );
      t.should(
        !unreadable.length,
        `${unreadable.length} of ${throttles.length} 429 answers carry a Retry-After that is neither seconds nor an HTTP date (${unreadable
          .slice(0, 3)
          .map((throttle) => JSON.stringify(throttle.response.headers['retry-after']))
          .join(', ')})`,
      );
      return Promise.resolve();
    },
  },
];
