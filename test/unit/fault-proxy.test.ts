import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { Fault } from '../../conformance/selftest/faults';
import { createFaults, FAULT_IDS, FAULTS } from '../../conformance/selftest/faults';
import type { FaultProxy } from '../../conformance/selftest/proxy';
import { startFaultProxy } from '../../conformance/selftest/proxy';

const BASE = '/api/v2';
const PAGE_TOKEN = 'tok-things';

const problem = (status: number, name: string, detail: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
  detail,
  ...extra,
});

const THINGS = [
  { id: 't1', name: 'One', state: 'production', speed: 1000, managing_account: 'acc-1' },
  { id: 't2', name: 'Two', state: 'requested', speed: 10000, managing_account: 'acc-1' },
  { id: 't3', name: 'Three', state: 'production', speed: 1000, managing_account: 'acc-1' },
  { id: 't4', name: 'Four', state: 'production', speed: 100000, managing_account: 'acc-1' },
  { id: 't5', name: 'Five', state: 'production', speed: 1000, managing_account: 'acc-2' },
];

const ACCOUNTS: Record<string, Record<string, unknown>> = {
  'acc-1': {
    id: 'acc-1',
    name: 'Primary',
    legal_name: 'Primary GmbH',
    external_ref: 'p-1',
    discoverable: false,
    metro_area_network_presence: [],
  },
  'acc-2': {
    id: 'acc-2',
    name: 'Secondary',
    legal_name: 'Secondary BV',
    external_ref: 's-2',
    discoverable: true,
    metro_area_network_presence: ['man-1'],
  },
};
const publicView = (account: Record<string, unknown>) => ({
  id: account.id,
  name: account.name,
  metro_area_network_presence: account.metro_area_network_presence,
});

const CREDENTIALS: Record<string, { secret: string; access: string; refresh: string }> = {
  k1: { secret: 's1', access: 'A1', refresh: 'R1' },
  k2: { secret: 's2', access: 'B1', refresh: 'R2' },
};
const CALLERS: Record<string, string> = { A1: 'acc-1', B1: 'acc-2' };

/** A small, correct IX-API-like server: tokens, a paginated collection, accounts and problems. */
function fakeUpstream(req: IncomingMessage, res: ServerResponse, raw: Buffer) {
  const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const url = new URL(req.url ?? '/', 'http://upstream.invalid');
  const path = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : '';
  const query = url.searchParams;

  if (req.method === 'POST' && (path === '/auth/token' || path === '/auth/refresh')) {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString()) as Record<string, unknown>;
    } catch {
      return send(400, problem(400, 'validation-error', 'The body is not JSON.', { properties: [] }));
    }
    if (path === '/auth/token') {
      const missing = ['api_key', 'api_secret'].filter((name) => typeof body[name] !== 'string');
      if (missing.length)
        return send(
          400,
          problem(400, 'validation-error', 'Fields are missing.', {
            properties: missing.map((name) => ({ name, reason: 'This field is required.' })),
          }),
        );
      const account = CREDENTIALS[String(body.api_key)];
      if (!account || account.secret !== body.api_secret)
        return send(401, problem(401, 'authentication-error', 'Wrong credentials.'));
      return send(201, { access_token: account.access, refresh_token: account.refresh });
    }
    const account = Object.values(CREDENTIALS).find((a) => a.refresh === body.refresh_token);
    if (!account) return send(401, problem(401, 'authentication-error', 'Not a refresh token.'));
    return send(201, { access_token: account.access, refresh_token: account.refresh });
  }
  if (req.method === 'GET' && path === '/health') return send(200, { status: 'pass', version: '2' });
  if (req.method === 'GET' && path === '/implementation')
    return send(200, {
      schema_version: '2.6.0',
      supported_operations: ['api_health_read', 'api_implementation_read', 'auth_token_create'],
    });

  const caller = CALLERS[(req.headers.authorization ?? '').replace(/^Bearer /, '')];
  if (!caller) return send(401, problem(401, 'authentication-error', 'No valid token.'));

  if (req.method === 'GET' && path === '/things') {
    const state = query.get('state');
    if (state !== null && !['production', 'requested'].includes(state))
      return send(
        400,
        problem(400, 'validation-error', 'Bad filter.', {
          properties: [{ name: 'state', reason: 'Not a state.' }],
        }),
      );
    const ids = query
      .getAll('id')
      .flatMap((v) => v.split(','))
      .filter(Boolean);
    const speed = query.get('speed');
    const items = THINGS.filter(
      (t) =>
        t.managing_account === caller &&
        (!ids.length || ids.includes(t.id)) &&
        (!state || t.state === state) &&
        (!speed || String(t.speed) === speed),
    );
    const fields = query.get('fields')?.split(',');
    if (fields)
      return send(
        200,
        items.map((t) => Object.fromEntries(Object.entries(t).filter(([key]) => fields.includes(key)))),
      );
    if (!query.has('page_limit')) return send(200, items);
    const limit = Number(query.get('page_limit'));
    const offset = Number(query.get('page_offset') ?? 0);
    const token = query.get('page_token');
    if (token !== null && token !== PAGE_TOKEN)
      return send(
        400,
        problem(400, 'validation-error', 'Stale token.', {
          properties: [{ name: 'page_token', reason: 'Unknown token.' }],
        }),
      );
    const next = offset + limit < items.length;
    return send(206, items.slice(offset, offset + limit), {
      'X-Pagination-Limit': String(limit),
      'X-Pagination-Offset': String(offset),
      'X-Pagination-Items': String(items.length),
      'X-Pagination-Pages': String(Math.max(1, Math.ceil(items.length / limit))),
      'X-Pagination-Page': String(Math.floor(offset / limit) + 1),
      'X-Pagination-Token': PAGE_TOKEN,
      'X-Pagination-Next': next
        ? `/things?page_limit=${limit}&page_offset=${offset + limit}&page_token=${PAGE_TOKEN}`
        : '',
    });
  }
  const thing = /^\/things\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && thing) {
    const found = THINGS.find((t) => t.id === thing[1] && t.managing_account === caller);
    return found ? send(200, found) : send(404, problem(404, 'not-found', 'No such thing.'));
  }
  // The event log of the caller's things, narrowed to one thing by `resource`.
  if (req.method === 'GET' && path === '/events') {
    const resource = query.get('resource');
    const events = THINGS.filter((t) => t.managing_account === caller)
      .map((t, index) => ({ serial: index + 1, type: 'thing.created', payload: { thing: t } }))
      .filter((event) => resource === null || event.payload.thing.id === resource);
    return send(200, events);
  }
  if (req.method === 'GET' && path === '/network-services') {
    return send(200, [
      { id: 'ns-1', managing_account: 'acc-0', consuming_account: 'acc-0', external_ref: null },
    ]);
  }
  if (req.method === 'GET' && path === '/accounts') {
    return send(
      200,
      Object.values(ACCOUNTS)
        .filter((a) => a.id === caller || a.discoverable)
        .map((a) => (a.id === caller ? a : publicView(a))),
    );
  }
  const account = /^\/accounts\/([^/]+)$/.exec(path);
  if (req.method === 'PATCH' && account && account[1] !== caller) {
    return ACCOUNTS[account[1]]?.discoverable
      ? send(403, problem(403, 'permission-denied', 'Not yours to change.'))
      : send(404, problem(404, 'not-found', 'No such account.'));
  }
  if (req.method === 'GET' && account) {
    const found = ACCOUNTS[account[1]];
    if (found?.id === caller) return send(200, found);
    if (found?.discoverable) return send(200, publicView(found));
    return send(404, problem(404, 'not-found', 'No such account.'));
  }
  return send(404, problem(404, 'not-found', 'No such path.'));
}

interface Step {
  method: string;
  path: string;
  token?: string;
  body?: unknown;
  raw?: string;
}

/** The fixed script: every fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  { method: 'POST', path: '/auth/token', body: { api_key: 'k1', api_secret: 's1' } },
  { method: 'POST', path: '/auth/token', body: {} },
  { method: 'POST', path: '/auth/token', body: { api_key: 'k1', api_secret: 'wrong' } },
  { method: 'POST', path: '/auth/token', raw: '{"api_key": ' },
  { method: 'POST', path: '/auth/refresh', body: { refresh_token: 'R1' } },
  { method: 'POST', path: '/auth/refresh', body: { refresh_token: 'A1' } },
  { method: 'GET', path: '/implementation' },
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/things', token: 'A1' },
  { method: 'GET', path: '/things?page_limit=2', token: 'A1' },
  { method: 'GET', path: `/things?page_limit=2&page_offset=2&page_token=${PAGE_TOKEN}`, token: 'A1' },
  { method: 'GET', path: '/things?page_limit=2&page_token=bogus', token: 'A1' },
  { method: 'GET', path: '/things?id=t1,t2', token: 'A1' },
  { method: 'GET', path: '/things?id=t1&id=t3', token: 'A1' },
  { method: 'GET', path: '/things?state=production', token: 'A1' },
  { method: 'GET', path: '/things?state=nonsense', token: 'A1' },
  { method: 'GET', path: '/things?unknown_param=1', token: 'A1' },
  { method: 'GET', path: '/things/t1', token: 'A1' },
  { method: 'GET', path: '/things/nope', token: 'A1' },
  { method: 'GET', path: '/nowhere', token: 'A1' },
  { method: 'GET', path: '/things' },
  { method: 'GET', path: '/things', token: 'A1x' },
  { method: 'GET', path: '/accounts', token: 'A1' },
  { method: 'GET', path: '/accounts', token: 'B1' },
  { method: 'GET', path: '/accounts/acc-1', token: 'B1' },
  { method: 'GET', path: '/things?id=t1', token: 'B1' },
  { method: 'GET', path: '/things?state=production&speed=1000', token: 'A1' },
  { method: 'GET', path: '/things?state=requested&page_limit=2', token: 'A1' },
  { method: 'GET', path: '/things?fields=id,name', token: 'A1' },
  { method: 'POST', path: '/auth/token', body: { api_key: `k1${'x'.repeat(20)}`, api_secret: 's1' } },
  { method: 'GET', path: '/network-services', token: 'B1' },
  { method: 'DELETE', path: '/things/nope', token: 'A1' },
  { method: 'PATCH', path: '/accounts/acc-2', token: 'A1', body: {} },
  { method: 'GET', path: '/events?resource=t1', token: 'A1' },
];
const LOGIN = 0;
const HEALTH = 7;

const COMPARED_HEADERS = [
  'content-type',
  'content-length',
  'x-pagination-limit',
  'x-pagination-offset',
  'x-pagination-items',
  'x-pagination-pages',
  'x-pagination-page',
  'x-pagination-token',
  'x-pagination-next',
];

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  body: string;
}

async function call(origin: string, step: Step): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (step.token) headers.authorization = `Bearer ${step.token}`;
  let body: string | undefined = step.raw;
  if (step.body !== undefined) body = JSON.stringify(step.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${origin}${BASE}${step.path}`, { method: step.method, headers, body });
  return {
    status: response.status,
    headers: Object.fromEntries(COMPARED_HEADERS.map((name) => [name, response.headers.get(name)])),
    body: Buffer.from(await response.arrayBuffer()).toString('base64'),
  };
}

/** The script's answers through the proxy under `fault`. */
async function throughProxy(proxy: FaultProxy, fault: Fault | null): Promise<Answer[]> {
  proxy.setFault(fault);
  const answers: Answer[] = [];
  for (const step of SCRIPT) answers.push(await call(new URL(proxy.url).origin, step));
  return answers;
}

/** Indexes of script steps whose answer through the proxy differs from the direct one. */
const changedSteps = (answers: Answer[], direct: Answer[]): number[] =>
  answers.flatMap((answer, index) => (isDeepStrictEqual(answer, direct[index]) ? [] : [index]));

const json = (answer: Answer): any => JSON.parse(Buffer.from(answer.body, 'base64').toString());

/** Steps a fault must leave alone, by the family its id names. */
function outOfScope(id: string): (step: Step) => boolean {
  if (id.startsWith('pagination-')) return (step) => !step.path.includes('page_');
  if (id.startsWith('filter-') || id.startsWith('query-')) return (step) => !step.path.includes('?');
  if (id.startsWith('auth-'))
    return (step) => !step.path.startsWith('/auth/') && (step.token === 'A1' || step.token === 'B1');
  if (id.startsWith('implementation-')) return (step) => step.path !== '/implementation';
  if (id.startsWith('health-')) return (step) => step.path !== '/health';
  if (id.startsWith('isolation-')) return (step) => !step.path.startsWith('/accounts') && step.token !== 'B1';
  return () => false;
}

describe('fault-injecting proxy', () => {
  let upstream: Server;
  let origin: string;
  let proxy: FaultProxy;
  let direct: Answer[];

  before(async () => {
    upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => fakeUpstream(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await startFaultProxy({ target: `${origin}${BASE}` });
    direct = [];
    for (const step of SCRIPT) direct.push(await call(origin, step));
  });

  after(async () => {
    await proxy.close();
    await new Promise<void>((resolve) => {
      upstream.close(() => resolve());
      upstream.closeAllConnections();
    });
  });

  it('keeps the target path layout in its url', () => {
    assert.match(proxy.url, /^http:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
  });

  it('passes every answer through unchanged without a fault, and counts requests', async () => {
    assert.deepEqual(changedSteps(await throughProxy(proxy, null), direct), []);
    assert.equal(proxy.requests, SCRIPT.length);
    proxy.setFault(null);
    assert.equal(proxy.requests, 0);
  });

  it('passes the answers through byte for byte', async () => {
    proxy.setFault(null);
    const answer = await call(new URL(proxy.url).origin, SCRIPT[9]);
    assert.equal(answer.status, 206);
    assert.equal(answer.headers['x-pagination-next'], direct[9].headers['x-pagination-next']);
    assert.equal(Buffer.from(answer.body, 'base64').toString(), JSON.stringify(THINGS.slice(0, 2)));
  });

  it('has at least 32 faults with distinct ids and a one-line description each', () => {
    const faults = createFaults();
    assert.ok(faults.length >= 32, `only ${faults.length} faults`);
    assert.equal(new Set(FAULT_IDS).size, FAULT_IDS.length);
    assert.deepEqual(
      faults.map((f) => f.id),
      FAULT_IDS,
    );
    for (const fault of FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
    }
  });

  it('creates fresh faults each time', () => {
    const [a, b] = [createFaults(), createFaults()];
    a.forEach((fault, index) => assert.notEqual(fault, b[index]));
  });

  const byId = (id: string) => createFaults().find((fault) => fault.id === id)!;

  it('moves the Next link one page too far, or back to the same page', async () => {
    const skipped = await throughProxy(proxy, byId('pagination-next-skips-page'));
    assert.equal(
      skipped[9].headers['x-pagination-next'],
      `/things?page_limit=2&page_offset=4&page_token=${PAGE_TOKEN}`,
    );
    const repeated = await throughProxy(proxy, byId('pagination-next-repeats-page'));
    assert.equal(repeated[9].headers['x-pagination-next'], '/things?page_limit=2&page_offset=0');
  });

  it('lets a refused token through with the last accepted one', async () => {
    const answers = await throughProxy(proxy, byId('auth-expired-token-accepted'));
    assert.equal(direct[21].status, 401);
    assert.equal(answers[21].status, 200);
    assert.deepEqual(json(answers[21]), json(direct[8]));
  });

  it("shows another account's full account instead of 404", async () => {
    const answers = await throughProxy(proxy, byId('isolation-read-foreign-account'));
    assert.equal(direct[24].status, 404);
    assert.equal(answers[24].status, 200);
    assert.deepEqual(json(answers[24]), ACCOUNTS['acc-1']);
  });

  it('starts with an empty memory whenever a fault is set', async () => {
    const fault = byId('auth-expired-token-accepted');
    await throughProxy(proxy, fault);
    proxy.setFault(fault);
    const answer = await call(new URL(proxy.url).origin, SCRIPT[21]);
    assert.equal(answer.status, 401);
    assert.equal(proxy.requests, 1);
  });

  it('answers a rewritten body with the right length', async () => {
    const answers = await throughProxy(proxy, byId('isolation-leak-sensitive'));
    const body = Buffer.from(answers[22].body, 'base64');
    assert.equal(answers[22].headers['content-length'], String(body.length));
    assert.equal(json(answers[22])[1].legal_name, 'leaked');
  });

  for (const fault of createFaults()) {
    describe(fault.id, () => {
      let changed: number[];
      before(async () => {
        changed = changedSteps(await throughProxy(proxy, fault), direct);
      });

      it('changes at least one answer', () => {
        assert.ok(changed.length > 0, `${fault.id} changed nothing`);
      });

      it('leaves unrelated requests alone', () => {
        const touchesLogin = ['auth-token-200', 'auth-token-missing-refresh', 'content-type-text-plain'];
        if (!touchesLogin.includes(fault.id)) assert.ok(!changed.includes(LOGIN), 'POST /auth/token changed');
        const touchesHealth = ['health-status-ok', 'content-type-text-plain'];
        if (!touchesHealth.includes(fault.id)) assert.ok(!changed.includes(HEALTH), 'GET /health changed');
        const untouched = outOfScope(fault.id);
        const stray = changed.filter((index) => untouched(SCRIPT[index]));
        assert.deepEqual(
          stray.map((index) => `${SCRIPT[index].method} ${SCRIPT[index].path}`),
          [],
        );
      });

      it('forgets its memory when set again', async () => {
        assert.deepEqual(changedSteps(await throughProxy(proxy, fault), direct), changed);
      });
    });
  }
});
