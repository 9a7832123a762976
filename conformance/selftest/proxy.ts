import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fault } from './faults';
import type { ProxiedRequest, ProxiedResponse } from './messages';
import { isResponse, problemResponse } from './messages';

/** A proxy in front of one server that injects at most one fault at a time. */
export interface FaultProxy {
  /** The proxy's origin followed by the target's path, to use wherever the target's URL was used. */
  readonly url: string;
  /** Switches to `fault` (none with null), forgetting what it remembered, and restarts the count. */
  setFault(fault: Fault | null): void;
  /** Requests received since the last setFault. */
  readonly requests: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** Names a hop must not pass on: the fixed ones and those the Connection header lists. */
function hopHeaders(headers: IncomingHttpHeaders): Set<string> {
  const names = new Set(HOP_BY_HOP);
  const connection = headers.connection;
  for (const name of (Array.isArray(connection) ? connection.join(',') : (connection ?? '')).split(','))
    if (name.trim()) names.add(name.trim().toLowerCase());
  return names;
}

function plainHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const skip = hopHeaders(headers);
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || skip.has(name)) continue;
    result[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Statuses and methods whose answers carry no body, so their length headers must stay as they are. */
const bodiless = (method: string, status: number) =>
  method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);

export async function startFaultProxy(options: { target: string }): Promise<FaultProxy> {
  const target = new URL(options.target);
  if (target.protocol !== 'http:')
    throw new Error(`the fault proxy forwards to http:// only, not ${target.protocol}`);
  const agent = new http.Agent({ keepAlive: true });
  let fault: Fault | null = null;
  let requests = 0;
  let origin = '';

  /** Absolute links to the target (Next, Location) must lead back through the proxy. */
  const relink = (value: string) =>
    value.startsWith(`${target.origin}/`) ? `${origin}${value.slice(target.origin.length)}` : value;

  const upstream = (method: string, path: string, headers: Record<string, string>) =>
    http.request({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      method,
      path,
      headers,
      agent,
    });

  /**
   * Sends a buffered request and buffers the answer, for faults to read and rewrite. A kept-alive
   * socket the upstream closed just as it was reused fails at once; the request goes again on a
   * fresh one.
   */
  const send = (req: ProxiedRequest, again = true): Promise<ProxiedResponse> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...req.headers };
      delete headers['transfer-encoding'];
      // Faults read bodies as text, so ask for them unencoded.
      headers['accept-encoding'] = 'identity';
      if (req.body.length || headers['content-length'] !== undefined)
        headers['content-length'] = String(req.body.length);
      const outgoing = upstream(req.method, req.path, headers);
      outgoing.on('response', (incoming) => {
        readAll(incoming).then(
          (body) =>
            resolve({ status: incoming.statusCode ?? 502, headers: plainHeaders(incoming.headers), body }),
          reject,
        );
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        if (again && outgoing.reusedSocket && error.code === 'ECONNRESET') resolve(send(req, false));
        else reject(error);
      });
      outgoing.end(req.body);
    });

  const reply = (res: ServerResponse, method: string, answer: ProxiedResponse, upstreamBody?: Buffer) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower)) continue;
      headers[lower] = lower === 'location' || lower === 'x-pagination-next' ? relink(value) : value;
    }
    // An untouched body keeps the upstream's framing; a new one gets its own length.
    if (
      !bodiless(method, answer.status) &&
      (upstreamBody === undefined || !answer.body.equals(upstreamBody))
    ) {
      delete headers['content-encoding'];
      headers['content-length'] = String(answer.body.length);
    }
    res.writeHead(answer.status, headers);
    res.end(method === 'HEAD' ? undefined : answer.body);
  };

  /** Passes the upstream answer through as a stream, untouched but for hop-by-hop headers and links. */
  const stream = (req: IncomingMessage, res: ServerResponse, forwarded: ProxiedRequest | null) => {
    const headers = forwarded ? { ...forwarded.headers } : plainHeaders(req.headers);
    if (forwarded && (forwarded.body.length || headers['content-length'] !== undefined))
      headers['content-length'] = String(forwarded.body.length);
    const outgoing = upstream(req.method ?? 'GET', forwarded?.path ?? req.url ?? '/', headers);
    outgoing.on('response', (incoming) => {
      const skip = hopHeaders(incoming.headers);
      const raw: string[] = [];
      for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
        const name = incoming.rawHeaders[i];
        const lower = name.toLowerCase();
        if (skip.has(lower)) continue;
        const value = incoming.rawHeaders[i + 1];
        raw.push(name, lower === 'location' || lower === 'x-pagination-next' ? relink(value) : value);
      }
      res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, raw);
      incoming.pipe(res);
      incoming.on('error', () => res.destroy());
    });
    outgoing.on('error', (error) => fail(res, error));
    if (forwarded) outgoing.end(forwarded.body);
    else req.pipe(outgoing);
  };

  const fail = (res: ServerResponse, error: unknown) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const detail = `The fault proxy could not get an answer: ${error instanceof Error ? error.message : String(error)}`;
    reply(res, 'GET', problemResponse(502, 'server-error', detail));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    requests += 1;
    // A fault switched mid-request must not mix with the one this request started under.
    const active = fault;
    if (!active || (!active.request && !active.response)) {
      stream(req, res, null);
      return;
    }
    const original: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: plainHeaders(req.headers),
      body: await readAll(req),
    };
    let forwarded = original;
    if (active.request) {
      const rewritten = active.request(original);
      if (isResponse(rewritten)) {
        reply(res, original.method, rewritten);
        return;
      }
      forwarded = rewritten;
    }
    if (!active.response) {
      stream(req, res, forwarded);
      return;
    }
    const answer = await send(forwarded);
    const final = await active.response(answer, original, send);
    reply(res, original.method, final, answer.body);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => fail(res, error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `${origin}${target.pathname.replace(/\/+$/, '')}`,
    setFault(next) {
      next?.reset?.();
      fault = next;
      requests = 0;
    },
    get requests() {
      return requests;
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
        agent.destroy();
      });
    },
  };
}
