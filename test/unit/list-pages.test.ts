import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { declaredPageLimit, listOperation, staticSource } from '../../api/collections';
import type { Reply } from '../../api/operations';
import { events as eventLog } from '../../db/events-collection';
import { ajvOf } from '../../api/request-validation';
import type { OpenApiDocument } from '../../spec';
import { loadSpec, specOperations } from '../../spec';

/**
 * A list pages by default only where the document declares a default for its page_limit: the
 * server reads the size from the document, and answers without page_limit exactly as with it.
 */

const document = loadSpec();
const ajv = ajvOf(document);
const events = Array.from({ length: 2345 }, (_, i) => ({ serial: i + 1, type: 'account.updated' }));

const list = (operationId: string, items: Array<Record<string, unknown>>, doc: OpenApiDocument = document) =>
  listOperation({
    operationId,
    document: doc,
    ajv: doc === document ? ajv : ajvOf(doc),
    filters: operationId === 'events_list' ? Object.keys(eventLog.filters) : [],
    authenticated: false,
    source: staticSource(items),
  });

const ask = (operation: ReturnType<typeof list>, query: Record<string, string> = {}): Promise<Reply> =>
  operation.handle({
    params: {},
    query,
    body: undefined,
    headers: {},
    caller: undefined,
    log: undefined as unknown as Logger,
  });

/** The query of a Next link, as a request would carry it. */
const queryOf = (next: string) => Object.fromEntries(new URL(next, 'http://server.invalid').searchParams);

/** The document with events_list's page_limit schema replaced. */
function withEventsLimit(schema: Record<string, unknown>): OpenApiDocument {
  const copy = structuredClone(document);
  const op = specOperations(copy).find((o) => o.operationId === 'events_list')!.operation;
  const parameters = op.parameters as Array<Record<string, unknown>>;
  const at = parameters.findIndex((p) => p.name === 'page_limit');
  parameters[at] = { ...parameters[at], schema };
  return copy;
}

describe('lists with and without a default page size', () => {
  it('reads the default page size from the document: 1000 for events, none for the other lists', () => {
    const sizes = Object.fromEntries(
      specOperations(document)
        .filter((op) => op.operationId.endsWith('_list'))
        .map((op) => [op.operationId, declaredPageLimit(document, op)]),
    );
    assert.equal(sizes.events_list, 1000);
    const others = Object.entries(sizes).filter(([id]) => id !== 'events_list');
    assert.equal(others.length, 22);
    assert.deepEqual(
      others.filter(([, size]) => size !== undefined),
      [],
    );
  });

  it('answers a list with a default without page_limit as its first page of that size, and Next walks every item once', async () => {
    const operation = list('events_list', events);
    const first = await ask(operation);
    assert.equal(first.status, 206);
    assert.equal((first.body as unknown[]).length, 1000);
    const asked = await ask(operation, { page_limit: '1000' });
    assert.deepEqual(first, asked, 'without page_limit as with page_limit=1000');
    assert.deepEqual(
      Object.fromEntries(Object.entries(first.headers!).filter(([name]) => name !== 'X-Pagination-Next')),
      {
        'X-Pagination-Limit': '1000',
        'X-Pagination-Offset': '0',
        'X-Pagination-Items': '2345',
        'X-Pagination-Pages': '3',
        'X-Pagination-Page': '1',
        'X-Pagination-Token': first.headers!['X-Pagination-Token'],
      },
    );
    const seen = [...(first.body as Array<{ serial: number }>)];
    const sizes = [seen.length];
    let next = first.headers!['X-Pagination-Next'];
    while (next) {
      assert.match(next, /^\/events\?page_limit=1000&/);
      const page = await ask(operation, queryOf(next));
      assert.equal(page.status, 206);
      sizes.push((page.body as unknown[]).length);
      seen.push(...(page.body as Array<{ serial: number }>));
      next = page.headers!['X-Pagination-Next'];
      assert.ok(sizes.length <= 3, 'Next leads past the last page');
    }
    assert.deepEqual(sizes, [1000, 1000, 345]);
    assert.deepEqual(
      seen.map((event) => event.serial),
      events.map((event) => event.serial),
    );
  });

  it('lets an explicit page_limit win over the default', async () => {
    const page = await ask(list('events_list', events), { page_limit: '7', page_offset: '14' });
    assert.equal(page.status, 206);
    assert.deepEqual(
      (page.body as Array<{ serial: number }>).map((event) => event.serial),
      [15, 16, 17, 18, 19, 20, 21],
    );
    assert.equal(page.headers!['X-Pagination-Limit'], '7');
    assert.equal(page.headers!['X-Pagination-Pages'], String(Math.ceil(2345 / 7)));
  });

  it('answers a list without a default whole, however long', async () => {
    const many = Array.from({ length: 1500 }, (_, i) => ({ name: `extension-${i}` }));
    const whole = await ask(list('api_extensions_list', many));
    assert.equal(whole.status, 200);
    assert.equal(whole.headers, undefined);
    assert.equal((whole.body as unknown[]).length, 1500);
  });

  it('follows the document: another declared default is another page size', async () => {
    const operation = list(
      'events_list',
      events,
      withEventsLimit({ type: 'integer', minimum: 1, maximum: 1000, default: 250 }),
    );
    const first = await ask(operation);
    assert.equal(first.status, 206);
    assert.equal((first.body as unknown[]).length, 250);
    assert.equal(first.headers!['X-Pagination-Pages'], '10');
  });

  it('does not start with a default its own bounds refuse', () => {
    for (const value of [0, 1001, 2.5, '100'])
      assert.throws(
        () =>
          list(
            'events_list',
            events,
            withEventsLimit({ type: 'integer', minimum: 1, maximum: 1000, default: value }),
          ),
        /events_list declares .* as the default of page_limit, which its bounds refuse/,
      );
  });
});
