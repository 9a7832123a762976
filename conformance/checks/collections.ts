import { isDeepStrictEqual } from 'node:util';
import type { OpenApiDocument } from '../../spec';
import type { HttpResponse } from '../http';
import { PAGINATION_HEADERS } from '../protocol';
import type { CheckContext, CheckDefinition } from '../runner';
import type { ListOperation } from '../steps/list-operations';
import { listOperations } from '../steps/list-operations';
import { pagePosition, positionProblems, wholeCollection, wholeList } from '../steps/whole-lists';

/** Walking a collection stops after this many pages; the page size grows to fit. */
const MAX_PAGES = 20;

/** Checks that read a list that pages by default page through it, which takes longer. */
const PAGED_DEADLINE_MS = 300_000;

type Item = Record<string, unknown>;

/**
 * An item's identity: its id, the serial of collections keyed by serial (events), or the name of
 * those keyed by name (extensions).
 */
export const keyOf = (item: Item): string => String(item.id ?? item.serial ?? item.name);
const idsOf = (items: readonly Item[]) => items.map(keyOf);

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
