import type { OpenApiDocument } from '../../spec';
import { queryParameter, specOperations } from '../../spec';
import { PAGINATION_HEADERS } from '../protocol';
import type { CheckContext } from '../runner';
import type { Role } from '../suite';

/**
 * Reading a list whole: the bare list, or the walk of its pages where the document declares a
 * default page size.
 */

type Item = Record<string, unknown>;

/**
 * Reading a list that pages by default follows X-Pagination-Next at most as many pages as its
 * first page says there are, or this many where it does not say.
 */
const MAX_DEFAULT_PAGES = 100;

/**
 * The page size the document declares as the default of an operation's page_limit, if it does:
 * such a list answers a request without page_limit with its first page of that size (206), never
 * with the whole list.
 */
export function defaultPageLimit(document: OpenApiDocument, operationId: string): number | undefined {
  const op = specOperations(document).find((candidate) => candidate.operationId === operationId);
  if (!op) return undefined;
  const value = queryParameter(document, op.path, op.method, op.operation, 'page_limit')?.schema?.default;
  return typeof value === 'number' ? value : undefined;
}

/** What reading a list whole found: its items, and every way the answers departed from the rules. */
interface WholeList {
  items: Item[];
  problems: string[];
}

/**
 * Reads a list whole, as `role` sees it with `query` (no token with a null role). Without a
 * declared default page size that is the bare JSON array of a 200; with one (`size`) it is the walk
 * from the first page, which must be a 206 of `size` items with the seven pagination headers,
 * along X-Pagination-Next, every page a 206 and the numeric headers counting as a walk from
 * offset 0 must. Answers are held to the document; nothing is recorded here, so that every check
 * reading the list can say what was wrong with it.
 */
export async function readWhole(
  t: CheckContext,
  operationId: string,
  options: { query?: string; role?: Role | null },
): Promise<WholeList> {
  const size = defaultPageLimit(t.suite.document, operationId);
  const token = options.role === null ? undefined : await t.token(options.role ?? 'primary');
  const where = `GET ${t.path(operationId, { query: options.query })}`;
  const problems: string[] = [];
  const get = async (path: string) => {
    const response = await t.send({ method: 'GET', path, token });
    const shown = response.url.replace(t.suite.http.baseUrl, '');
    problems.push(
      ...t.suite.contractProblems(operationId, response).map((problem) => `GET ${shown}: ${problem}`),
    );
    return response;
  };
  const first = await get(t.path(operationId, { query: options.query }));
  const body = Array.isArray(first.body) ? (first.body as Item[]) : undefined;
  if (size === undefined) {
    if (first.status !== 200 || !body)
      problems.push(
        `${where} answered ${first.status}${body ? '' : ' without a JSON array'}, not 200 with the whole list (its page_limit declares no default page size)`,
      );
    return { items: first.status === 200 ? (body ?? []) : [], problems };
  }
  if (first.status !== 206 || !body) {
    problems.push(
      `${where} answered ${first.status}${body ? '' : ' without a JSON array'}, not 206 with its first page of ${size} items (its page_limit declares ${size} as the default page size)`,
    );
    return { items: body ?? [], problems };
  }
  for (const header of PAGINATION_HEADERS)
    if (first.headers[header] === undefined)
      problems.push(`${where}: the first page of the default size lacks the ${header} header`);
  if (first.headers['x-pagination-limit'] !== String(size))
    problems.push(
      `${where}: X-Pagination-Limit says ${first.headers['x-pagination-limit']}, the declared default page size is ${size}`,
    );
  const declared = Number(first.headers['x-pagination-pages']);
  const bound = Number.isInteger(declared) && declared > 0 ? declared : MAX_DEFAULT_PAGES;
  const pages = [first];
  let next = first.headers['x-pagination-next'];
  while (next) {
    if (pages.length >= bound) {
      problems.push(
        `${where}: X-Pagination-Next still leads on after ${pages.length} page(s); X-Pagination-Pages says ${first.headers['x-pagination-pages']}`,
      );
      break;
    }
    const response = await get(next);
    if (response.status !== 206 || !Array.isArray(response.body)) {
      problems.push(`${where}: its Next page ${next} answered ${response.status}, not 206`);
      break;
    }
    pages.push(response);
    next = response.headers['x-pagination-next'];
  }
  const items = pages.flatMap((page) => page.body as Item[]);
  const total = Number(first.headers['x-pagination-items']);
  if (body.length !== Math.min(size, items.length))
    problems.push(
      `${where}: the first page holds ${body.length} items, not ${Math.min(size, items.length)} (the default page size ${size}, or the whole list if shorter)`,
    );
  if (items.length !== total)
    problems.push(
      `${where}: walking X-Pagination-Next visited ${items.length} items; X-Pagination-Items says ${first.headers['x-pagination-items']}`,
    );
  problems.push(
    ...positionProblems(pages.map(pagePosition), size, items.length).map((p) => `${where}: ${p}`),
  );
  return { items, problems };
}

/** Records what reading a list whole found wrong as failures of the check that reads it. */
function judged(t: CheckContext, whole: WholeList): Item[] {
  whole.problems.forEach((problem) => t.must(false, problem));
  return whole.items;
}

/**
 * A list read whole, as `role` sees it with `query`: the 200 of a list that declares no default
 * page size, the walk of the pages of one that does. What departs from that fails the check.
 */
export async function wholeList(
  t: CheckContext,
  operationId: string,
  options: { query?: string; role?: Role | null } = {},
): Promise<Item[]> {
  return judged(t, await readWhole(t, operationId, options));
}

/**
 * The whole collection as `role` sees it, read once per run (see `wholeList`) and shared by the
 * checks; each check that uses it fails for what was wrong with it.
 */
export async function wholeCollection(
  t: CheckContext,
  operationId: string,
  role: Role = 'primary',
): Promise<Item[]> {
  const key = `${operationId}|${role}`;
  let pending = t.suite.memo.get(key) as Promise<WholeList> | undefined;
  if (!pending) {
    pending = readWhole(t, operationId, { role });
    t.suite.memo.set(key, pending);
    pending.catch(() => t.suite.memo.delete(key));
  }
  return judged(t, await pending);
}

interface PagePosition {
  offset: number;
  page: number;
  pages: number;
}

export const pagePosition = (response: { headers: Record<string, string | undefined> }): PagePosition => ({
  offset: Number(response.headers['x-pagination-offset']),
  page: Number(response.headers['x-pagination-page']),
  pages: Number(response.headers['x-pagination-pages']),
});

/**
 * What the numeric headers of a walk from offset 0 must say: offsets advance by the limit, pages
 * count 1, 2, … up to X-Pagination-Pages, which is the number of pages the collection fills.
 */
export function positionProblems(walk: readonly PagePosition[], limit: number, items: number): string[] {
  const problems: string[] = [];
  const pages = Math.max(1, Math.ceil(items / limit));
  walk.forEach((position, index) => {
    const where = `page ${index + 1} of the walk`;
    if (position.offset !== index * limit)
      problems.push(`${where} says X-Pagination-Offset ${position.offset}, expected ${index * limit}`);
    if (position.page !== index + 1)
      problems.push(`${where} says X-Pagination-Page ${position.page}, expected ${index + 1}`);
    if (position.pages !== pages)
      problems.push(
        `${where} says X-Pagination-Pages ${position.pages}; ${items} items in pages of ${limit} make ${pages}`,
      );
  });
  return problems.slice(0, 5);
}
