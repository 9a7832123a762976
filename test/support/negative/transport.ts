import { Agent, request as httpRequest } from 'node:http';
import type { HttpResponse } from '../http';
import type { WireRequest } from './wire';

/** Methods Node's client sends a body with by default, so an empty one still says `Content-Length: 0`. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Sends requests exactly as written (raw path, repeated headers, a body with any method) over a
 * pool of `sockets` kept-alive connections, which bounds how many are under way at once.
 */
export function createTransport(baseUrl: string, sockets: number) {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  return {
    send(wire: WireRequest): Promise<HttpResponse> {
      // A header given twice goes out as two lines.
      const headers: Record<string, string | string[]> = {};
      const add = (name: string, value: string) => {
        const key = Object.keys(headers).find((known) => known.toLowerCase() === name.toLowerCase()) ?? name;
        const before = headers[key];
        headers[key] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
      };
      for (const [name, value] of wire.headers) add(name, value);
      if (wire.body !== undefined || BODY_METHODS.has(wire.method))
        add('Content-Length', String(wire.body?.length ?? 0));
      return new Promise((resolve, reject) => {
        const outgoing = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            method: wire.method,
            path: `${url.pathname}${wire.path}`,
            headers,
            agent,
          },
          (incoming) => {
            const chunks: Buffer[] = [];
            incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
            incoming.on('error', reject);
            incoming.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              const responseHeaders = new Headers();
              for (const [name, value] of Object.entries(incoming.headers))
                if (value !== undefined)
                  responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
              let body: unknown;
              try {
                body = text ? JSON.parse(text) : undefined;
              } catch {
                body = undefined;
              }
              resolve({ status: incoming.statusCode ?? 0, headers: responseHeaders, text, body });
            });
          },
        );
        outgoing.on('error', reject);
        outgoing.end(wire.body);
      });
    },
    close(): void {
      agent.destroy();
    },
  };
}
