import type { RequestListener, Server } from 'node:http';
import { createServer, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { RequestProblemType } from './request-problems';
import { RequestProblem } from './request-problems';

/** The most the request line and headers together may weigh (an `id` filter of some hundred ids fits). */
export const MAX_HEADER_BYTES = 64 * 1024;
/** Idle keep-alive connections stay open this long, longer than the usual load balancer's minute. */
const KEEP_ALIVE_MS = 65_000;
/** How often the server looks for requests past their time. */
const CHECK_INTERVAL_MS = 1_000;

export interface ListenerLimits {
  /** How long a request may take to arrive whole, headers and body. */
  requestTimeoutMs: number;
  /** Connections held open at most. */
  maxConnections: number;
}

/** A problem document as raw HTTP, for the errors Node's parser meets before Express sees a request. */
function rawProblem(
  status: number,
  type: RequestProblemType,
  detail: string,
  extra: Record<string, unknown> = {},
): string {
  const title = STATUS_CODES[status] ?? 'Error';
  const body = JSON.stringify(new RequestProblem(status, type, title, detail, {}, extra).body());
  return [
    `HTTP/1.1 ${status} ${title}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
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

/**
 * The API's HTTP server, bounded: headers must arrive within a tenth of the request time (at most 10
 * s) and the whole request within it, so a client trickling bytes holds a socket only that long; the
 * number of connections is capped; and what the parser refuses (headers too large, malformed
 * requests, time up) is answered as a JSON problem rather than Node's bare status line.
 */
export function createListener(app: RequestListener, limits: ListenerLimits, logger: Logger): Server {
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(10_000, Math.max(1_000, Math.floor(limits.requestTimeoutMs / 10))),
      keepAliveTimeout: KEEP_ALIVE_MS,
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    logger.debug({ code: error.code }, 'request refused by the HTTP parser');
    socket.end(problemFor(error));
  });
  return server;
}
