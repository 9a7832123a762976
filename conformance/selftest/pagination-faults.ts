import { PAGINATION_HEADERS, PAGING_PARAMETERS } from '../protocol';
import type { Fault } from './faults';
import type { ProxiedResponse } from './messages';
import { editQuery, getHeader, listItems, splitPath, withHeaders, withJson } from './messages';

/**
 * Faults of pagination: headers dropped or wrong, X-Pagination-Next skipping or repeating a page,
 * page tokens that never change or take anything, a 206 answered as 200, page_limit ignored.
 */

const isPage = (res: ProxiedResponse): boolean =>
  res.status === 206 && PAGINATION_HEADERS.some((name) => getHeader(res, name) !== undefined);

function intHeader(res: ProxiedResponse, name: string): number | undefined {
  const value = Number(getHeader(res, name));
  return Number.isInteger(value) ? value : undefined;
}

/** Rewrites the query of a non-empty X-Pagination-Next link, relative or absolute. */
function rewriteNext(res: ProxiedResponse, edit: (query: URLSearchParams) => void): ProxiedResponse {
  const next = getHeader(res, 'x-pagination-next');
  if (!next) return res;
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(next);
  const url = new URL(next, 'http://relative.invalid');
  edit(url.searchParams);
  const rewritten = absolute ? url.href : `${url.pathname}${url.search}`;
  return rewritten === next ? res : withHeaders(res, { 'x-pagination-next': rewritten });
}

function dropPaginationHeader(name: (typeof PAGINATION_HEADERS)[number]): Fault {
  const short = name.replace('x-pagination-', '');
  return {
    id: `pagination-drop-${short}`,
    description: `206 pages lack the X-Pagination-${short[0].toUpperCase()}${short.slice(1)} header`,
    response: (res) =>
      isPage(res) && getHeader(res, name) !== undefined ? withHeaders(res, { [name]: undefined }) : res,
  };
}

/** Changes a numeric pagination header of every page. */
function shiftPaginationHeader(id: string, description: string, name: string, by: number): Fault {
  return {
    id,
    description,
    response(res) {
      const value = intHeader(res, name);
      return isPage(res) && value !== undefined ? withHeaders(res, { [name]: String(value + by) }) : res;
    },
  };
}

/** A constant the faulty server hands out as its page token. */
const STATIC_TOKEN = '1';

export function paginationFaults(): Fault[] {
  return [
    ...PAGINATION_HEADERS.map(dropPaginationHeader),
    shiftPaginationHeader(
      'pagination-wrong-items',
      'X-Pagination-Items counts one item more than the collection holds',
      'x-pagination-items',
      1,
    ),
    shiftPaginationHeader(
      'pagination-wrong-page-number',
      'X-Pagination-Page counts from 0 instead of 1',
      'x-pagination-page',
      -1,
    ),
    {
      id: 'pagination-next-skips-page',
      description: 'X-Pagination-Next points one page too far, so a page is never visited',
      response(res) {
        const limit = intHeader(res, 'x-pagination-limit');
        if (!isPage(res) || !limit) return res;
        const offset = intHeader(res, 'x-pagination-offset') ?? 0;
        return rewriteNext(res, (query) => {
          const given = Number(query.get('page_offset'));
          const next = query.has('page_offset') && Number.isInteger(given) ? given : offset + limit;
          query.set('page_offset', String(next + limit));
        });
      },
    },
    {
      id: 'pagination-next-repeats-page',
      description: 'X-Pagination-Next points at the page just served, so walking never ends',
      response(res, req) {
        if (!isPage(res)) return res;
        const offset = intHeader(res, 'x-pagination-offset') ?? 0;
        const token = splitPath(req.path).query.get('page_token');
        return rewriteNext(res, (query) => {
          query.set('page_offset', String(offset));
          if (token === null) query.delete('page_token');
          else query.set('page_token', token);
        });
      },
    },
    {
      id: 'pagination-token-never-changes',
      description: 'X-Pagination-Token is a constant and page_token is never checked',
      request: (req) => (req.method === 'GET' ? editQuery(req, (query) => query.delete('page_token')) : req),
      response(res) {
        if (!isPage(res)) return res;
        const fixed =
          getHeader(res, 'x-pagination-token') === undefined
            ? res
            : withHeaders(res, { 'x-pagination-token': STATIC_TOKEN });
        return rewriteNext(fixed, (query) => {
          if (query.has('page_token')) query.set('page_token', STATIC_TOKEN);
        });
      },
    },
    {
      id: 'pagination-bad-token-accepted',
      description: 'a page_token the server refuses is silently dropped and the page served anyway',
      async response(res, req, forward) {
        if (req.method !== 'GET' || res.status !== 400 || !splitPath(req.path).query.has('page_token'))
          return res;
        return forward(editQuery(req, (query) => query.delete('page_token')));
      },
    },
    {
      id: 'pagination-206-as-200',
      description: 'pages are answered 200 instead of 206',
      response: (res) => (isPage(res) ? { ...res, status: 200 } : res),
    },
    {
      id: 'pagination-ignore-limit',
      description: 'page_limit is ignored: the whole collection comes back, labelled as one 206 page',
      request: (req) =>
        req.method === 'GET' && splitPath(req.path).query.has('page_limit')
          ? editQuery(req, (query) => PAGING_PARAMETERS.forEach((name) => query.delete(name)))
          : req,
      response(res, req) {
        const asked = Number(splitPath(req.path).query.get('page_limit'));
        const items = listItems(res, req, [200]);
        if (!items || !Number.isInteger(asked) || asked < 1) return res;
        return withHeaders(
          { ...res, status: 206 },
          {
            'x-pagination-limit': String(asked),
            'x-pagination-offset': '0',
            'x-pagination-items': String(items.length),
            'x-pagination-pages': String(Math.max(1, Math.ceil(items.length / asked))),
            'x-pagination-page': '1',
            'x-pagination-token': STATIC_TOKEN,
            'x-pagination-next': '',
          },
        );
      },
    },
    {
      id: 'pagination-page-gap',
      description: 'every 206 page loses its last item, leaving gaps between pages',
      response(res, req) {
        const items = listItems(res, req, [206]);
        return items?.length && isPage(res) ? withJson(res, items.slice(0, -1)) : res;
      },
    },
  ];
}
