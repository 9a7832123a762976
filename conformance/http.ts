import type { RecordedExchange } from './model';
import type { RetryPolicy, Throttle } from './throttling';
import { DEFAULT_RETRY_POLICY, nextStep, Throttled } from './throttling';

export interface HttpRequest {
  method: string;
  /** Path below the base URL (`/accounts?id=a`), or an absolute URL. */
  path: string;
  token?: string;
  body?: unknown;
  /** Sent as is instead of JSON-encoding `body` (text, or bytes such as a PDF). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The body as received, for answers that are not text (a PDF). */
  bytes: Buffer;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
  url: string;
}

const SECRET_KEYS = new Set(['api_secret', 'access_token', 'refresh_token', 'password', 'api_key']);

/**
 * A copy of a JSON value fit for a report: secrets are replaced, and so are the values of properties
 * the document marks sensitive (their presence stays visible, their value does not).
 */
export function redactForReport(value: unknown, sensitive: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => redactForReport(item, sensitive));
  if (typeof value !== 'object' || value === null) return value;
  const result: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (SECRET_KEYS.has(key)) result[key] = '<secret>';
    else if (sensitive.has(key) && inner !== null && inner !== '' && !(Array.isArray(inner) && !inner.length))
      result[key] = '<sensitive>';
    else result[key] = redactForReport(inner, sensitive);
  }
  return result;
}

function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    result[name] = name.toLowerCase() === 'authorization' ? value.replace(/\s.*/, ' <secret>') : value;
  }
  return result;
}

const MAX_EVIDENCE_ITEMS = 5;

/** Media types a report shows as a summary of their bytes rather than as text. */
const BINARY = /^application\/(pdf|octet-stream)\b/i;

/** What a report shows of a body of bytes: its size, its type and how it starts. */
function describeBytes(bytes: Buffer, contentType: string | undefined): string {
  const start = bytes
    .subarray(0, 16)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  return `<${bytes.length} bytes of ${contentType ?? 'unlabelled content'}, starting ${JSON.stringify(start)}>`;
}

/** Keeps long lists short in reports: the first items and a count. */
function excerpt(body: unknown): unknown {
  if (Array.isArray(body) && body.length > MAX_EVIDENCE_ITEMS) {
    const kept: unknown[] = body.slice(0, MAX_EVIDENCE_ITEMS);
    return [...kept, `… ${body.length - MAX_EVIDENCE_ITEMS} more items`];
  }
  return body;
}

/** A 400 the server answered, as the run keeps it for the check of every 400's `properties`. */
export interface Refusal {
  /** The problem as answered (parsed JSON, unredacted; undefined when it was no JSON). */
  body: unknown;
  exchange: RecordedExchange;
}

export interface HttpClientOptions {
  timeoutMs?: number;
  /** How 429 answers are waited out; see `RetryPolicy`. */
  retry?: Partial<RetryPolicy>;
  /** How the client waits (tests replace it to keep time still). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * An HTTP client bound to one server that records every exchange for the report. A 429 is waited
 * out as its Retry-After asks and the same request sent again (within the retry policy); the 429
 * is recorded with the wait and kept in `throttles`, and the caller only sees the answer to the
 * retry. A request still throttled when the policy is spent raises `Throttled`.
 */
export class HttpClient {
  readonly policy: RetryPolicy;
  /** Every 429 this client was answered, in order. */
  readonly throttles: Throttle[] = [];
  /** Every 400 this client was answered, in order. */
  readonly refusals: Refusal[] = [];
  private readonly timeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    readonly baseUrl: string,
    private readonly sensitive: ReadonlySet<string>,
    options: HttpClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  url(path: string): string {
    return /^https?:\/\//.test(path) ? path : `${this.baseUrl.replace(/\/$/, '')}${path}`;
  }

  async send(request: HttpRequest, record?: (exchange: RecordedExchange) => void): Promise<HttpResponse> {
    for (let attempt = 0; ; attempt += 1) {
      const { response, exchange } = await this.once(request, record);
      if (response.status !== 429) {
        if (response.status === 400) this.refusals.push({ body: response.body, exchange });
        record?.(exchange);
        return response;
      }
      const step = nextStep(this.policy, attempt, response.headers['retry-after']);
      const waitMs = 'waitMs' in step ? step.waitMs : 0;
      exchange.throttled = {
        retryAfter: response.headers['retry-after'] ?? null,
        waitMs,
        retried: 'waitMs' in step,
        ...('giveUp' in step ? { reason: step.giveUp } : {}),
      };
      this.throttles.push({ response, exchange, waitedMs: waitMs, retried: 'waitMs' in step });
      record?.(exchange);
      if ('giveUp' in step)
        throw new Throttled(response, `${request.method} ${exchange.request.url}: ${step.giveUp}`);
      await this.sleep(waitMs);
    }
  }

  /**
   * Sends the request once. The exchange of an answer goes back to `send`, which records it once it
   * knows whether it waits and retries; one that failed is recorded here.
   */
  private async once(
    request: HttpRequest,
    record: ((exchange: RecordedExchange) => void) | undefined,
  ): Promise<{ response: HttpResponse; exchange: RecordedExchange }> {
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    let body = request.rawBody;
    if (body === undefined && request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] ??= 'application/json';
    }
    if (request.token) headers.authorization = `Bearer ${request.token}`;
    const url = this.url(request.path);
    const started = Date.now();
    const exchange: RecordedExchange = {
      request: {
        method: request.method,
        url,
        headers: redactHeaders(headers),
        body:
          request.body !== undefined
            ? redactForReport(request.body, this.sensitive)
            : Buffer.isBuffer(request.rawBody)
              ? describeBytes(request.rawBody, headers['content-type'])
              : request.rawBody,
      },
      durationMs: 0,
    };
    try {
      const response = await fetch(url, {
        method: request.method,
        headers,
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      const text = bytes.toString('utf8');
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      const responseHeaders = Object.fromEntries(response.headers.entries());
      const contentType = responseHeaders['content-type'];
      exchange.response = {
        status: response.status,
        headers: responseHeaders,
        body:
          parsed !== undefined
            ? excerpt(redactForReport(parsed, this.sensitive))
            : BINARY.test(contentType ?? '')
              ? describeBytes(bytes, contentType)
              : text.slice(0, 500),
      };
      exchange.durationMs = Date.now() - started;
      return {
        response: { status: response.status, headers: responseHeaders, text, bytes, body: parsed, url },
        exchange,
      };
    } catch (error) {
      exchange.error = error instanceof Error ? error.message : String(error);
      exchange.durationMs = Date.now() - started;
      record?.(exchange);
      throw error;
    }
  }
}
