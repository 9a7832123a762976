import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import http from 'node:http';
import { propertiesProblems } from '../../conformance/checks/errors';
import { CIRCUIT_FAULTS } from '../../conformance/selftest/circuit-faults';
import { CONFIG_FAULTS } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import { createDependencyFaults, DEPENDENCY_FAULTS } from '../../conformance/selftest/dependency-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULT_IDS } from '../../conformance/selftest/faults';
import { SESSION_FAULTS } from '../../conformance/selftest/session-faults';
import { configsFollowingProblems, latestDay, waitsForConfigs } from '../../conformance/steps/holders';
import type { Step } from '../support/fault-script';
import { changedSteps, json, SCRIPT_BASE, scriptedExchange } from '../support/fault-script';

const problem = (status: number, name: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
  detail: `a ${name}`,
  ...extra,
});

/** A refusal as the round trips have it: conflicts, and properties naming what to change. */
const inUse = (property: string, resource: [string, string], remote: [string, string]) =>
  problem(400, 'unable-to-fulfill', {
    properties: [{ name: property, reason: `${remote[1]} still needs it` }],
    conflicts: [
      {
        resource_type: resource[0],
        resource_id: resource[1],
        resource_property: property,
        remote_resource_type: remote[0],
        remote_resource_id: remote[1],
      },
    ],
  });

type Resource = Record<string, unknown>;

/**
 * A small exchange that destroys in dependency order: connection c1 carries config n1, which uses
 * MAC m1; c1 names role assignment ra1. What is still needed by something live is refused; once
 * that goes, it follows, and nothing keeps naming what was deleted. `reset` restores it.
 */
function fakeExchange() {
  let connection: Resource;
  let config: Resource;
  let macGone: boolean;
  let assignmentGone: boolean;
  let service: Resource;
  const reset = () => {
    service = { id: 'ns1', type: 'cloud_vc', state: 'allocated', status: [] };
    connection = { id: 'c1', state: 'production', role_assignments: ['ra0', 'ra1'] };
    config = {
      id: 'n1',
      type: 'exchange_lan',
      state: 'production',
      connection: 'c1',
      macs: ['m1'],
      role_assignments: ['ra0'],
    };
    macGone = false;
    assignmentGone = false;
  };
  reset();
  const live = (resource: Resource) => resource.state === 'production';

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    const path = url.pathname.slice(SCRIPT_BASE.length);
    const body = (raw.length ? JSON.parse(raw.toString()) : {}) as Resource;
    switch (`${req.method} ${path}`) {
      case 'GET /network-services/ns1':
        return send(200, service);
      case 'DELETE /network-services/ns1':
        // Cancelled before production: it ends once its configs are gone, waiting for nothing.
        Object.assign(service, { decommission_at: '2031-05-14' });
        return send(202, service);
      case 'GET /connections/c1':
        return send(200, connection);
      case 'DELETE /connections/c1':
        if (live(config))
          return send(400, inUse('id', ['connections', 'c1'], ['network-service-configs', 'n1']));
        Object.assign(connection, { state: 'decommission_requested', decommission_at: '2031-06-30' });
        return send(202, connection);
      case 'GET /network-service-configs':
        return send(200, url.searchParams.get('connection') === 'c1' ? [config] : []);
      case 'POST /network-service-configs':
        return send(201, { cloud_vlan: null, ...body, id: 'n2', state: 'requested' });
      case 'GET /network-service-configs/n1':
        return send(200, config);
      case 'PUT /network-service-configs/n1':
        return send(202, config);
      case 'DELETE /network-service-configs/n1':
        Object.assign(config, { state: 'decommission_requested', decommission_at: '2031-06-14' });
        return send(202, config);
      case 'DELETE /macs/m1':
        if (macGone) return send(404, problem(404, 'not-found'));
        if (live(config)) return send(400, inUse('id', ['macs', 'm1'], ['network-service-configs', 'n1']));
        macGone = true;
        config.macs = [];
        return send(200, { id: 'm1', address: '02:00:00:00:00:01' });
      case 'GET /role-assignments/ra1':
        return assignmentGone
          ? send(404, problem(404, 'not-found'))
          : send(200, { id: 'ra1', role: 'role-billing', contact: 'ct1' });
      case 'DELETE /role-assignments/ra1':
        if (assignmentGone) return send(404, problem(404, 'not-found'));
        if (live(connection))
          return send(400, inUse('role_assignments', ['connections', 'c1'], ['role-assignments', 'ra1']));
        assignmentGone = true;
        connection.role_assignments = ['ra0'];
        return send(200, { id: 'ra1', role: 'role-billing', contact: 'ct1' });
      default:
        return send(404, problem(404, 'not-found'));
    }
  };
  return { handle, reset };
}

/** The fixed script: every fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  { method: 'GET', path: '/connections/c1' },
  { method: 'GET', path: '/network-service-configs/n1' },
  { method: 'DELETE', path: '/connections/c1' },
  { method: 'DELETE', path: '/role-assignments/ra1' },
  { method: 'DELETE', path: '/network-service-configs/n1' },
  { method: 'DELETE', path: '/macs/m1' },
  { method: 'GET', path: '/network-service-configs/n1' },
  { method: 'DELETE', path: '/connections/c1' },
  { method: 'DELETE', path: '/role-assignments/ra1' },
  { method: 'GET', path: '/connections/c1' },
  {
    method: 'POST',
    path: '/network-service-configs',
    body: { type: 'cloud_vc', network_service: 'ns1', connection: 'c1', handover: 1 },
  },
  {
    method: 'PUT',
    path: '/network-service-configs/n1',
    body: { type: 'cloud_vc', connection: 'c1', handover: 1 },
  },
  { method: 'GET', path: '/network-service-configs?connection=c1' },
  { method: 'GET', path: '/network-services/ns1' },
  { method: 'DELETE', path: '/network-services/ns1' },
  { method: 'GET', path: '/network-services/ns1' },
];

describe('faults in destroying what others depend on, and in the properties of refusals', () => {
  const harness = scriptedExchange(fakeExchange(), SCRIPT);
  const throughProxy = (fault: Fault | null) => harness.throughProxy(fault);
  before(() => harness.start());
  after(() => harness.stop());

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), harness.direct()), []);
  });

  it('plays the round trips: refused while in use, followed once the user goes', () => {
    const direct = harness.direct();
    assert.deepEqual(
      direct.map((answer) => answer.status),
      [200, 200, 400, 400, 202, 200, 200, 202, 200, 200, 201, 202, 200, 200, 202, 200],
    );
    assert.deepEqual(json(direct[6]).macs, []);
    assert.deepEqual(json(direct[9]).role_assignments, ['ra0']);
    assert.equal(json(direct[10]).cloud_vlan, null);
  });

  it('gives the faults ids of their own, each judged by a full run of named checks', () => {
    const ids = DEPENDENCY_FAULTS.map((fault) => fault.id);
    const others = [
      ...FAULT_IDS,
      ...CONNECTION_FAULTS.map((fault) => fault.id),
      ...CONFIG_FAULTS.map((fault) => fault.id),
      ...SESSION_FAULTS.map((fault) => fault.id),
      ...CIRCUIT_FAULTS.map((fault) => fault.id),
    ];
    assert.equal(new Set([...ids, ...others]).size, ids.length + others.length);
    for (const fault of DEPENDENCY_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      assert.ok(fault.full?.only.length, `${fault.id} names no check`);
      assert.ok(
        fault.full.only.every((id) => /^(?:DEP|ERR|NSC)-\d{3}$/.test(id)),
        fault.id,
      );
    }
  });

  const byId = (id: string) => createDependencyFaults().find((fault) => fault.id === id)!;

  it('refuses a connection whose config is already going, as before the round trips', async () => {
    const answers = await throughProxy(byId('connection-refused-while-configs-go'));
    assert.equal(answers[7].status, 400);
    assert.match(json(answers[7]).type, /unable-to-fulfill/);
    assert.equal(json(answers[7]).conflicts[0].remote_resource_id, 'n1');
    // Held back, the DELETE did not reach the exchange: the connection is still in production.
    assert.equal(json(answers[9]).state, 'production');
  });

  it('keeps naming a deleted MAC and a deleted role assignment', async () => {
    const macs = await throughProxy(byId('mac-kept-by-going-config'));
    assert.equal(macs[5].status, 200);
    assert.deepEqual(json(macs[6]).macs, ['m1']);
    const roles = await throughProxy(byId('role-assignment-kept-by-going-resource'));
    assert.equal(roles[8].status, 200);
    assert.deepEqual(json(roles[9]).role_assignments, ['ra0', 'ra1']);
  });

  it('answers a refused DELETE of a role assignment in use 200 with the assignment', async () => {
    const answers = await throughProxy(byId('role-assignment-in-use-deleted'));
    assert.equal(answers[3].status, 200);
    assert.equal(json(answers[3]).id, 'ra1');
  });

  it('leaves the configs of what goes in production', async () => {
    const answers = await throughProxy(byId('service-configs-left-live'));
    assert.equal(json(answers[6]).state, 'production');
    assert.ok(!('decommission_at' in json(answers[6])));
    assert.deepEqual(answers[1], harness.direct()[1]);
  });

  it('says a service that goes still waits for configs, once it was deleted', async () => {
    const answers = await throughProxy(byId('service-still-waits-for-configs'));
    assert.deepEqual(answers[13], harness.direct()[13]);
    assert.ok(waitsForConfigs(json(answers[15]).status));
    assert.ok(!waitsForConfigs(json(harness.direct()[15]).status));
  });

  it('drops the properties of unable-to-fulfill answers only', async () => {
    const answers = await throughProxy(byId('unable-to-fulfill-without-properties'));
    for (const step of [2, 3]) {
      assert.ok(!('properties' in json(answers[step])), `step ${step}`);
      assert.deepEqual(json(answers[step]).conflicts, json(harness.direct()[step]).conflicts);
    }
  });

  it('refuses a cloud config without cloud_vlan, on POST and on PUT', async () => {
    const answers = await throughProxy(byId('cloud-vlan-required'));
    for (const step of [10, 11]) {
      assert.equal(answers[step].status, 400, `step ${step}`);
      assert.deepEqual(
        json(answers[step]).properties.map((property: Resource) => property.name),
        ['cloud_vlan'],
      );
    }
  });

  for (const fault of createDependencyFaults()) {
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

describe('the properties every 400 carries', () => {
  it('accepts a list of failed validations, each with a name and a reason', () => {
    assert.deepEqual(propertiesProblems({ properties: [{ name: 'connection', reason: 'in use' }] }), []);
    assert.deepEqual(
      propertiesProblems({
        type: 'https://errors.ix-api.net/v2/unable-to-fulfill.html',
        properties: [{ name: 'id', reason: 'n1 uses it' }],
        conflicts: [],
      }),
      [],
    );
  });

  it('names what is missing, empty or nameless', () => {
    assert.match(propertiesProblems({ conflicts: [] })[0], /carries no properties/);
    assert.match(propertiesProblems({ properties: [] })[0], /empty/);
    assert.match(propertiesProblems({ properties: 'cloud_vlan' })[0], /not a list/);
    assert.match(propertiesProblems({ properties: [{ name: 'x' }] })[0], /1 of its properties lack/);
    assert.match(propertiesProblems({ properties: [{ name: '', reason: 'r' }, 'x'] })[0], /2 of its/);
    assert.match(propertiesProblems('<html>')[0], /no JSON object/);
    assert.match(propertiesProblems(undefined)[0], /no JSON object/);
  });
});

describe('what follows a resource that goes', () => {
  it('takes the latest of the days there are', () => {
    assert.equal(latestDay(['2031-06-14', '2031-07-01', '2031-06-30']), '2031-07-01');
    assert.equal(latestDay([undefined, null, 'soon', '2031-02-30']), undefined);
    assert.equal(latestDay([]), undefined);
  });

  it('holds configs to their service: going, and on its day when it is known', () => {
    const going = (id: string, state: string, decommission_at?: string) => ({ id, state, decommission_at });
    assert.deepEqual(
      configsFollowingProblems(
        'ns1',
        [
          going('n1', 'decommission_requested', '2031-06-14'),
          going('n2', 'cancelled'),
          going('n3', 'archived'),
        ],
        '2031-06-14',
      ),
      [],
    );
    assert.deepEqual(
      configsFollowingProblems('ns1', [going('n1', 'decommissioned', '2031-05-01')], undefined),
      [],
    );
    const [live, late] = configsFollowingProblems(
      'ns1',
      [going('n1', 'production'), going('n2', 'decommission_requested', '2031-07-14')],
      '2031-06-14',
    );
    assert.match(live, /config n1 of service ns1 is production, not going/);
    assert.match(late, /n2 .* on "2031-07-14", not on the service's day 2031-06-14/);
  });

  it('reads a status that still waits for configs', () => {
    assert.ok(waitsForConfigs([{ severity: 5, tag: 'waiting_for_configs', message: 'handover 2' }]));
    assert.ok(waitsForConfigs([{ tag: 'pending', message: 'Waiting for a network service config.' }]));
    assert.ok(!waitsForConfigs([{ tag: 'circuit_ready', message: 'The provider holds the circuit.' }]));
    assert.ok(!waitsForConfigs([]));
    assert.ok(!waitsForConfigs(undefined));
  });
});
