import { PROBLEM_TYPE_BASE } from '../domain/errors';

/** Problem types of the HTTP exchange itself, which no resource rule raises. */
export type RequestProblemType =
  | 'too-many-requests'
  | 'request-header-fields-too-large'
  | 'request-timeout'
  | 'validation-error'
  | 'idempotency-key-in-use'
  | 'idempotency-key-reused';

/**
 * A request refused for how it was sent rather than for what it asks: too many of them, a reused
 * idempotency key. Answered as a problem document like domain errors, with its own headers.
 */
export class RequestProblem extends Error {
  constructor(
    readonly status: number,
    readonly type: RequestProblemType,
    readonly title: string,
    detail: string,
    readonly headers: Record<string, string> = {},
    private readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = 'RequestProblem';
  }

  /** The problem document. */
  body(): Record<string, unknown> {
    return {
      type: `${PROBLEM_TYPE_BASE}${this.type}.html`,
      title: this.title,
      status: this.status,
      detail: this.message,
      ...this.extra,
    };
  }
}

/** More requests than a rate limit allows; the client may try again after `retryAfterSeconds`. */
export function tooManyRequests(detail: string, retryAfterSeconds: number): RequestProblem {
  return new RequestProblem(429, 'too-many-requests', 'Too many requests.', detail, {
    'Retry-After': String(retryAfterSeconds),
  });
}
