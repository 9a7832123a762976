import http from 'node:http';
/**
 * The rehearsal's clients: requests spread round-robin over the API replicas, as a load balancer
 * would, with every request and its outcome recorded for the checks at the end.
 */

/** One request as the client saw it. */
export interface Exchange {
  api: string;
  method: string;
  path: string;
  startedAt: number;
  endedAt: number;
  status?: number;
  /** The answer's Retry-After, when it had one. */
  retryAfter?: string;
  /** Set when no HTTP answer came: the connection was refused, reset or timed out. */
  transport?: string;
}

export interface Answer {
  status: number;
  /** The parsed JSON body (undefined when empty). */
  body: unknown;
}

/** An API replica the balancer may send to. */
export interface Backend {
  name: string;
  url: string;
}

const REQUEST_TIMEOUT_MS = 30_000;

function transportCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/**
 * Round-robin over the replicas in rotation. A refused connection takes the replica out of rotation
 * (until it is put back) and the request goes to the next one, as nothing reached the refusing
 * process; any other failure to get an answer is the caller's to judge.
 */
export class Balancer {
  readonly exchanges: Exchange[] = [];
  private backends: Backend[] = [];
  private next = 0;

  add(backend: Backend): void {
    this.backends.push(backend);
  }

  remove(name: string): void {
    this.backends = this.backends.filter((backend) => backend.name !== name);
  }

  get names(): string[] {
    return this.backends.map((backend) => backend.name);
  }

  async call(
    method: string,
    path: string,
    options: { token?: string; body?: unknown } = {},
  ): Promise<Answer | { transport: string; api: string }> {
    for (let tries = 0; ; tries += 1) {
      if (this.backends.length === 0) throw new Error('no API replica is in rotation');
      const backend = this.backends[this.next++ % this.backends.length];
      const exchange: Exchange = { api: backend.name, method, path, startedAt: Date.now(), endedAt: 0 };
      this.exchanges.push(exchange);
      try {
        const response = await fetch(`${backend.url}${path}`, {
          method,
          headers: {
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
            ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const text = await response.text();
        exchange.endedAt = Date.now();
        exchange.status = response.status;
        exchange.retryAfter = response.headers.get('retry-after') ?? undefined;
        return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
      } catch (error) {
        exchange.endedAt = Date.now();
        exchange.transport = transportCode(error);
        if (exchange.transport === 'ECONNREFUSED' && tries < 10) {
          this.remove(backend.name);
          continue;
        }
        return { transport: exchange.transport, api: backend.name };
      }
    }
  }
}

export const isAnswer = (outcome: Answer | { transport: string }): outcome is Answer => 'status' in outcome;

/**
 * Places an order whose `external_ref` is unique, exactly once: when the answer is lost (the replica
 * died with the request open) or is a server error, the client looks the order up by its reference
 * before it asks again, as a careful client does. Answers the new resource's id.
 */
export async function placeOrder(
  balancer: Balancer,
  token: string,
  collection: string,
  body: Record<string, unknown> & { external_ref: string },
): Promise<string> {
  for (let attempt = 1; attempt <= 20; attempt += 1) {
    const outcome = await balancer.call('POST', collection, { token, body });
    if (isAnswer(outcome)) {
      if (outcome.status === 201) return (outcome.body as { id: string }).id;
      if (outcome.status < 500) {
        throw new Error(
          `${collection} refused ${body.external_ref}: ${outcome.status} ${JSON.stringify(outcome.body)}`,
        );
      }
    }
    // No answer, or a server error (a 503 while the replica's database was away may come after the
    // order was taken): look it up before placing it again.
    const found = await lookUp(balancer, token, collection, body.external_ref);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${body.external_ref} could not be placed`);
}

async function lookUp(balancer: Balancer, token: string, collection: string, ref: string) {
  for (;;) {
    const outcome = await balancer.call('GET', `${collection}?external_ref=${encodeURIComponent(ref)}`, {
      token,
    });
    if (!isAnswer(outcome) || outcome.status !== 200) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    const items = outcome.body as Array<{ id: string }>;
    if (items.length > 1) throw new Error(`${ref} was placed ${items.length} times`);
    return items[0]?.id;
  }
}

/**
 * A request whose body is sent in two parts: it is under way on `backend` (the server has read its
 * headers) until `finish` sends the rest. Recorded like any other request.
 */
export function requestUnderWay(balancer: Balancer, backend: Backend) {
  const body = JSON.stringify({ api_key: 'rehearsal-key', api_secret: 'rehearsal-secret' });
  const url = new URL(`${backend.url}/auth/token`);
  const exchange: Exchange = {
    api: backend.name,
    method: 'POST',
    path: '/auth/token (under way at SIGTERM)',
    startedAt: Date.now(),
    endedAt: 0,
  };
  balancer.exchanges.push(exchange);
  const client = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const answered = new Promise<void>((resolve) => {
    client.once('response', (response) => {
      exchange.status = response.statusCode;
      response.resume();
      response.once('end', () => {
        exchange.endedAt = Date.now();
        resolve();
      });
    });
    client.once('error', (error: NodeJS.ErrnoException) => {
      exchange.transport = error.code ?? error.message;
      exchange.endedAt = Date.now();
      resolve();
    });
  });
  client.write(body.slice(0, 8));
  return {
    finish: () => {
      client.end(body.slice(8));
      return answered;
    },
  };
}
