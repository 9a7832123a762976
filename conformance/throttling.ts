import type { HttpResponse } from './http';
import type { RecordedExchange } from './model';

/**
 * How the suite lives with a server's rate limits: a 429 is waited out and the same request sent
 * again, a few times at most and never for longer than the ceiling; what it waited is evidence, and
 * the run says it was throttled.
 */
export interface RetryPolicy {
  /** How often one request is sent again after a 429 (0: never). */
  maxRetries: number;
  /** The longest single wait; a Retry-After beyond it ends the retries. */
  maxWaitMs: number;
  /** The first wait after a 429 without a usable Retry-After; it doubles with each retry. */
  fallbackWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, maxWaitMs: 60_000, fallbackWaitMs: 1000 };

/**
 * The wait a Retry-After asks for (RFC 9110 §10.2.3: delay-seconds or an HTTP date), in
 * milliseconds; undefined when the header is missing or neither form.
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names a day of the week and GMT; anything else Date.parse might take is not one.
  if (!/^[A-Za-z]{3},? .+ GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** One 429 the server answered, as the run keeps it for the RATE- checks and the run's warnings. */
export interface Throttle {
  response: HttpResponse;
  exchange: RecordedExchange;
  /** How long the suite waited before sending the request again; 0 when it gave up. */
  waitedMs: number;
  retried: boolean;
}

/** Raised when a request is still throttled once the retries are spent or the wait is too long. */
export class Throttled extends Error {
  constructor(
    readonly response: HttpResponse,
    reason: string,
  ) {
    super(reason);
  }
}

/**
 * What to do about a 429 on the given attempt (0 for the first answer): wait this long and send
 * again, or give up and say why.
 */
export function nextStep(
  policy: RetryPolicy,
  attempt: number,
  retryAfter: string | undefined,
  now = Date.now(),
): { waitMs: number } | { giveUp: string } {
  if (attempt >= policy.maxRetries) {
    return {
      giveUp: policy.maxRetries
        ? `still 429 after ${policy.maxRetries} ${policy.maxRetries === 1 ? 'retry' : 'retries'}`
        : '429, and the suite does not retry (--max-retries 0)',
    };
  }
  const asked = retryAfterMs(retryAfter, now);
  const waitMs = asked ?? policy.fallbackWaitMs * 2 ** attempt;
  if (waitMs > policy.maxWaitMs) {
    return {
      giveUp: `429 with Retry-After ${retryAfter ?? '(none)'}: longer than the ${Math.round(policy.maxWaitMs / 1000)} s the suite waits (--max-retry-wait)`,
    };
  }
  return { waitMs };
}

const seconds = (ms: number) =>
  ms > 0 && ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s`;

/** What the suite did about a 429 it recorded: waited and sent the request again, or stopped. */
export function throttleNote(exchange: RecordedExchange): string {
  const throttled = exchange.throttled;
  if (!throttled) return '';
  const asked = throttled.retryAfter === null ? 'no Retry-After' : `Retry-After: ${throttled.retryAfter}`;
  return throttled.retried
    ? `Throttled (${asked}): waited ${seconds(throttled.waitMs)}, then sent the same request again.`
    : `Throttled (${asked}): not sent again (${throttled.reason ?? 'retries spent'}).`;
}

/** The run's notice about throttling, or undefined when the server never answered 429. */
export function throttlingWarning(throttles: readonly Throttle[]): string | undefined {
  if (!throttles.length) return undefined;
  const retried = throttles.filter((t) => t.retried);
  const waited = retried.reduce((sum, t) => sum + t.waitedMs, 0);
  const given = throttles.length - retried.length;
  const parts = [
    `the server throttled the suite: ${throttles.length} answer(s) 429 Too Many Requests`,
    retried.length
      ? `; ${retried.length} waited out (${seconds(waited)} in all) and sent again, their retries judged instead`
      : '',
    given
      ? `; ${given} still throttled when the suite stopped retrying, so what needed them is INCONCLUSIVE`
      : '',
    '. RATE-001 and RATE-002 judge the 429 answers themselves.',
  ];
  return parts.join('');
}
