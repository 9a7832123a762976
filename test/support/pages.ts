import assert from 'node:assert/strict';
import { declaredPageLimit } from '../../api/collections';
import { loadSpec, specOperations } from '../../spec';
import type { HttpResponse } from './http';
import { request } from './http';

const document = loadSpec();

type Item = Record<string, unknown>;

/** The default page size the document declares for the list at `path` (the event log's 1000), if any. */
export function defaultPageSizeOf(path: string): number | undefined {
  const pathname = path.split('?')[0];
  const op = specOperations(document).find((o) => o.method === 'get' && o.path === pathname);
  return op ? declaredPageLimit(document, op) : undefined;
}

/**
 * A list read whole, as `token` sees it: the 200 of one request where the document declares no
 * default page size for it; where it declares one (the event log), its pages from the first one
 * along X-Pagination-Next, each a 206 of at most that many items, no more of them than the first
 * page says there are. `send` makes the requests (a recording one, say).
 */
export async function readWhole(
  path: string,
  token: string | undefined,
  send: (path: string) => Promise<HttpResponse> = (p) => request('GET', p, { token }),
): Promise<Item[]> {
  const size = defaultPageSizeOf(path);
  let response = await send(path);
  if (size === undefined) {
    assert.equal(response.status, 200, `GET ${path}: ${response.text.slice(0, 300)}`);
    return response.body as Item[];
  }
  const items: Item[] = [];
  const pages = Number(response.headers.get('x-pagination-pages'));
  for (let page = 1; ; page += 1) {
    assert.equal(response.status, 206, `GET ${path}, page ${page}: ${response.text.slice(0, 300)}`);
    assert.equal(response.headers.get('x-pagination-limit'), String(size), `GET ${path}, page ${page}`);
    assert.ok((response.body as Item[]).length <= size);
    items.push(...(response.body as Item[]));
    const next = response.headers.get('x-pagination-next');
    if (!next) return items;
    assert.ok(page < pages, `GET ${path}: Next leads past page ${pages}`);
    response = await send(next);
  }
}

/** The event log as `token` reads it with `query` (`?type=…`), walked page by page. */
export function readEvents<Event = Item>(token: string | undefined, query = ''): Promise<Event[]> {
  return readWhole(`/events${query}`, token) as Promise<Event[]>;
}
