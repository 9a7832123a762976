import { loadSpec, queryParameter, specOperations } from '../../spec';
import { PAGINATION_HEADERS } from '../protocol';
import type { Fault } from './faults';
import type { ProxiedRequest, ProxiedResponse } from './messages';
import { editQuery, getHeader, pathnameOf, readJson, splitPath, withHeaders, withJson } from './messages';

/**
 * Faults in what a list answers without page_limit, which the document decides per list: the
 * whole list (200) where page_limit declares no default, the first page of the default size (206)
 * where it declares one. Each is seen by a read run.
 */

/** The page size a server that pages unasked makes up. */
const INVENTED_PAGE_LIMIT = 1000;

interface ListPath {
  path: string;
  /** The default page size the list's page_limit declares, if any. */
  size?: number;
}

let lists: ListPath[] | undefined;

/** Every list of the document (a GET without an id that may answer 206), longest path first. */
function listPaths(): ListPath[] {
  if (!lists) {
    const document = loadSpec();
    lists = specOperations(document)
      .filter((op) => op.method === 'get' && !op.path.includes('{') && op.operation.responses['206'])
      .map((op) => {
        const value = queryParameter(document, op.path, op.method, op.operation, 'page_limit')?.schema
          ?.default;
        return { path: op.path, size: typeof value === 'number' ? value : undefined };
      })
      .sort((a, b) => b.path.length - a.path.length);
  }
  return lists;
}

/** The list a GET asks for without page_limit, below whatever base path the server uses. */
function unpagedList(req: ProxiedRequest): ListPath | undefined {
  if (req.method !== 'GET' || splitPath(req.path).query.has('page_limit')) return undefined;
  const pathname = pathnameOf(req);
  return listPaths().find((list) => pathname.endsWith(list.path));
}

const itemsOf = (res: ProxiedResponse): unknown[] | undefined => {
  const body = readJson(res);
  return Array.isArray(body) ? body : undefined;
};

/** Fresh faults; use one set per proxy. */
export function createPageSizeFaults(): Fault[] {
  return [
    {
      id: 'pagination-default-ignored',
      description:
        'a list whose page_limit declares a default page size answers without page_limit with the whole list (200, no pagination headers) instead of its first page',
      async response(res, req, forward) {
        const list = unpagedList(req);
        const first = res.status === 206 ? itemsOf(res) : undefined;
        if (list?.size === undefined || !first) return res;
        // The rest, page by page from where the first page ended.
        const items = [...first];
        const total = Number(getHeader(res, 'x-pagination-items'));
        while (items.length < total) {
          const page = await forward(
            editQuery(req, (query) => {
              query.set('page_limit', String(list.size));
              query.set('page_offset', String(items.length));
            }),
          );
          const more = page.status === 206 ? itemsOf(page) : undefined;
          if (!more?.length) break;
          items.push(...more);
        }
        const unpaged = withHeaders(
          { ...res, status: 200 },
          Object.fromEntries(PAGINATION_HEADERS.map((name) => [name, undefined])),
        );
        return withJson(unpaged, items);
      },
    },
    {
      id: 'pagination-default-invented',
      description: `lists whose page_limit declares no default page size answer without page_limit with a first page of ${INVENTED_PAGE_LIMIT} (206) instead of the whole list`,
      request(req) {
        const list = unpagedList(req);
        if (!list || list.size !== undefined) return req;
        return editQuery(req, (query) => query.set('page_limit', String(INVENTED_PAGE_LIMIT)));
      },
    },
  ];
}

export const PAGE_SIZE_FAULTS: readonly Fault[] = createPageSizeFaults();
