import type { IncomingMessage } from 'node:http';

/** The media type of a request without parameters; tolerates the stray `;` of `application/json;`. */
export function mediaTypeOf(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** JSON media types (`application/json`, `application/merge-patch+json`, any `+json`). */
export function isJsonRequest(req: IncomingMessage): boolean {
  const type = mediaTypeOf(req);
  return type === 'application/json' || /^application\/[\w.-]+\+json$/.test(type);
}
