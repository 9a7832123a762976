import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ConfigOrderFacts, ExchangeLanConfigOrder } from '../../domain/network-service-configs';
import { exchangeLanConfigProblems } from '../../domain/network-service-configs';
import type { Tagging } from '../../domain/vlans';
import { chooseTags, taggingOf, taggingsCompatible, vlanConfigOf } from '../../domain/vlans';

const order: ExchangeLanConfigOrder = {
  type: 'exchange_lan',
  network_service: 'ns-lan',
  managing_account: 'acc-a',
  consuming_account: 'acc-a',
  billing_account: 'acc-a',
  role_assignments: ['ra-noc'],
  connection: 'conn-1',
  vlan_config: { vlan_type: 'dot1q', vlan: null },
  asns: [64511],
  capacity: null,
  macs: [],
  listed: true,
  product_offering: null,
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
};

const facts: ConfigOrderFacts = {
  service: {
    id: 'ns-lan',
    type: 'exchange_lan',
    state: 'production',
    metro_area_network: 'man-fra',
    product_offering: 'po-lan',
    nsc_required_contact_roles: ['role-noc'],
  },
  connection: {
    id: 'conn-1',
    state: 'production',
    metro_area_network: 'man-fra',
    vlan_types: ['port', 'dot1q', 'qinq'],
    outer_vlan_ethertypes: ['0x8100'],
    speed: 10_000,
    capacity_allocation_limit: null,
    capacityBookedElsewhere: 4_000,
  },
  offering: {
    id: 'po-lan',
    type: 'exchange_lan',
    bandwidth_min: 1_000,
    bandwidth_max: 400_000,
    orderable_not_before: null,
    orderable_not_after: null,
  },
  assignedRoles: ['role-noc'],
  billingAccountCanPay: true,
  usableMacs: new Set(['mac-1']),
  now: new Date('2026-11-23T12:00:00Z'),
};

const names = (change: Partial<ExchangeLanConfigOrder>, factChange: Partial<ConfigOrderFacts> = {}) =>
  exchangeLanConfigProblems({ ...order, ...change }, { ...facts, ...factChange }).map((p) => p.name);

describe('exchange-LAN config rules', () => {
  it('accepts an order that meets every rule', () => {
    assert.deepEqual(names({ capacity: 6_000, macs: ['mac-1'] }), []);
  });

  it('names the property of each rule broken', () => {
    assert.deepEqual(names({}, { service: undefined }), ['network_service']);
    assert.deepEqual(names({}, { service: { ...facts.service!, state: 'requested' } }), ['network_service']);
    assert.deepEqual(names({}, { connection: undefined }), ['connection']);
    assert.deepEqual(names({}, { connection: { ...facts.connection!, state: 'decommissioned' } }), [
      'connection',
    ]);
    assert.deepEqual(names({}, { connection: { ...facts.connection!, metro_area_network: 'man-ams' } }), [
      'connection',
    ]);
    assert.deepEqual(
      names({ vlan_config: { vlan_type: 'qinq', inner_vlan: 5, outer_vlan_ethertype: '0x88a8' } }),
      ['vlan_config.outer_vlan_ethertype'],
    );
    assert.deepEqual(names({}, { connection: { ...facts.connection!, vlan_types: ['port'] } }), [
      'vlan_config.vlan_type',
    ]);
    assert.deepEqual(names({ capacity: 999 }), ['capacity']);
    assert.deepEqual(names({ capacity: 6_001 }), ['capacity'], 'beyond what the connection has left');
    assert.deepEqual(names({ asns: [] }), ['asns']);
    assert.deepEqual(names({ asns: [0, 64511] }), ['asns.0']);
    assert.deepEqual(names({ asns: [64511, 64511] }), ['asns']);
    assert.deepEqual(names({ macs: ['mac-2'] }), ['macs.0']);
    assert.deepEqual(names({}, { assignedRoles: [] }), ['role_assignments']);
    assert.deepEqual(names({}, { billingAccountCanPay: false }), ['billing_account']);
    assert.deepEqual(
      names({ product_offering: 'po-other' }, { offering: { ...facts.offering!, id: 'po-other' } }),
      ['product_offering'],
    );
    assert.deepEqual(names({ product_offering: 'po-gone' }, { offering: undefined }), ['product_offering']);
  });

  it('holds a change to the rules it touches', () => {
    const problems = exchangeLanConfigProblems(
      { ...order, capacity: 999 },
      { ...facts, assignedRoles: [] },
      (property) => property === 'capacity',
    );
    assert.deepEqual(
      problems.map((p) => p.name),
      ['capacity'],
    );
  });
});

describe('VLAN taggings on a connection', () => {
  const tag = (
    vlan_type: Tagging['vlan_type'],
    outer: number | null,
    inner: number | null = null,
  ): Tagging => ({
    vlan_type,
    outer_vlan: outer,
    outer_vlan_ethertype: vlan_type === 'port' ? null : '0x8100',
    inner_vlan: inner,
  });

  it('lets taggings share a connection by the rules of the wire', () => {
    assert.ok(!taggingsCompatible(tag('port', null), tag('dot1q', 10)));
    assert.ok(!taggingsCompatible(tag('dot1q', 10), tag('dot1q', 10)));
    assert.ok(taggingsCompatible(tag('dot1q', 10), tag('dot1q', 11)));
    assert.ok(!taggingsCompatible(tag('dot1q', 10), tag('qinq', 10, 5)));
    assert.ok(taggingsCompatible(tag('qinq', 10, 5), tag('qinq', 10, 6)));
    assert.ok(!taggingsCompatible(tag('qinq', 10, 5), tag('qinq', 10, 5)));
  });

  it('shows what it stores', () => {
    for (const config of [
      { vlan_type: 'port' as const },
      { vlan_type: 'dot1q' as const, vlan: 7, vlan_ethertype: '0x8100' },
      { vlan_type: 'qinq' as const, outer_vlan: 8, outer_vlan_ethertype: '0x8100', inner_vlan: 9 },
    ])
      assert.deepEqual(vlanConfigOf(taggingOf(config)), config);
  });

  it('chooses an open tag that fits beside any others, or none when all are used', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: 1, max: 40 }).map((v) => tag('dot1q', v)),
            fc
              .tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 3 }))
              .map(([o, i]) => tag('qinq', o, i)),
          ),
        ),
        fc.boolean(),
        (others, qinq) => {
          const wanted = qinq ? tag('qinq', null, 1) : tag('dot1q', null);
          const chosen = chooseTags(wanted, others)!;
          assert.ok(chosen.outer_vlan !== null && chosen.outer_vlan >= 2);
          for (const other of others) assert.ok(taggingsCompatible(chosen, other));
        },
      ),
    );
    const full = [...Array(4093).keys()].map((i) => tag('dot1q', i + 2));
    assert.equal(chooseTags(tag('dot1q', null), full), null);
  });
});
