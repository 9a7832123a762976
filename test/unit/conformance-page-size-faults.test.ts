import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CIRCUIT_FAULTS } from '../../conformance/selftest/circuit-faults';
import { CONFIG_FAULTS } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULT_IDS } from '../../conformance/selftest/faults';
import { jsonResponse } from '../../conformance/selftest/messages';
import { createPageSizeFaults, PAGE_SIZE_FAULTS } from '../../conformance/selftest/page-size-faults';
import { RETRY_FAULTS } from '../../conformance/selftest/retry-faults';
import { SESSION_FAULTS } from '../../conformance/selftest/session-faults';
import type { Step } from '../support/fault-script';
import { changedSteps, json, scriptedExchange, SCRIPT_BASE } from '../support/fault-script';

/** 2,345 events, which the document pages by 1000 by default, and three accounts, which it does not. */
const EVENTS = Array.from({ length: 2345 }, (_, i) => ({ serial: i + 1, type: 'account.updated' }));
const ACCOUNTS = ['a1', 'a2', 'a3'].map((id) => ({ id, name: id }));

/** A small exchange answering its lists as the document says: events in pages, accounts whole. */
function fakeExchange() {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    const path = url.pathname.slice(SCRIPT_BASE.length);
    const items = path === '/events' ? EVENTS : path === '/accounts' ? ACCOUNTS : undefined;
    if (req.method !== 'GET' || !items) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end('{}');
    }
    const asked = url.searchParams.get('page_limit');
    const limit = asked === null ? (path === '/events' ? 1000 : undefined) : Number(asked);
    if (limit === undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(items));
    }
    const offset = Number(url.searchParams.get('page_offset') ?? 0);
    res.writeHead(206, {
      'content-type': 'application/json',
      'x-pagination-limit': String(limit),
      'x-pagination-offset': String(offset),
      'x-pagination-items': String(items.length),
      'x-pagination-pages': String(Math.max(1, Math.ceil(items.length / limit))),
      'x-pagination-page': String(Math.floor(offset / limit) + 1),
      'x-pagination-token': 'tok',
      'x-pagination-next':
        offset + limit < items.length ? `${path}?page_limit=${limit}&page_offset=${offset + limit}` : '',
    });
    return res.end(JSON.stringify(items.slice(offset, offset + limit)));
  };
  return { handle, reset: () => undefined };
}

const SCRIPT: Step[] = [
  { method: 'GET', path: '/events' },
  { method: 'GET', path: '/events?page_limit=10&page_offset=20' },
  { method: 'GET', path: '/accounts' },
  { method: 'GET', path: '/accounts?page_limit=2' },
  { method: 'GET', path: '/events?type=account.updated' },
];

describe('faults in what a list answers without page_limit', () => {
  const harness = scriptedExchange(fakeExchange(), SCRIPT);
  const throughProxy = (fault: Fault | null) => harness.throughProxy(fault);
  before(() => harness.start());
  after(() => harness.stop());
  const byId = (id: string) => createPageSizeFaults().find((fault) => fault.id === id)!;

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), harness.direct()), []);
    assert.equal(harness.direct()[0].status, 206);
    assert.equal(json(harness.direct()[0]).length, 1000);
  });

  it('gives the faults ids of their own, judged by a read run', () => {
    const ids = PAGE_SIZE_FAULTS.map((fault) => fault.id);
    const others = [
      ...FAULT_IDS,
      ...[...CONNECTION_FAULTS, ...CONFIG_FAULTS, ...SESSION_FAULTS, ...CIRCUIT_FAULTS, ...RETRY_FAULTS].map(
        (fault) => fault.id,
      ),
    ];
    assert.equal(new Set([...ids, ...others]).size, ids.length + others.length);
    for (const fault of PAGE_SIZE_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      assert.equal(fault.full, undefined, fault.id);
    }
  });

  it('answers a list with a default page size whole (200, every item once, no pagination headers), asked without page_limit', async () => {
    const answers = await throughProxy(byId('pagination-default-ignored'));
    assert.deepEqual(changedSteps(answers, harness.direct()), [0, 4]);
    for (const index of [0, 4]) {
      assert.equal(answers[index].status, 200);
      assert.deepEqual(json(answers[index]), EVENTS);
    }
    // Asked directly: the answer drops the pagination headers of the page it was made from.
    const page = jsonResponse(206, EVENTS.slice(0, 1000));
    page.headers['x-pagination-items'] = '1000';
    page.headers['x-pagination-next'] = '';
    const req = { method: 'GET', path: `${SCRIPT_BASE}/events`, headers: {}, body: Buffer.alloc(0) };
    const whole = await byId('pagination-default-ignored').response!(page, req, () =>
      assert.fail('asked again'),
    );
    assert.equal(whole.status, 200);
    assert.deepEqual(Object.keys(whole.headers).sort(), ['content-length', 'content-type']);
  });

  it('answers a list without a default page size with a first page, asked without page_limit', async () => {
    const answers = await throughProxy(byId('pagination-default-invented'));
    assert.deepEqual(changedSteps(answers, harness.direct()), [2]);
    assert.equal(answers[2].status, 206);
    assert.deepEqual(json(answers[2]), ACCOUNTS);
  });
});
