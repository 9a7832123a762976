import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { insideSubnet } from '../../conformance/checks/configs';
import { CONFIG_FAULTS, createConfigFaults } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import type { Fault } from '../../conformance/selftest/faults';
import type { Step } from '../support/fault-script';
import { changedSteps, json, scriptedExchange, SCRIPT_BASE, SECOND } from '../support/fault-script';
import { FAULT_IDS } from '../../conformance/selftest/faults';

const TODAY = '2031-05-14';

const problem = (status: number, name: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: http.STATUS_CODES[status],
  status,
  ...extra,
});

type Resource = Record<string, unknown>;

/**
 * A small exchange LAN: one config n1 holding VLAN 10, its two addresses and a MAC it uses; a
 * second caller (Authorization `Bearer second`) sees none of it. `reset` restores it.
 */
function fakeExchange() {
  let config: Resource;
  let ips: Resource[];
  let macInUse: boolean;
  const reset = () => {
    config = {
      id: 'n1',
      type: 'exchange_lan',
      state: 'production',
      vlan_config: { vlan_type: 'dot1q', vlan: 10 },
      ips: ['i4', 'i6'],
      macs: ['m1'],
      external_ref: null,
    };
    ips = [
      { id: 'i4', version: 4, address: '192.0.2.1', prefix_length: 24, fqdn: null },
      { id: 'i6', version: 6, address: '2001:db8:1::1', prefix_length: 64, fqdn: null },
    ];
    macInUse = true;
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
    const json = () => (raw.length ? (JSON.parse(raw.toString()) as Resource) : {});
    const match = /^\/(network-service-configs|ips|macs)(?:\/([^/]+))?(?:\/(cancellation-policy))?$/.exec(
      path,
    );
    if (!match) return send(404, problem(404, 'not-found'));
    const [, kind, id, below] = match;
    if (kind === 'ips' && !id) {
      const of = url.searchParams.get('network_service_config');
      return send(200, foreign || (of !== null && of !== 'n1') ? [] : ips);
    }
    if (kind === 'network-service-configs' && !id && req.method === 'POST') {
      const vlan = (json().vlan_config as Resource | undefined)?.vlan;
      if (vlan === 10)
        return send(
          400,
          problem(400, 'unable-to-fulfill', {
            conflicts: [
              {
                resource_type: 'network-service-configs',
                resource_id: 'n1',
                resource_property: 'vlan_config',
                remote_resource_type: 'connections',
                remote_resource_id: 'c1',
              },
            ],
          }),
        );
      return send(201, { ...config, id: 'n2', state: 'requested' });
    }
    const known =
      kind === 'network-service-configs'
        ? id === 'n1'
        : kind === 'ips'
          ? ips.some((ip) => ip.id === id)
          : id === 'm1';
    if (foreign || !known) return send(404, problem(404, 'not-found'));
    if (below === 'cancellation-policy') {
      const day = url.searchParams.get('decommission_at');
      const at = day !== null && day > TODAY ? day : TODAY;
      return send(200, { decommission_at: at, charged_until: `${at.slice(0, 8)}31` });
    }
    if (kind === 'network-service-configs') {
      if (req.method === 'GET') return send(200, config);
      if (req.method === 'PATCH') {
        const body = json();
        if (body.type !== undefined && body.type !== 'exchange_lan')
          return send(400, problem(400, 'validation-error', { properties: [{ name: 'type' }] }));
        Object.assign(config, body);
        return send(202, config);
      }
      if (req.method === 'DELETE') {
        config.state = config.state === 'cancelled' ? 'archived' : 'cancelled';
        return send(202, config);
      }
    }
    if (kind === 'ips') {
      const ip = ips.find((item) => item.id === id)!;
      if (req.method === 'GET') return send(200, ip);
      const body = json();
      if (body.address !== undefined && body.address !== ip.address)
        return send(400, problem(400, 'validation-error', { properties: [{ name: 'address' }] }));
      Object.assign(ip, body);
      return send(200, ip);
    }
    const mac = { id: 'm1', address: '02:00:00:00:00:01' };
    if (req.method === 'GET') return send(200, mac);
    if (macInUse)
      return send(
        400,
        problem(400, 'unable-to-fulfill', {
          conflicts: [
            {
              resource_type: 'macs',
              resource_id: 'm1',
              resource_property: null,
              remote_resource_type: 'network-service-configs',
              remote_resource_id: 'n1',
            },
          ],
        }),
      );
    return send(200, mac);
  };
  return { handle, reset };
}

/** The fixed script: every config fault must change the answer to at least one of these. */
const SCRIPT: Step[] = [
  { method: 'GET', path: '/network-service-configs/n1' },
  { method: 'GET', path: '/ips?network_service_config=n1' },
  { method: 'GET', path: '/ips/i4' },
  { method: 'GET', path: '/network-service-configs/n1/cancellation-policy' },
  { method: 'PATCH', path: '/network-service-configs/n1', body: { type: 'p2p_vc' } },
  {
    method: 'POST',
    path: '/network-service-configs',
    body: { vlan_config: { vlan_type: 'dot1q', vlan: 10 } },
  },
  { method: 'PATCH', path: '/ips/i4', body: { address: '198.18.0.1' } },
  { method: 'GET', path: '/network-service-configs/n1', second: true },
  { method: 'GET', path: '/ips?network_service_config=n1', second: true },
  { method: 'DELETE', path: '/macs/m1' },
  { method: 'DELETE', path: '/network-service-configs/n1' },
  { method: 'DELETE', path: '/network-service-configs/n1' },
];

describe('faults in network service configs, their addresses and MACs', () => {
  const harness = scriptedExchange(fakeExchange(), SCRIPT);
  const throughProxy = (fault: Fault | null) => harness.throughProxy(fault);
  before(() => harness.start());
  after(() => harness.stop());

  it('passes the script through unchanged without a fault', async () => {
    assert.deepEqual(changedSteps(await throughProxy(null), harness.direct()), []);
  });

  it('gives the faults ids of their own, each judged by a full run of named checks', () => {
    const ids = CONFIG_FAULTS.map((fault) => fault.id);
    const others = [...FAULT_IDS, ...CONNECTION_FAULTS.map((fault) => fault.id)];
    assert.equal(new Set([...ids, ...others]).size, ids.length + others.length);
    for (const fault of CONFIG_FAULTS) {
      assert.match(fault.id, /^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      assert.ok(fault.description && !fault.description.includes('\n'), fault.id);
      assert.ok(fault.full?.only.length, `${fault.id} names no check`);
      assert.ok(
        fault.full.only.every((id) => /^NSC-\d{3}$/.test(id)),
        fault.id,
      );
    }
  });

  const byId = (id: string) => createConfigFaults().find((fault) => fault.id === id)!;

  it('moves addresses out of the LAN, and drops the ips of configs', async () => {
    const outside = await throughProxy(byId('config-address-outside-subnet'));
    assert.equal(json(outside[2]).address, '100.64.0.1');
    assert.deepEqual(
      json(outside[1]).map((ip: Resource) => ip.address),
      ['100.64.0.1', 'fd00:c0f::1'],
    );
    const dropped = await throughProxy(byId('config-ips-dropped'));
    assert.ok(!('ips' in json(dropped[0])));
    assert.deepEqual(dropped[1], harness.direct()[1]);
  });

  it('answers a cancellation 204 without the config, and a second DELETE without archiving', async () => {
    const empty = await throughProxy(byId('config-destroy-answers-204'));
    assert.deepEqual([empty[10].status, empty[10].body], [204, '']);
    const kept = await throughProxy(byId('config-not-archived'));
    assert.equal(json(harness.direct()[11]).state, 'archived');
    assert.equal(json(kept[11]).state, 'cancelled');
  });

  it('shows another account the config and the addresses the owner read', async () => {
    const config = await throughProxy(byId('config-readable-by-others'));
    assert.equal(config[7].status, 200);
    assert.equal(json(config[7]).id, 'n1');
    const addresses = await throughProxy(byId('ips-filter-leaks'));
    assert.deepEqual(
      json(addresses[8]).map((ip: Resource) => ip.id),
      ['i4', 'i6'],
    );
  });

  it('accepts what the server refuses: another type, a moved address, a MAC in use', async () => {
    assert.equal((await throughProxy(byId('config-patch-refusal-accepted')))[4].status, 202);
    const moved = await throughProxy(byId('ip-address-change-accepted'));
    assert.equal(moved[6].status, 200);
    assert.equal(json(moved[6]).address, '192.0.2.1');
    assert.equal((await throughProxy(byId('mac-delete-in-use-succeeds')))[9].status, 200);
    assert.deepEqual(json((await throughProxy(byId('config-vlan-clash-unnamed')))[5]).conflicts, []);
  });

  for (const fault of createConfigFaults()) {
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

describe('addresses inside a subnet', () => {
  it('holds an address to the subnet of its version', () => {
    assert.ok(insideSubnet('192.0.2.1', 4, '192.0.2.0/24'));
    assert.ok(insideSubnet('2001:db8:1::ff', 6, '2001:db8:1::/64'));
    assert.ok(!insideSubnet('192.0.3.1', 4, '192.0.2.0/24'));
    assert.ok(!insideSubnet('2001:db8:2::1', 6, '2001:db8:1::/64'));
  });

  it('refuses addresses of the other version, malformed addresses and malformed subnets', () => {
    assert.ok(!insideSubnet('2001:db8:1::1', 4, '192.0.2.0/24'));
    assert.ok(!insideSubnet('192.0.2.1', 6, '2001:db8:1::/64'));
    assert.ok(!insideSubnet('192.0.2.300', 4, '192.0.2.0/24'));
    assert.ok(!insideSubnet('192.0.2.1', 4, '192.0.2.0'));
    assert.ok(!insideSubnet('192.0.2.1', 4, '192.0.2.0/x'));
  });
});
