import type { RequestListener, Server, ServerResponse } from 'node:http';
import { createServer, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { addressKey } from './rate-limits';
import type { RequestProblemType } from './request-problems';
import { RequestProblem, tooManyRequests } from './request-problems';

/** The most the request line and headers together may weigh (an `id` filter of some hundred ids fits). */
export const MAX_HEADER_BYTES = 64 * 1024;
/** How often the server looks for requests past their time. */
const CHECK_INTERVAL_MS = 1_000;

export interface ListenerLimits {
  /** How long a request may take to arrive whole, headers and body. */
  requestTimeoutMs: number;
  /** How long its line and headers may take, at most `requestTimeoutMs`. */
  headersTimeoutMs: number;
  /** How long a connection may stay idle between two requests. */
  keepAliveTimeoutMs: number;
  /** Connections held open at most. */
  maxConnections: number;
  /** Connections held open at most from one client address (as addressKey counts it); 0: no limit. */
  maxConnectionsPerAddress: number;
  /** Whether the peer at `address` speaks for other clients (a trusted proxy): its connections are not counted. */
  isProxy(address: string): boolean;
  /** Told of each connection refused for its address's limit. */
  onRefused?(): void;
}

/**
 * A problem as raw HTTP that closes the connection, for what is refused before Express sees a
 * request: the errors Node's parser meets, connections beyond their address's limit.
 */
function rawAnswer(problem: RequestProblem): string {
  const body = JSON.stringify(problem.body());
  return [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    ...Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

function rawProblem(
  status: number,
  type: RequestProblemType,
  detail: string,
  extra: Record<string, unknown> = {},
): string {
  return rawAnswer(new RequestProblem(status, type, STATUS_CODES[status] ?? 'Error', detail, {}, extra));
}

/** What Node's HTTP parser refused, in IX-API's vocabulary. */
function problemFor(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return rawProblem(
        431,
        'request-header-fields-too-large',
        `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB; ask for fewer ids at a time.`,
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return rawProblem(408, 'request-timeout', 'The request did not arrive whole in time.');
    default:
      return rawProblem(400, 'validation-error', 'The request is not valid HTTP/1.1.', {
        properties: [{ name: 'request', reason: 'The request line or a header could not be parsed.' }],
      });
  }
}

/** Whether an answer has begun on the socket already: then no other may be written on it. */
function answering(socket: Duplex): boolean {
  const response = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  return response?.headersSent === true;
}

/**
 * Refuses a client address more than `limit` connections at once: one beyond it is answered 429 at
 * once, before it sent anything, and closed, so that it never reaches the parser; those it holds
 * already go on. The peers `isProxy` names are not counted.
 */
function limitConnectionsPerAddress(server: Server, limits: ListenerLimits, logger: Logger): void {
  const open = new Map<string, number>();
  const refusal = rawAnswer(
    tooManyRequests(
      `This address holds ${limits.maxConnectionsPerAddress} connections already; send requests on those, or close some first.`,
      1,
    ),
  );
  // Added after the HTTP server's own listener: a socket destroyed here is never read.
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (!address || limits.isProxy(address)) return;
    const key = addressKey(address);
    const held = open.get(key) ?? 0;
    if (held >= limits.maxConnectionsPerAddress) {
      logger.debug({ address: key, held }, 'connection refused: too many from one address');
      limits.onRefused?.();
      socket.end(refusal);
      socket.destroy();
      return;
    }
    open.set(key, held + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}

/**
 * The API's HTTP server, bounded: headers must arrive within their time and the whole request
 * within its own, so a client trickling bytes holds a socket only that long; an idle connection is
 * closed after the keep-alive time; the number of connections is capped, for the process and per
 * client address; and what the parser refuses (headers too large, malformed requests, time up) is
 * answered as a JSON problem rather than Node's bare status line, while no answer has begun.
 */
export function createListener(app: RequestListener, limits: ListenerLimits, logger: Logger): Server {
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  if (limits.maxConnectionsPerAddress > 0) limitConnectionsPerAddress(server, limits, logger);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable || answering(socket)) {
      socket.destroy();
      return;
    }
    logger.debug({ code: error.code }, 'request refused by the HTTP parser');
    socket.end(problemFor(error));
  });
  return server;
}
