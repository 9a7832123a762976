import { isDeepStrictEqual } from 'node:util';
import type { OpenApiDocument } from '../../spec';
import { operationParameters, queryParameter, specOperations } from '../../spec';
import type { HttpResponse } from '../http';
import { COMMON_PARAMETERS, PAGINATION_HEADERS } from '../protocol';
import type { CheckContext, CheckDefinition } from '../runner';
import type { Role } from '../suite';

/** Walking a collection stops after this many pages; the page size grows to fit. */
const MAX_PAGES = 20;

/**
 * Reading a list that pages by default follows X-Pagination-Next at most as many pages as its
 * first page says there are, or this many where it does not say.
 */
const MAX_DEFAULT_PAGES = 100;

/** Checks that read a list that pages by default page through it, which takes longer. */
const PAGED_DEADLINE_MS = 300_000;

type Item = Record<string, unknown>;

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

/**
 * An item's identity: its id, the serial of collections keyed by serial (events), or the name of
 * those keyed by name (extensions).
 */
export const keyOf = (item: Item): string => String(item.id ?? item.serial ?? item.name);
const idsOf = (items: readonly Item[]) => items.map(keyOf);

interface ListOperation {
  list: string;
  read?: string;
  path: string;
  filters: Array<{ name: string; type?: string; enumValues?: unknown[] }>;
  /** Whether the operation declares the `fields` projection parameter. */
  projectable: boolean;
  /** The default page size its page_limit declares: without page_limit it answers that first page. */
  defaultPageLimit?: number;
}

/** Every list operation of the document with its read operation and its filters. */
export function listOperations(document: OpenApiDocument): ListOperation[] {
  const all = specOperations(document);
  return all
    .filter(
      (op) => op.method === 'get' && !op.path.includes('{') && op.operation.responses['206'] !== undefined,
    )
    .map((op) => {
      const parameters = operationParameters(document, op.path, op.method, op.operation, 'query').map(
        ([parameter]) => parameter,
      );
      return {
        list: op.operationId,
        read: all.find((other) => other.method === 'get' && other.path === `${op.path}/{id}`)?.operationId,
        path: op.path,
        filters: parameters
          .filter((parameter) => !COMMON_PARAMETERS.has(parameter.name))
          .map((parameter) => {
            const schema = (parameter.schema ?? {}) as { type?: string; enum?: unknown[] };
            return { name: parameter.name, type: schema.type, enumValues: schema.enum };
          }),
        projectable: parameters.some((parameter) => parameter.name === 'fields'),
        defaultPageLimit: defaultPageLimit(document, op.operationId),
      };
    });
}

/**
 * The pages from `first` on, following X-Pagination-Next at most `maxPages` times; each page
 * is held to the document. Stops early at a page that is not a 206, saying what it answered.
 */
async function walkNext(
  t: CheckContext,
  operationId: string,
  first: HttpResponse,
  maxPages: number,
): Promise<{ pages: HttpResponse[]; refusedWith?: number }> {
  const pages = [first];
  const token = await t.token();
  let next = first.headers['x-pagination-next'];
  for (let page = 1; next && page <= maxPages; page += 1) {
    const response = await t.send({ method: 'GET', path: next, token });
    t.contract(operationId, response);
    if (response.status !== 206) return { pages, refusedWith: response.status };
    pages.push(response);
    next = response.headers['x-pagination-next'];
  }
  return { pages };
}

interface PagePosition {
  offset: number;
  page: number;
  pages: number;
}

const pagePosition = (response: { headers: Record<string, string | undefined> }): PagePosition => ({
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

function sameValue(actual: unknown, wanted: unknown): boolean {
  return String(actual) === String(wanted);
}

const isScalar = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value);

interface Condition {
  name: string;
  value: unknown;
}

const query = (conditions: readonly Condition[]) =>
  conditions.map((c) => `${encodeURIComponent(c.name)}=${encodeURIComponent(String(c.value))}`).join('&');

const matching = (items: readonly Item[], conditions: readonly Condition[]) =>
  items.filter((item) => conditions.every((c) => sameValue(item[c.name], c.value)));

/**
 * Two property filters whose conjunction differs from each of them alone, so that a server
 * applying only one of them, or either of them, shows. Undefined when the data has no such pair.
 */
export function distinguishingPair(
  items: readonly Item[],
  filters: readonly string[],
): Condition[] | undefined {
  for (const item of items.slice(0, 50)) {
    const conditions = filters
      .filter((name) => isScalar(item[name]))
      .map((name) => ({ name, value: item[name] }));
    for (const [i, first] of conditions.entries()) {
      for (const second of conditions.slice(i + 1)) {
        const both = matching(items, [first, second]).length;
        if (both < matching(items, [first]).length && both < matching(items, [second]).length)
          return [first, second];
      }
    }
  }
  return undefined;
}

/** A property filter that keeps at least two items but not all of them, to page through. */
function narrowingCondition(items: readonly Item[], filters: readonly string[]): Condition | undefined {
  for (const name of filters) {
    const counts = new Map<string, number>();
    for (const item of items)
      if (isScalar(item[name])) counts.set(String(item[name]), (counts.get(String(item[name])) ?? 0) + 1);
    for (const [value, count] of counts) {
      if (count >= 2 && count < items.length)
        return { name, value: items.find((item) => String(item[name]) === value)![name] };
    }
  }
  return undefined;
}

/** What COL- holds a list to: the whole collection without page_limit, at once or in default pages. */
function wholeClause(op: ListOperation): { title: string; clause: string } {
  const size = op.defaultPageLimit;
  if (size === undefined)
    return {
      title: `GET ${op.path} lists the whole collection`,
      clause:
        'Collections: without page_limit a list whose page_limit declares no default page size answers 200 with every item as a JSON array, each valid against the schema.',
    };
  return {
    title: `GET ${op.path} lists the whole collection in pages of ${size} by default`,
    clause: `Collections: a list whose page_limit declares a default page size (here ${size}) answers without page_limit with its first page of that size: 206, the seven X-Pagination headers, X-Pagination-Limit ${size}; following X-Pagination-Next from it visits every item once, each valid against the schema.`,
  };
}

/** The generated checks of one list operation: contract, pagination, filters, reads. */
function checksFor(op: ListOperation): CheckDefinition[] {
  // Reading a list that pages by default takes a request a page.
  const deadlineMs = op.defaultPageLimit === undefined ? undefined : PAGED_DEADLINE_MS;
  const checks: CheckDefinition[] = [
    {
      id: `COL-${op.list}`,
      ...wholeClause(op),
      operations: [op.list],
      safety: 'read',
      deadlineMs,
      async run(t) {
        const items = await wholeCollection(t, op.list);
        const ids = idsOf(items);
        t.must(new Set(ids).size === ids.length, 'the list holds an item twice');
        const unknown = await wholeList(t, op.list, { query: 'conformance_unknown_parameter=1' });
        t.must(
          isDeepStrictEqual(idsOf(unknown), ids),
          'an unknown query parameter changed the result; it must be ignored',
        );
      },
    },
    {
      id: `PAG-${op.list}`,
      title: `GET ${op.path} pages with 206 and the pagination headers`,
      clause:
        'Pagination: with page_limit a list answers 206 with the seven X-Pagination headers (offset, page counted from 1, number of pages); following X-Pagination-Next visits every item once; a bad page_token is a 400.',
      operations: [op.list],
      safety: 'read',
      deadlineMs,
      async run(t) {
        const items = await wholeCollection(t, op.list);
        if (items.length < 2)
          t.inconclusive(
            `the collection has ${items.length} item(s); paging needs two`,
            `two items or more in ${op.path}`,
          );
        const limit = Math.max(1, Math.ceil(items.length / MAX_PAGES));
        const first = await t.call(op.list, { query: `page_limit=${limit}` });
        t.must(first.status === 206, `page_limit answered ${first.status}, not 206`);
        for (const header of PAGINATION_HEADERS) {
          t.must(first.headers[header] !== undefined, `the ${header} header is missing`);
        }
        t.must(
          first.headers['x-pagination-items'] === String(items.length),
          `X-Pagination-Items says ${first.headers['x-pagination-items']}, the collection has ${items.length}`,
        );
        t.must(
          first.headers['x-pagination-limit'] === String(limit),
          `X-Pagination-Limit says ${first.headers['x-pagination-limit']}, asked for ${limit}`,
        );
        t.must(
          Array.isArray(first.body) && (first.body as Item[]).length === Math.min(limit, items.length),
          `the first page holds ${Array.isArray(first.body) ? first.body.length : 'no'} items, not ${Math.min(limit, items.length)}`,
        );
        const { pages, refusedWith } = await walkNext(t, op.list, first, MAX_PAGES + 1);
        if (refusedWith !== undefined) t.must(false, `a Next page answered ${refusedWith}`);
        const seen = pages.flatMap((page) => idsOf(t.items(page)));
        const positions = pages.map(pagePosition);
        positionProblems(positions, limit, items.length).forEach((problem) => t.must(false, problem));
        t.must(
          isDeepStrictEqual(seen, idsOf(items)),
          `walking X-Pagination-Next visited ${seen.length} items (${new Set(seen).size} distinct), the collection has ${items.length}`,
        );
        const bad = await t.call(op.list, {
          query: `page_limit=${limit}&page_token=conformance-not-a-token`,
        });
        t.must(bad.status === 400, `an invalid page_token answered ${bad.status}, not 400`);
      },
    },
    {
      id: `FLT-${op.list}`,
      title: `GET ${op.path} filters by id and by its properties`,
      clause:
        'Filters: id takes several ids (a,b and repeated); a filter named after a property keeps exactly the items with that value; a bad value is a 400.',
      operations: [op.list],
      safety: 'read',
      deadlineMs,
      async run(t) {
        const items = await wholeCollection(t, op.list);
        if (!items.length)
          t.inconclusive('the collection is empty; there is nothing to filter', `an item in ${op.path}`);
        const wanted = idsOf(items).slice(0, 2);
        const comma = idsOf(
          await wholeList(t, op.list, { query: `id=${wanted.map(encodeURIComponent).join(',')}` }),
        );
        t.must(isDeepStrictEqual(comma, wanted), `id=a,b gave ${JSON.stringify(comma)}`);
        const repeated = idsOf(
          await wholeList(t, op.list, {
            query: wanted.map((id) => `id=${encodeURIComponent(id)}`).join('&'),
          }),
        );
        t.must(isDeepStrictEqual(repeated, wanted), `id=a&id=b gave ${JSON.stringify(repeated)}`);
        let tested = 0;
        for (const filter of op.filters) {
          const sample = items.find((item) =>
            ['string', 'number', 'boolean'].includes(typeof item[filter.name]),
          );
          if (!sample) continue;
          tested += 1;
          const value = sample[filter.name];
          const found = await wholeList(t, op.list, {
            query: `${encodeURIComponent(filter.name)}=${encodeURIComponent(String(value))}`,
          });
          t.must(
            found.every((item) => sameValue(item[filter.name], value)),
            `${filter.name}=${String(value)} kept items with other values`,
          );
          t.must(
            idsOf(found).includes(keyOf(sample)),
            `${filter.name}=${String(value)} lost item ${keyOf(sample)}`,
          );
          const expected = items.filter((item) => sameValue(item[filter.name], value)).length;
          t.must(
            found.length === expected,
            `${filter.name}=${String(value)} gave ${found.length} items, ${expected} match`,
          );
        }
        const typed = op.filters.find((f) => f.type === 'integer' || f.enumValues);
        if (typed) {
          tested += 1;
          const bad = await t.call(op.list, { query: `${typed.name}=conformance-not-valid` });
          t.must(bad.status === 400, `${typed.name}=conformance-not-valid answered ${bad.status}, not 400`);
        }
        t.should(
          tested > 0 || !op.filters.length,
          'no filter could be tried: no item has a value for any of them',
        );
      },
    },
    {
      id: `CMB-${op.list}`,
      title: `GET ${op.path} combines filters with each other and with pagination`,
      clause:
        'Filters: several filters keep only the items that match all of them; filtered lists page like any other, counting and walking only the matching items.',
      operations: [op.list],
      safety: 'read',
      deadlineMs,
      async run(t) {
        if (!op.filters.length) t.notApplicable(`${op.list} declares no property filters`);
        const items = await wholeCollection(t, op.list);
        const names = op.filters.map((filter) => filter.name);
        let tried = 0;
        const pair = distinguishingPair(items, names);
        if (pair) {
          tried += 1;
          const found = idsOf(await wholeList(t, op.list, { query: query(pair) }));
          const expected = idsOf(matching(items, pair));
          t.must(
            isDeepStrictEqual(found, expected),
            `${query(pair)} gave ${found.length} items; ${expected.length} match both filters`,
          );
        }
        const pagedFilter = async (filter: string, expected: string[]) => {
          const first = await t.call(op.list, { query: `${filter}&page_limit=1` });
          t.must(first.status === 206, `a filtered page answered ${first.status}, not 206`);
          t.must(
            first.headers['x-pagination-items'] === String(expected.length),
            `${filter} with page_limit=1 says X-Pagination-Items ${first.headers['x-pagination-items']}; ${expected.length} items match`,
          );
          const { pages } = await walkNext(t, op.list, first, expected.length);
          const seen = pages.flatMap((page) => idsOf(t.items(page)));
          t.must(
            isDeepStrictEqual(seen, expected),
            `walking the filtered pages visited ${seen.length} items; ${expected.length} match ${filter}`,
          );
        };
        const narrowing = narrowingCondition(items, names);
        if (narrowing) {
          tried += 1;
          await pagedFilter(query([narrowing]), idsOf(matching(items, [narrowing])));
        } else if (items.length >= 3 && items.every((item) => typeof item.id === 'string')) {
          // No property value is shared by some items and not others: the id filter keeps two.
          tried += 1;
          const two = idsOf(items.slice(0, 2));
          await pagedFilter(`id=${two.map(encodeURIComponent).join(',')}`, two);
        }
        if (!tried)
          t.inconclusive(
            `the collection has ${items.length} item(s) and none share a filtered value; combining filters needs three`,
            `three items or more in ${op.path}`,
          );
      },
    },
  ];
  if (op.projectable) {
    checks.push({
      id: `FLD-${op.list}`,
      title: `GET ${op.path} projects items onto the requested fields`,
      clause: 'Collections: fields=a,b returns each item with only the named properties.',
      operations: [op.list],
      safety: 'read',
      deadlineMs,
      async run(t) {
        const items = await wholeCollection(t, op.list);
        if (!items.length)
          t.inconclusive('the collection is empty; there is nothing to project', `an item in ${op.path}`);
        const wanted = ['id', 'name'];
        const found = await wholeList(t, op.list, { query: `fields=${wanted.join(',')}` });
        t.must(
          found.length === items.length,
          `fields changed the number of items (${found.length} of ${items.length})`,
        );
        // A polymorphic item keeps its discriminator, which says how to read the rest.
        const extra = new Set(
          found.flatMap((item) => Object.keys(item).filter((key) => !wanted.includes(key) && key !== 'type')),
        );
        t.must(extra.size === 0, `fields=${wanted.join(',')} still returns ${[...extra].join(', ')}`);
        const lost = found.filter((item, i) =>
          wanted.some((key) => key in (items[i] ?? {}) && !(key in item)),
        );
        t.must(
          lost.length === 0,
          `fields=${wanted.join(',')} dropped requested properties of ${lost.length} item(s)`,
        );
      },
    });
  }
  if (op.read) {
    const read = op.read;
    checks.push({
      id: `READ-${read}`,
      title: `GET ${op.path}/{id} reads what the list shows`,
      clause: 'Resources: a resource read by id equals its list item; an unknown id is a 404 problem.',
      operations: [read, op.list],
      safety: 'read',
      deadlineMs,
      async run(t) {
        const items = await wholeCollection(t, op.list);
        for (const item of items.slice(0, 3)) {
          const response = await t.call(read, { id: String(item.id) });
          t.must(response.status === 200, `reading ${String(item.id)} answered ${response.status}`);
          t.must(
            isDeepStrictEqual(response.body, item),
            `reading ${String(item.id)} differs from its list item`,
          );
        }
        const missing = await t.call(read, { id: 'conformance-no-such-id' });
        t.must(missing.status === 404, `an unknown id answered ${missing.status}, not 404`);
      },
    });
  }
  return checks;
}

export function collectionChecks(document: OpenApiDocument): CheckDefinition[] {
  return listOperations(document).flatMap(checksFor);
}
