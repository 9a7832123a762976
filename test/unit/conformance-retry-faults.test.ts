import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CIRCUIT_FAULTS } from '../../conformance/selftest/circuit-faults';
import { CONFIG_FAULTS } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULT_IDS } from '../../conformance/selftest/faults';
import { createRetryFaults, RETRY_FAULTS } from '../../conformance/selftest/retry-faults';
import { startFaultProxy } from '../../conformance/selftest/proxy';
import { SESSION_FAULTS } from '../../conformance/selftest/session-faults';
import type { Step } from '../support/fault-script';
import { changedSteps, json, scriptedExchange, SCRIPT_BASE } from '../support/fault-script';

const problem = (status: number, name: string) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
});

type Resource = Record<string, unknown>;

/**
 * A small exchange that keeps Idempotency-Keys: a create repeated with its key gets the first
 * answer, the key with another body a 422; contacts are listed by external_ref.
 */
function fakeExchange() {
  let contacts: Resource[];
  let keys: Map<string, { body: string; answer: Resource }>;
  const reset = () => {
    contacts = [];
    keys = new Map();
  };
  reset();

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    const path = url.pathname.slice(SCRIPT_BASE.length);
    const key = req.headers['idempotency-key'] as string | undefined;
    if (path === '/contacts' && req.method === 'POST') {
      const body = raw.toString();
      const earlier = key === undefined ? undefined : keys.get(key);
      if (earlier)
        return earlier.body === body
          ? send(201, earlier.answer)
          : send(422, problem(422, 'idempotency-key-reused'));
      const contact = { ...(JSON.parse(body) as Resource), id: `c${contacts.length + 1}`, name: 'Contact' };
      contacts.push(contact);
      if (key !== undefined) keys.set(key, { body, answer: contact });
      return send(201, contact);
    }
    if (path === '/contacts' && req.method === 'GET')
      return send(
        200,
        contacts.filter((c) => c.external_ref === url.searchParams.get('external_ref')),
      );
    if (path === '/health') return send(200, { status: 'pass', version: '2' });
    return send(404, problem(404, 'not-found'));
  };
  return { handle, reset };
}

const create = (ref: string, key?: string): Step => ({
  method: 'POST',
  path: '/contacts',
  body: { external_ref: ref },
  headers: key === undefined ? undefined : { 'idempotency-key': key },
});
const health: Step = { method: 'GET', path: '/health' };

/** The fixed script: every retry fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  create('a', 'k1'),
  create('a', 'k1'),
  create('b', 'k1'),
  create('a', 'k2'),
  { method: 'DELETE', path: '/contacts/none', headers: { 'idempotency-key': '"k3"' } },
  { method: 'GET', path: '/contacts?external_ref=a' },
  { method: 'GET', path: '/contacts?external_ref=b' },
  ...Array.from({ length: 100 }, () => health),
];

describe('faults in retries: rate limits and Idempotency-Key', () => {
  const harness = scriptedExchange(fakeExchange(), SCRIPT);
  const throughProxy = (fault: Fault | null) => harness.throughProxy(fault);
  const byId = (id: string) => createRetryFaults().find((fault) => fault.id === id)!;
  before(() => harness.start());
  after(() => harness.stop());

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), harness.direct()), []);
    assert.deepEqual(
      harness
        .direct()
        .slice(0, 7)
        .map((answer) => answer.status),
      [201, 201, 422, 201, 404, 200, 200],
    );
  });

  it('gives the faults ids of their own; those of Idempotency-Key are judged by a full run of IDEM checks', () => {
    const ids = RETRY_FAULTS.map((fault) => fault.id);
    const others = [
      ...FAULT_IDS,
      ...CONNECTION_FAULTS.map((fault) => fault.id),
      ...CONFIG_FAULTS.map((fault) => fault.id),
      ...SESSION_FAULTS.map((fault) => fault.id),
      ...CIRCUIT_FAULTS.map((fault) => fault.id),
    ];
    assert.equal(new Set([...ids, ...others]).size, ids.length + others.length);
    for (const fault of RETRY_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      if (fault.id.startsWith('throttle-') || fault.id === 'idempotency-quoted-key-refused')
        assert.equal(fault.full, undefined, fault.id);
      else
        assert.ok(
          fault.full?.only.every((id) => /^IDEM-\d{3}$/.test(id)),
          fault.id,
        );
    }
  });

  it('throttles a few requests, without Retry-After or not as a problem', async () => {
    const bare = await throughProxy(byId('throttle-without-retry-after'));
    const throttled = changedSteps(bare, harness.direct());
    assert.deepEqual(throttled, [11, 39, 89]);
    assert.equal(bare[11].status, 429);
    assert.equal(json(bare[11]).status, 429, 'a problem, only without Retry-After');
    const page = await throughProxy(byId('throttle-not-a-problem'));
    assert.deepEqual(changedSteps(page, harness.direct()), throttled);
    assert.equal(page[11].status, 429);
    assert.match(page[11].body, /^<html>/);
  });

  it('refuses a quoted key, and loses every key on the way', async () => {
    const quoted = await throughProxy(byId('idempotency-quoted-key-refused'));
    assert.deepEqual(changedSteps(quoted, harness.direct()), [4]);
    assert.equal(quoted[4].status, 400);
    const dropped = await throughProxy(byId('idempotency-key-dropped'));
    assert.deepEqual(
      dropped
        .slice(0, 4)
        .map((answer): unknown[] => [
          answer.status,
          answer.status === 201 ? (json(answer) as Resource).id : null,
        ]),
      [
        [201, 'c1'],
        [201, 'c2'],
        [201, 'c3'],
        [201, 'c4'],
      ],
    );
    assert.equal(json(dropped[5]).length, 3);
  });

  it('answers a repetition with another body, and carries out a reused key with another body', async () => {
    const replayed = await throughProxy(byId('idempotency-replay-other-body'));
    assert.deepEqual(changedSteps(replayed, harness.direct()), [1]);
    assert.equal(json(replayed[1]).name, 'Contact (replayed)');
    assert.equal(json(replayed[1]).id, 'c1');
    const reused = await throughProxy(byId('idempotency-reuse-accepted'));
    assert.equal(reused[2].status, 201);
    assert.equal(json(reused[6]).length, 1);
  });

  it('answers the same body under a new key with the first answer', async () => {
    const keyed = await throughProxy(byId('idempotency-keyed-by-body'));
    assert.deepEqual(changedSteps(keyed, harness.direct()), [3, 5]);
    assert.equal(json(keyed[3]).id, 'c1');
    assert.equal(json(keyed[5]).length, 1);
  });

  it('carries out copies that arrive while the first with their key runs, and only those', async function () {
    this.timeout(15_000);
    const fault = byId('idempotency-concurrent-doubles');
    assert.deepEqual(changedSteps(await throughProxy(fault), harness.direct()), [], 'one after another');
    const exchange = fakeExchange();
    const upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => exchange.handle(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const proxy = await startFaultProxy({
      target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}${SCRIPT_BASE}`,
    });
    try {
      const copies = async () => {
        const answers = await Promise.all(
          [1, 2, 3].map(() =>
            fetch(`${proxy.url}/contacts`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'idempotency-key': 'k-at-once' },
              body: JSON.stringify({ external_ref: 'x' }),
            }).then((response) => response.json() as Promise<Resource>),
          ),
        );
        return new Set(answers.map((answer) => answer.id)).size;
      };
      proxy.setFault(null);
      assert.equal(await copies(), 1, 'without the fault, one contact');
      exchange.reset();
      proxy.setFault(fault);
      assert.equal(await copies(), 3, 'with it, one contact a copy');
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => {
        upstream.close(() => resolve());
        upstream.closeAllConnections();
      });
    }
  });

  for (const fault of createRetryFaults().filter((f) => f.id !== 'idempotency-concurrent-doubles')) {
    it(`${fault.id} forgets its memory when set again`, async () => {
      const once = changedSteps(await throughProxy(fault), harness.direct());
      assert.ok(once.length > 0, `${fault.id} changed nothing`);
      assert.deepEqual(changedSteps(await throughProxy(fault), harness.direct()), once);
    });
  }
});
