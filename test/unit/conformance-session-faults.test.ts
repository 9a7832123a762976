import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONFIG_FAULTS } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import type { Fault } from '../../conformance/selftest/faults';
import type { Step } from '../support/fault-script';
import { changedSteps, json, scriptedExchange, SCRIPT_BASE, SECOND } from '../support/fault-script';
import { FAULT_IDS } from '../../conformance/selftest/faults';
import { createSessionFaults, SESSION_FAULTS } from '../../conformance/selftest/session-faults';

const problem = (status: number, name: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
  ...extra,
});

type Resource = Record<string, unknown>;

const aggregate = (start: string, end: string) => ({ start, end, accuracy: 0.5 });

/**
 * A small exchange: config n1 with its session f1, and the statistics of connection c1; a second
 * caller (Authorization `Bearer second`) sees none of it. `reset` restores it.
 */
function fakeExchange() {
  let sessions: string[];
  const reset = () => {
    sessions = ['f1'];
  };
  reset();

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    const path = url.pathname.slice(SCRIPT_BASE.length);
    const foreign = req.headers.authorization === SECOND;
    if (path === '/network-feature-configs' && req.method === 'POST') {
      const body = JSON.parse(raw.toString() || '{}') as Resource;
      if (body.ip === 'i4' && sessions.includes('f1'))
        return send(
          400,
          problem(400, 'unable-to-fulfill', {
            conflicts: [{ resource_type: 'network-feature-configs', resource_id: 'f1' }],
          }),
        );
      sessions.push('f2');
      return send(201, { ...body, id: 'f2', state: 'requested' });
    }
    if (foreign) return send(404, problem(404, 'not-found'));
    if (path === '/network-feature-configs/f1')
      return send(200, { id: 'f1', type: 'route_server', state: 'production', ip: 'i4' });
    if (path === '/network-service-configs/n1')
      return send(200, { id: 'n1', state: 'production', network_feature_configs: sessions });
    if (path === '/connections/c1/statistics') {
      const start = url.searchParams.get('start');
      const end = url.searchParams.get('end');
      if (start === null && end === null)
        return send(200, {
          aggregates: { PT5M: aggregate('2031-05-14T11:55:00Z', '2031-05-14T12:00:00Z') },
        });
      if (start === null || end === null || !(Date.parse(end) > Date.parse(start)))
        return send(400, problem(400, 'validation-error', { properties: [{ name: 'end' }] }));
      return send(200, { aggregates: { custom: aggregate(start, end) } });
    }
    return send(404, problem(404, 'not-found'));
  };
  return { handle, reset };
}

/** The fixed script: every session fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  { method: 'GET', path: '/network-feature-configs/f1' },
  { method: 'GET', path: '/network-service-configs/n1' },
  { method: 'POST', path: '/network-feature-configs', body: { type: 'route_server', ip: 'i4' } },
  { method: 'GET', path: '/network-feature-configs/f1', second: true },
  { method: 'GET', path: '/connections/c1/statistics' },
  {
    method: 'GET',
    path: '/connections/c1/statistics?start=2031-05-14T12:00:00Z&end=2031-05-13T12:00:00Z',
  },
];

describe('faults in route-server sessions and statistics', () => {
  const harness = scriptedExchange(fakeExchange(), SCRIPT);
  const throughProxy = (fault: Fault | null) => harness.throughProxy(fault);
  before(() => harness.start());
  after(() => harness.stop());

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), harness.direct()), []);
  });

  it('gives the faults ids of their own; those of sessions are judged by a full run of NFC checks', () => {
    const ids = SESSION_FAULTS.map((fault) => fault.id);
    const others = [
      ...FAULT_IDS,
      ...CONNECTION_FAULTS.map((fault) => fault.id),
      ...CONFIG_FAULTS.map((fault) => fault.id),
    ];
    assert.equal(new Set([...ids, ...others]).size, ids.length + others.length);
    for (const fault of SESSION_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      if (fault.id.startsWith('statistics-')) assert.equal(fault.full, undefined, fault.id);
      else
        assert.ok(fault.full?.only.length && fault.full.only.every((id) => /^NFC-\d{3}$/.test(id)), fault.id);
    }
  });

  const byId = (id: string) => createSessionFaults().find((fault) => fault.id === id)!;

  it('accepts a twin session, shows a session to another account, and hides the sessions of a config', async () => {
    const twin = await throughProxy(byId('session-twin-accepted'));
    assert.equal(harness.direct()[2].status, 400);
    assert.equal(twin[2].status, 201);
    assert.equal(json(twin[2]).ip, 'i4');
    const shown = await throughProxy(byId('session-readable-by-others'));
    assert.equal(shown[3].status, 200);
    assert.equal(json(shown[3]).id, 'f1');
    const unnamed = await throughProxy(byId('config-sessions-unnamed'));
    assert.deepEqual(json(harness.direct()[1]).network_feature_configs, ['f1']);
    assert.deepEqual(json(unnamed[1]).network_feature_configs, []);
  });

  it('answers a reversed window with the sliding windows, and claims more samples than expected', async () => {
    const reversed = await throughProxy(byId('statistics-reversed-window-accepted'));
    assert.equal(harness.direct()[5].status, 400);
    assert.equal(reversed[5].status, 200);
    assert.deepEqual(Object.keys(json(reversed[5]).aggregates), ['PT5M']);
    assert.deepEqual(reversed[4], harness.direct()[4]);
    const over = await throughProxy(byId('statistics-accuracy-over-one'));
    assert.equal(json(over[4]).aggregates.PT5M.accuracy, 1.5);
    assert.deepEqual(over[5], harness.direct()[5]);
  });

  for (const fault of createSessionFaults()) {
    describe(fault.id, () => {
      let changed: number[];
      before(async () => {
        changed = changedSteps(await throughProxy(fault), harness.direct());
      });

      it('changes at least one answer', () => {
        assert.ok(changed.length > 0, `${fault.id} changed nothing`);
      });

      it('forgets its memory when set again', async () => {
        assert.deepEqual(changedSteps(await throughProxy(fault), harness.direct()), changed);
      });
    });
  }
});
