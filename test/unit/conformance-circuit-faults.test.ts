import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CIRCUIT_FAULTS, createCircuitFaults } from '../../conformance/selftest/circuit-faults';
import { CONFIG_FAULTS } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULT_IDS } from '../../conformance/selftest/faults';
import { SESSION_FAULTS } from '../../conformance/selftest/session-faults';
import type { Step } from '../support/fault-script';
import { changedSteps, json, scriptedExchange, SCRIPT_BASE, SECOND } from '../support/fault-script';

const TODAY = '2031-05-14';

const problem = (status: number, name: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
  ...extra,
});

const invalid = (name: string) => problem(400, 'validation-error', { properties: [{ name, reason: 'no' }] });

type Resource = Record<string, unknown>;

/**
 * A small exchange: the first caller's private multipoint service ns1, its p2p circuit c1 to the
 * second caller (Authorization `Bearer second`), who sees c1 without its references and nothing
 * of ns1; a rule r1 on ns1 and a root config p1 of a p2mp service. `reset` restores it.
 */
function fakeExchange() {
  let service: Resource;
  const reset = () => {
    service = {
      id: 'ns1',
      type: 'mp2mp_vc',
      state: 'allocated',
      public: false,
      display_name: 'private',
      billing_account: 'a1',
      member_joining_rules: ['r1'],
    };
  };
  reset();
  const circuit = {
    id: 'c1',
    type: 'p2p_vc',
    state: 'allocated',
    consuming_account: 'a1',
    joining_member_account: 'a2',
    billing_account: 'a1',
    external_ref: 'ref',
    purchase_order: 'PO',
  };
  const rule = { id: 'r1', type: 'allow', network_service: 'ns1', capacity_min: 100, capacity_max: 1000 };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    const path = url.pathname.slice(SCRIPT_BASE.length);
    const second = req.headers.authorization === SECOND;
    const body = (raw.length ? JSON.parse(raw.toString()) : {}) as Resource;
    const key = `${req.method} ${path}`;
    switch (key) {
      case 'POST /network-services':
        if (body.type === 'p2p_vc' && body.joining_member_account === body.consuming_account)
          return send(400, invalid('joining_member_account'));
        if (body.type === 'cloud_vc' && !String(body.cloud_key).startsWith('stratus-'))
          return send(400, invalid('cloud_key'));
        return send(201, { ...body, id: 'ns2', state: 'requested' });
      case 'GET /network-services/ns1':
        return second ? send(404, problem(404, 'not-found')) : send(200, service);
      case 'PATCH /network-services/ns1':
        Object.assign(service, body);
        return send(202, service);
      case 'DELETE /network-services/ns1':
        service.state = 'cancelled';
        return send(202, service);
      case 'GET /network-services/ns1/cancellation-policy':
        return send(200, { decommission_at: TODAY, charged_until: TODAY });
      case 'GET /network-services/c1':
        return send(
          200,
          second ? { ...circuit, billing_account: '', external_ref: null, purchase_order: '' } : circuit,
        );
      case 'GET /network-services/c2':
        return send(200, { ...circuit, id: 'c2', state: 'production_change_pending' });
      case 'GET /network-services/ns3':
        return send(200, {
          id: 'ns3',
          type: 'mp2mp_vc',
          public: true,
          billing_account: '',
          external_ref: null,
        });
      case 'POST /network-services/c1/change-request':
        return second
          ? send(400, problem(400, 'unable-to-fulfill'))
          : send(403, problem(403, 'permission-denied'));
      case 'POST /member-joining-rules':
        if (Number(body.capacity_min) > Number(body.capacity_max)) return send(400, invalid('capacity_max'));
        return send(201, { ...body, id: 'r2' });
      case 'PATCH /member-joining-rules/r1':
      case 'PUT /member-joining-rules/r1':
      case 'DELETE /member-joining-rules/r1':
        return send(200, rule);
      case 'POST /network-service-configs':
        if (body.type === 'cloud_vc' && Number(body.handover) > 2) return send(400, invalid('handover'));
        if (body.type === 'mp2mp_vc' && second) return send(403, problem(403, 'permission-denied'));
        return send(201, { ...body, id: 'n2', state: 'requested' });
      case 'GET /network-service-configs/p1':
        return send(200, { id: 'p1', type: 'p2mp_vc', role: 'root' });
      default:
        return send(404, problem(404, 'not-found'));
    }
  };
  return { handle, reset };
}

/** The fixed script: every circuit fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  {
    method: 'POST',
    path: '/network-services',
    body: { type: 'p2p_vc', consuming_account: 'a1', joining_member_account: 'a1' },
  },
  { method: 'POST', path: '/network-services', body: { type: 'cloud_vc', cloud_key: 'made-up' } },
  { method: 'PATCH', path: '/network-services/ns1', body: { type: 'mp2mp_vc', display_name: 'renamed' } },
  { method: 'GET', path: '/network-services/ns1' },
  { method: 'GET', path: '/network-services/ns1/cancellation-policy' },
  { method: 'GET', path: '/network-services/c1', second: true },
  { method: 'GET', path: '/network-services/ns1', second: true },
  { method: 'DELETE', path: '/network-services/ns1' },
  {
    method: 'POST',
    path: '/member-joining-rules',
    body: { type: 'allow', network_service: 'ns1', capacity_min: 1000, capacity_max: 100 },
  },
  { method: 'PATCH', path: '/member-joining-rules/r1', body: { type: 'allow', capacity_max: 2000 } },
  { method: 'PUT', path: '/member-joining-rules/r1', body: { type: 'allow', capacity_max: 1000 } },
  { method: 'DELETE', path: '/member-joining-rules/r1' },
  {
    method: 'POST',
    path: '/network-services/c1/change-request',
    body: { product_offering: 'po', capacity: 200 },
  },
  { method: 'POST', path: '/network-service-configs', body: { type: 'cloud_vc', handover: 3 } },
  { method: 'GET', path: '/network-service-configs/p1' },
  { method: 'POST', path: '/network-service-configs', body: { type: 'mp2mp_vc' }, second: true },
  { method: 'GET', path: '/network-services/c2' },
  { method: 'GET', path: '/network-services/ns3', second: true },
];

describe('faults in virtual circuits', () => {
  const harness = scriptedExchange(fakeExchange(), SCRIPT);
  const throughProxy = (fault: Fault | null) => harness.throughProxy(fault);
  before(() => harness.start());
  after(() => harness.stop());

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), harness.direct()), []);
  });

  it('gives the faults ids of their own, each judged by a full run of checks of circuits', () => {
    const ids = CIRCUIT_FAULTS.map((fault) => fault.id);
    const others = [
      ...FAULT_IDS,
      ...CONNECTION_FAULTS.map((fault) => fault.id),
      ...CONFIG_FAULTS.map((fault) => fault.id),
      ...SESSION_FAULTS.map((fault) => fault.id),
    ];
    assert.equal(new Set([...ids, ...others]).size, ids.length + others.length);
    for (const fault of CIRCUIT_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      assert.ok(fault.full?.only.length, `${fault.id} names no check`);
      assert.ok(
        fault.full.only.every((id) => /^(NS|MJR|CR|NSC)-\d{3}$/.test(id)),
        fault.id,
      );
    }
  });

  const byId = (id: string) => createCircuitFaults().find((fault) => fault.id === id)!;

  it('accepts services the rules refuse: a circuit to itself, a key the provider does not take', async () => {
    const itself = await throughProxy(byId('circuit-to-itself-accepted'));
    assert.equal(harness.direct()[0].status, 400);
    assert.equal(itself[0].status, 201);
    assert.equal(json(itself[0]).joining_member_account, 'a1');
    assert.deepEqual(itself[1], harness.direct()[1]);
    const key = await throughProxy(byId('cloud-key-not-checked'));
    assert.equal(key[1].status, 201);
    assert.equal(json(key[1]).cloud_key, 'made-up');
  });

  it('ignores a PATCH, dates the policy back, answers a cancellation 204', async () => {
    const ignored = await throughProxy(byId('service-patch-not-applied'));
    assert.equal(ignored[2].status, 202);
    assert.equal(json(ignored[3]).display_name, 'private');
    assert.equal(json(harness.direct()[3]).display_name, 'renamed');
    const past = await throughProxy(byId('service-policy-day-in-the-past'));
    assert.equal(json(past[4]).decommission_at, '2031-04-14');
    const empty = await throughProxy(byId('service-destroy-answers-204'));
    assert.deepEqual([empty[7].status, empty[7].body], [204, '']);
  });

  it("shows the B side and others the owner's references, and another account the private service", async () => {
    const leaked = await throughProxy(byId('circuit-b-side-sees-references'));
    assert.equal(json(leaked[5]).external_ref, 'leaked-ref');
    assert.equal(json(harness.direct()[5]).external_ref, null);
    const published = await throughProxy(byId('public-service-shows-references'));
    assert.equal(json(published[17]).external_ref, 'leaked-ref');
    assert.deepEqual(published[5], harness.direct()[5]);
    const shown = await throughProxy(byId('private-service-shown-to-others'));
    assert.equal(harness.direct()[6].status, 404);
    assert.equal(shown[6].status, 200);
    assert.equal(json(shown[6]).id, 'c1');
  });

  it('takes inverted capacities, answers rule changes 202, the A side asking for a change, and hides a pending one', async () => {
    const inverted = await throughProxy(byId('rule-capacities-inverted-accepted'));
    assert.equal(inverted[8].status, 201);
    assert.equal(json(inverted[8]).capacity_min, 1000);
    const changed = await throughProxy(byId('rule-change-answers-202'));
    assert.deepEqual([changed[9].status, changed[10].status, changed[11].status], [202, 202, 200]);
    const deleted = await throughProxy(byId('rule-destroy-answers-202'));
    assert.deepEqual([deleted[9].status, deleted[11].status], [200, 202]);
    const fromA = await throughProxy(byId('change-request-from-a-side-accepted'));
    assert.equal(harness.direct()[12].status, 403);
    assert.equal(fromA[12].status, 202);
    const pending = await throughProxy(byId('change-request-leaves-circuit-in-production'));
    assert.equal(json(harness.direct()[16]).state, 'production_change_pending');
    assert.equal(json(pending[16]).state, 'production');
  });

  it('takes a handover beyond the diversity and an uninvited member, and forgets roots', async () => {
    const beyond = await throughProxy(byId('cloud-handover-beyond-diversity-accepted'));
    assert.equal(beyond[13].status, 201);
    assert.equal(json(beyond[13]).handover, 3);
    const leaf = await throughProxy(byId('p2mp-role-forgotten'));
    assert.equal(json(leaf[14]).role, 'leaf');
    const joined = await throughProxy(byId('private-service-joined-without-rule'));
    assert.equal(harness.direct()[15].status, 403);
    assert.equal(joined[15].status, 201);
  });

  for (const fault of createCircuitFaults()) {
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
