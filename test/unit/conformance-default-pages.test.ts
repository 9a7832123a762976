import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectionChecks } from '../../conformance/checks/collections';
import type { CheckResult } from '../../conformance/model';
import { runCheck } from '../../conformance/runner';
import { Suite } from '../../conformance/suite';
import { loadSpec } from '../../spec';

/**
 * The suite reads a list whole as the document says: where page_limit declares a default page
 * size (the event log's 1000), by walking the pages from the first one asked without page_limit.
 * A small server holds 2,345 events and two extensions, and answers as `mode` says.
 */

type Mode =
  | 'correct'
  /** The event log answered whole (200) without page_limit. */
  | 'events-whole'
  /** The event log's first page of the default size holds one item too few. */
  | 'events-short-first-page'
  /** The event log's pages say another page size than the declared default. */
  | 'events-other-limit'
  /** Next of the event log's last page leads back to the first. */
  | 'events-endless'
  /** The extensions answered as a page (206) without page_limit. */
  | 'extensions-paged';

const EVENTS = Array.from({ length: 2345 }, (_, i) => ({
  serial: i + 1,
  type: 'account.updated',
  payload: {},
  timestamp: '2031-05-14T12:00:00.000Z',
  account: 'acc-1',
}));
const EXTENSIONS = ['events', 'idempotency-key'].map((name) => ({
  name,
  publisher: 'test',
  documentation_url: 'https://example.net/docs',
  base_url: 'https://example.net',
  spec_url: 'https://example.net/spec',
}));

function fakeServer(mode: () => Mode) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const path = url.pathname.replace(/^\/api\/v2/, '');
    if (req.method === 'POST' && path === '/auth/token')
      return send(201, { access_token: 'access', refresh_token: 'refresh' });
    if (path === '/implementation')
      return send(200, {
        schema_version: '2.6.0',
        supported_operations: ['events_list', 'api_extensions_list'],
      });
    const items = path === '/events' ? EVENTS : path === '/extensions' ? EXTENSIONS : undefined;
    if (!items) return send(404, { type: 'https://errors.ix-api.net/v2/not-found.html', status: 404 });
    const token = url.searchParams.get('page_token');
    if (token !== null && token !== 'tok')
      return send(400, {
        type: 'https://errors.ix-api.net/v2/validation-error.html',
        title: 'Bad Request',
        status: 400,
        properties: [{ name: 'page_token', reason: 'Unknown token.' }],
      });
    const now = mode();
    const asked = url.searchParams.get('page_limit');
    const size = path === '/events' ? (now === 'events-whole' ? undefined : 1000) : undefined;
    let limit =
      asked === null ? (now === 'extensions-paged' && path === '/extensions' ? 1000 : size) : Number(asked);
    if (limit === undefined) return send(200, items);
    const offset = Number(url.searchParams.get('page_offset') ?? 0);
    let page = items.slice(offset, offset + limit);
    if (now === 'events-short-first-page' && path === '/events' && offset === 0 && asked === null)
      page = page.slice(0, -1);
    const served = limit;
    if (now === 'events-other-limit' && path === '/events' && asked === null) limit = 999;
    const last = offset + served >= items.length;
    const next = last
      ? now === 'events-endless' && path === '/events'
        ? `${path}?page_limit=${served}&page_offset=0`
        : ''
      : `${path}?page_limit=${served}&page_offset=${offset + served}`;
    return send(206, page, {
      'x-pagination-limit': String(limit),
      'x-pagination-offset': String(offset),
      'x-pagination-items': String(items.length),
      'x-pagination-pages': String(Math.max(1, Math.ceil(items.length / served))),
      'x-pagination-page': String(Math.floor(offset / served) + 1),
      'x-pagination-token': 'tok',
      'x-pagination-next': next,
    });
  };
}

describe('conformance: lists that page by default', () => {
  const document = loadSpec();
  const checks = collectionChecks(document);
  let server: Server;
  let baseUrl: string;
  let mode: Mode = 'correct';
  /** Requests for the event log since the last check began. */
  let requests = 0;

  before(async () => {
    const handle = fakeServer(() => mode);
    server = http.createServer((req, res) => {
      if (req.url?.includes('/events')) requests += 1;
      req.resume();
      req.on('end', () => handle(req, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
  });
  after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  /** One check run against the fake server in `as`, on a suite of its own. */
  async function judge(id: string, as: Mode): Promise<CheckResult> {
    mode = as;
    requests = 0;
    const suite = new Suite({
      baseUrl,
      credentials: { primary: { api_key: 'key', api_secret: 'secret' } },
      profile: 'read',
      document,
    });
    await suite.discover();
    return runCheck(
      suite,
      checks.find((check) => check.id === id)!,
      'read',
    );
  }
  const said = (result: CheckResult) => result.findings.map((finding) => finding.message).join(' | ');

  it('says in its clause that a list with a default page size is read page by page', () => {
    const col = checks.find((check) => check.id === 'COL-events_list')!;
    assert.equal(col.title, 'GET /events lists the whole collection in pages of 1000 by default');
    assert.match(col.clause, /206, the seven X-Pagination headers, X-Pagination-Limit 1000/);
    assert.match(
      checks.find((check) => check.id === 'COL-api_extensions_list')!.clause,
      /declares no default page size answers 200/,
    );
  });

  it('passes a server answering the first page of 1000 and walks all three pages', async () => {
    const result = await judge('COL-events_list', 'correct');
    assert.equal(result.outcome, 'PASS', said(result));
    // The three pages, and all three again with an unknown parameter.
    assert.equal(requests, 6);
    const paged = await judge('PAG-events_list', 'correct');
    assert.equal(paged.outcome, 'PASS', said(paged));
    const extensions = await judge('COL-api_extensions_list', 'correct');
    assert.equal(extensions.outcome, 'PASS', said(extensions));
  });

  it('fails a server that declares a default page size but answers the whole list', async () => {
    const result = await judge('COL-events_list', 'events-whole');
    assert.equal(result.outcome, 'FAIL');
    assert.match(said(result), /GET \/events answered 200, not 206 with its first page of 1000 items/);
    assert.match(said(result), /200 is not a documented status of events_list/);
    // Every check that reads the list whole says so too.
    const paged = await judge('PAG-events_list', 'events-whole');
    assert.equal(paged.outcome, 'FAIL');
    assert.match(said(paged), /GET \/events answered 200, not 206/);
  });

  it('fails a first page that is not of the default size, or says another size', async () => {
    const short = await judge('COL-events_list', 'events-short-first-page');
    assert.equal(short.outcome, 'FAIL');
    assert.match(said(short), /the first page holds 999 items, not 1000/);
    const other = await judge('COL-events_list', 'events-other-limit');
    assert.equal(other.outcome, 'FAIL');
    assert.match(said(other), /X-Pagination-Limit says 999, the declared default page size is 1000/);
  });

  it('stops following a Next that leads past the last page, and fails it', async () => {
    const result = await judge('COL-events_list', 'events-endless');
    assert.equal(result.outcome, 'FAIL');
    assert.match(
      said(result),
      /X-Pagination-Next still leads on after 3 page\(s\); X-Pagination-Pages says 3/,
    );
  });

  it('fails a server that declares no default page size but answers a page', async () => {
    const result = await judge('COL-api_extensions_list', 'extensions-paged');
    assert.equal(result.outcome, 'FAIL');
    assert.match(said(result), /GET \/extensions answered 206, not 200 with the whole list/);
  });
});
