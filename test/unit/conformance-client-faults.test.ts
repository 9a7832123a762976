import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CAUGHT_IN_READS } from '../../conformance/selftest/caught-in-reads';
import { CLIENT_FAULTS, createClientFaults } from '../../conformance/selftest/client-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULT_IDS } from '../../conformance/selftest/faults';
import type { Step } from '../support/fault-script';
import {
  changedSteps,
  describeEachFault,
  json,
  scriptedExchange,
  SCRIPT_BASE,
} from '../support/fault-script';

const problem = (status: number, name: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
  ...extra,
});

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A token shaped like a JWT that lives an hour. */
const TOKEN = `${segment({ alg: 'HS256' })}.${segment({ sub: 'a1', iat: 1_900_000_000, exp: 1_900_003_600 })}.c2ln`;

/**
 * A small exchange as the public clients meet it: account a1 with contact k1 and service s1 (a
 * mp2mp_vc); it takes every body and media type the clients send.
 */
function fakeExchange() {
  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    const path = url.pathname.slice(SCRIPT_BASE.length);
    const body = raw.length ? (JSON.parse(raw.toString()) as unknown) : undefined;
    if (req.method === 'POST' && ['/auth/token', '/auth/refresh'].includes(path))
      return send(201, { access_token: TOKEN, refresh_token: TOKEN });
    if (req.method === 'GET' && path === '/health')
      return send(200, { status: 'pass', version: '2', releaseId: '1.4.0' });
    if (req.method === 'GET' && path === '/account') return send(200, { id: 'a1', name: 'A' });
    if (req.method === 'GET' && path === '/accounts')
      return send(200, url.searchParams.has('external_ref') ? [] : [{ id: 'a1', name: 'A' }]);
    if (req.method === 'DELETE' && path === '/contacts/k1') return send(200, { id: 'k1' });
    if (req.method === 'PATCH' && path === '/network-services/s1') {
      const type = (body as { type?: unknown } | null)?.type;
      if (type !== undefined && type !== 'mp2mp_vc')
        return send(
          400,
          problem(400, 'validation-error', { properties: [{ name: 'type', reason: 'Must be mp2mp_vc.' }] }),
        );
      return send(202, { id: 's1', type: 'mp2mp_vc', ...(body as object) });
    }
    return send(404, problem(404, 'not-found'));
  };
  return { handle, reset: () => undefined };
}

const credentials = { api_key: 'k'.repeat(16), api_secret: 's'.repeat(86) };

/** The fixed script: every client fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  { method: 'DELETE', path: '/network-service-configs/x', body: null },
  { method: 'DELETE', path: '/network-services/x', body: {} },
  { method: 'DELETE', path: '/contacts/k1', body: null },
  { method: 'GET', path: '/accounts?external_ref=nobody' },
  { method: 'GET', path: '/health' },
  { method: 'POST', path: '/auth/token', body: credentials, headers: { authorization: 'Bearer stale' } },
  {
    method: 'POST',
    path: '/auth/refresh',
    body: { refresh_token: TOKEN },
    headers: { authorization: `Bearer ${TOKEN}` },
  },
  {
    method: 'POST',
    path: '/auth/token',
    body: credentials,
    headers: { 'content-type': 'application/json;' },
  },
  {
    method: 'POST',
    path: '/auth/token',
    body: credentials,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  },
  { method: 'GET', path: '/account', headers: { accept: 'application/json;' } },
  { method: 'GET', path: '/accounts' },
  { method: 'PATCH', path: '/network-services/s1', body: { display_name: 'renamed' } },
  { method: 'PATCH', path: '/network-services/s1', body: { type: 'p2mp_vc' } },
];

describe('faults in what the public IX-API clients rely on', () => {
  const harness = scriptedExchange(fakeExchange(), SCRIPT);
  const throughProxy = (fault: Fault | null) => harness.throughProxy(fault);
  before(() => harness.start());
  after(() => harness.stop());

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), harness.direct()), []);
  });

  it('gives the faults ids of their own; read faults name CLIENT- checks, the others a full run of them', () => {
    const ids = CLIENT_FAULTS.map((fault) => fault.id);
    assert.equal(new Set([...ids, ...FAULT_IDS]).size, ids.length + FAULT_IDS.length);
    for (const fault of CLIENT_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      const named = fault.full ? fault.full.only : (CAUGHT_IN_READS[fault.id] as readonly string[]);
      assert.ok(
        named.some((id) => /^CLIENT-\d{3}$/.test(id)),
        `${fault.id} names no CLIENT- check`,
      );
    }
  });

  const byId = (id: string) => createClientFaults().find((fault) => fault.id === id)!;

  it('refuses the DELETE bodies the Terraform provider sends, and answers its DELETE with nothing', async () => {
    const nulls = await throughProxy(byId('delete-null-body-refused'));
    assert.deepEqual([nulls[0].status, nulls[1].status, nulls[2].status], [400, 404, 400]);
    const empty = await throughProxy(byId('delete-empty-object-refused'));
    assert.deepEqual([empty[0].status, empty[1].status, empty[2].status], [404, 415, 200]);
    const bare = await throughProxy(byId('delete-null-body-204'));
    assert.deepEqual(bare[2], { status: 204, body: '' });
    assert.deepEqual(bare[0], harness.direct()[0]);
  });

  it('answers a filter matching nothing with 404, and /health with a version clients cannot read', async () => {
    assert.equal((await throughProxy(byId('accounts-external-ref-404')))[3].status, 404);
    assert.equal(json((await throughProxy(byId('health-version-number')))[4]).version, 2);
    assert.equal(json((await throughProxy(byId('health-version-release')))[4]).version, '2.6.0');
    const unwell = await throughProxy(byId('health-pass-503'));
    assert.equal(unwell[4].status, 503);
    assert.equal(json(unwell[4]).status, 'pass');
  });

  it('refuses an Authorization header on the auth operations, and JSON labelled with parameters', async () => {
    const bearer = await throughProxy(byId('auth-bearer-refused'));
    assert.deepEqual([bearer[5].status, bearer[6].status, bearer[7].status], [401, 401, 201]);
    const stray = await throughProxy(byId('content-type-stray-semicolon-415'));
    assert.deepEqual([stray[5].status, stray[7].status, stray[8].status], [201, 415, 201]);
    const charset = await throughProxy(byId('content-type-charset-415'));
    assert.deepEqual([charset[7].status, charset[8].status], [201, 415]);
    const accept = await throughProxy(byId('accept-stray-semicolon-406'));
    assert.deepEqual([accept[9].status, accept[10].status], [406, 200]);
  });

  it('shortens access tokens to five minutes and makes ids unfit for a path', async () => {
    const short = await throughProxy(byId('auth-short-lived-token'));
    const claims = JSON.parse(
      Buffer.from(String(json(short[5]).access_token).split('.')[1], 'base64url').toString(),
    ) as { iat: number; exp: number };
    assert.equal(claims.exp - claims.iat, 300);
    const ids = await throughProxy(byId('ids-not-url-safe'));
    assert.equal(json(ids[10])[0].id, 'a1 x/y');
  });

  it('refuses a PATCH without type, and takes one with another type as if it named none', async () => {
    const untyped = await throughProxy(byId('patch-without-type-refused'));
    assert.equal(untyped[11].status, 400);
    assert.deepEqual(json(untyped[11]).properties, [{ name: 'type', reason: 'This field is required.' }]);
    assert.equal(harness.direct()[12].status, 400);
    const ignored = await throughProxy(byId('patch-other-type-ignored'));
    assert.equal(ignored[12].status, 202);
    assert.equal(json(ignored[12]).type, 'mp2mp_vc');
  });

  describeEachFault(createClientFaults(), harness);
});
