import assert from 'node:assert/strict';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { CONNECTION_FAULTS, createConnectionFaults } from '../../conformance/selftest/connection-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULT_IDS } from '../../conformance/selftest/faults';
import type { FaultProxy } from '../../conformance/selftest/proxy';
import { startFaultProxy } from '../../conformance/selftest/proxy';
import { letter } from '../../conformance/steps/letters-of-authorisation';

const BASE = '/api/v2';
const TODAY = '2031-05-14';
const LOA = letter('The exchange LOA of c1');

const problem = (status: number, name: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
  ...extra,
});

type Resource = Record<string, unknown>;

/** A small exchange with two connections and their port reservations; `reset` restores it. */
function fakeExchange() {
  let connections: Resource[] = [];
  let reservations: Resource[] = [];
  let uploaded: Buffer | undefined;
  const reset = () => {
    connections = [
      { id: 'c1', state: 'production', external_ref: null, port_reservations: ['r1'], decommission_at: null },
      { id: 'c2', state: 'production', external_ref: null, port_reservations: ['r2'], decommission_at: null },
    ];
    reservations = [
      { id: 'r1', state: 'production', connection: 'c1', cross_connect_id: null },
      { id: 'r2', state: 'production', connection: 'c2', cross_connect_id: null },
    ];
    uploaded = undefined;
  };
  reset();

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    const path = url.pathname.slice(BASE.length);
    const json = () => (raw.length ? (JSON.parse(raw.toString()) as Resource) : {});
    const match = /^\/(connections|port-reservations)(?:\/([^/]+))?(?:\/(cancellation-policy|loa))?$/.exec(
      path,
    );
    if (!match) return send(404, problem(404, 'not-found'));
    const [, kind, id, below] = match;
    const all = kind === 'connections' ? connections : reservations;
    if (!id) {
      const connection = url.searchParams.get('connection');
      return send(
        200,
        all.filter((item) => connection === null || item.connection === connection),
      );
    }
    const resource = all.find((item) => item.id === id);
    if (!resource) return send(404, problem(404, 'not-found'));
    if (below === 'cancellation-policy') {
      const day = url.searchParams.get('decommission_at');
      if (day !== null && !/^\d{4}-\d{2}-\d{2}$/.test(day))
        return send(400, problem(400, 'validation-error', { properties: [{ name: 'decommission_at' }] }));
      const at = day !== null && day > TODAY ? day : TODAY;
      return send(200, { decommission_at: at, charged_until: `${at.slice(0, 8)}31` });
    }
    if (below === 'loa' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      return res.end(uploaded ?? LOA);
    }
    if (below === 'loa') {
      if (!raw.subarray(0, 5).equals(Buffer.from('%PDF-')))
        return send(400, problem(400, 'validation-error', { properties: [{ name: 'body' }] }));
      uploaded = raw;
      return send(202, resource);
    }
    if (req.method === 'GET') return send(200, resource);
    if (req.method === 'PATCH' || req.method === 'PUT') {
      const body = json();
      if (typeof body.external_ref === 'number')
        return send(400, problem(400, 'validation-error', { properties: [{ name: 'external_ref' }] }));
      Object.assign(resource, body);
      return send(202, resource);
    }
    if (req.method === 'DELETE') {
      const day = json().decommission_at;
      if (typeof day === 'string' && day < TODAY)
        return send(
          400,
          problem(400, 'cancellation-policy-error', { decommission_at: TODAY, charged_until: TODAY }),
        );
      Object.assign(resource, { state: 'decommission_requested', decommission_at: TODAY });
      return send(202, resource);
    }
    return send(405, problem(405, 'method-not-allowed'));
  };
  return { handle, reset };
}

interface Step {
  method: string;
  path: string;
  body?: unknown;
  raw?: Buffer;
  type?: string;
}

/** The fixed script: every connection fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  { method: 'GET', path: '/connections' },
  { method: 'GET', path: '/connections/c1' },
  { method: 'GET', path: '/port-reservations?connection=c1' },
  { method: 'GET', path: '/port-reservations/r1' },
  { method: 'GET', path: '/connections/c1/cancellation-policy' },
  { method: 'GET', path: `/connections/c1/cancellation-policy?decommission_at=2031-07-01` },
  { method: 'GET', path: '/port-reservations/r1/cancellation-policy?decommission_at=2031-02-30' },
  { method: 'GET', path: '/connections/c1/cancellation-policy?decommission_at=no-day' },
  { method: 'GET', path: '/connections/c1/loa' },
  { method: 'GET', path: '/connections/nope/loa' },
  { method: 'PATCH', path: '/connections/c1', body: { external_ref: 'changed' } },
  { method: 'GET', path: '/connections/c1' },
  { method: 'PATCH', path: '/port-reservations/r1', body: { external_ref: 42 } },
  { method: 'POST', path: '/connections/c1/loa', raw: Buffer.from('not a PDF'), type: 'application/pdf' },
  { method: 'POST', path: '/connections/c1/loa', raw: letter('mine'), type: 'application/octet-stream' },
  { method: 'DELETE', path: '/connections/c1', body: { decommission_at: '2031-01-01' } },
  { method: 'DELETE', path: '/connections/c1' },
  { method: 'GET', path: '/connections/c1' },
  { method: 'GET', path: '/port-reservations' },
];
/** The steps that only read; faults judged by a read run must change one of these. */
const READS = SCRIPT.flatMap((step, index) => (step.method === 'GET' && index < 10 ? [index] : []));

interface Answer {
  status: number;
  type: string | null;
  body: string;
}

async function call(origin: string, step: Step): Promise<Answer> {
  const headers: Record<string, string> = {};
  let body: string | Buffer | undefined = step.raw;
  if (step.body !== undefined) body = JSON.stringify(step.body);
  if (body !== undefined) headers['content-type'] = step.type ?? 'application/json';
  const response = await fetch(`${origin}${BASE}${step.path}`, { method: step.method, headers, body });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: Buffer.from(await response.arrayBuffer()).toString('base64'),
  };
}

const changedSteps = (answers: Answer[], direct: Answer[]): number[] =>
  answers.flatMap((answer, index) => (isDeepStrictEqual(answer, direct[index]) ? [] : [index]));

const json = (answer: Answer): any => JSON.parse(Buffer.from(answer.body, 'base64').toString());

describe('faults in connections and port reservations', () => {
  const exchange = fakeExchange();
  let upstream: Server;
  let proxy: FaultProxy;
  let direct: Answer[];

  /** The script's answers through the proxy under `fault`, from the exchange as it started. */
  async function throughProxy(fault: Fault | null): Promise<Answer[]> {
    exchange.reset();
    proxy.setFault(fault);
    const answers: Answer[] = [];
    for (const step of SCRIPT) answers.push(await call(new URL(proxy.url).origin, step));
    return answers;
  }

  before(async () => {
    upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => exchange.handle(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await startFaultProxy({ target: `${origin}${BASE}` });
    exchange.reset();
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

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), direct), []);
  });

  it('gives the faults ids of their own, and names checks for those a full run judges', () => {
    const ids = CONNECTION_FAULTS.map((fault) => fault.id);
    assert.equal(new Set([...ids, ...FAULT_IDS]).size, ids.length + FAULT_IDS.length);
    for (const fault of CONNECTION_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      if (fault.full) assert.ok(fault.full.only.length > 0, fault.id);
    }
  });

  const byId = (id: string) => createConnectionFaults().find((fault) => fault.id === id)!;

  it('ends the charges the day before the decommission day, a SHOULD broken', async () => {
    const fault = byId('policy-charged-before-decommission');
    assert.equal(fault.breaks, 'should');
    const answers = await throughProxy(fault);
    assert.deepEqual(json(answers[4]), { decommission_at: TODAY, charged_until: '2031-05-13' });
  });

  it('lets a malformed day through as no day, and ignores a well-formed one', async () => {
    const malformed = await throughProxy(byId('policy-malformed-day-accepted'));
    assert.equal(malformed[6].status, 200);
    assert.equal(malformed[7].status, 200);
    assert.deepEqual(malformed[5], direct[5]);
    const ignored = await throughProxy(byId('policy-day-ignored'));
    assert.equal(json(ignored[5]).decommission_at, TODAY);
  });

  it('answers 202 to a change it never makes', async () => {
    const answers = await throughProxy(byId('change-not-applied'));
    assert.equal(answers[10].status, 202);
    assert.equal(json(answers[10]).external_ref, 'changed');
    assert.equal(json(answers[11]).external_ref, null);
  });

  it('hides a resource once its cancellation was asked for', async () => {
    const answers = await throughProxy(byId('destroyed-not-found'));
    assert.equal(answers[16].status, 202);
    assert.equal(answers[17].status, 404);
  });

  it('lists a reservation of another connection under connection=c1', async () => {
    const answers = await throughProxy(byId('reservation-filter-leaks'));
    assert.deepEqual(
      json(answers[2]).map((reservation: Resource) => reservation.id),
      ['r1', 'r2'],
    );
  });

  for (const fault of createConnectionFaults()) {
    describe(fault.id, () => {
      let changed: number[];
      before(async () => {
        changed = changedSteps(await throughProxy(fault), direct);
      });

      it(fault.full ? 'changes at least one answer' : 'changes at least one answer to a read', () => {
        const within = fault.full ? changed : changed.filter((index) => READS.includes(index));
        assert.ok(within.length > 0, `${fault.id} changed nothing it is judged by`);
      });

      it('forgets its memory when set again', async () => {
        assert.deepEqual(changedSteps(await throughProxy(fault), direct), changed);
      });
    });
  }
});
