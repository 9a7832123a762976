import assert from 'node:assert/strict';
import fc from 'fast-check';
import type {
  ConfigOrder,
  ConfigOrderFacts,
  ConfiguredService,
  JoiningRule,
  SiblingConfig,
} from '../../domain/network-service-configs';
import { absentConfigOrder, configProblems, siblingClashes } from '../../domain/network-service-configs';
import type { Tagging } from '../../domain/vlans';
import { chooseTags, taggingOf, taggingsCompatible, vlanConfigOf } from '../../domain/vlans';
import { ONBOARDED } from '../support/order-accounts';

const order: ConfigOrder = {
  ...absentConfigOrder('exchange_lan'),
  network_service: 'ns-lan',
  managing_account: 'acc-a',
  consuming_account: 'acc-a',
  billing_account: 'acc-a',
  role_assignments: ['ra-noc'],
  connection: 'conn-1',
  vlan_config: { vlan_type: 'dot1q', vlan: null },
  asns: [64511],
  listed: true,
};

const lan: ConfiguredService = {
  id: 'ns-lan',
  type: 'exchange_lan',
  state: 'production',
  metro_area_network: 'man-fra',
  product_offering: 'po-lan',
  nsc_required_contact_roles: ['role-noc'],
  nsc_product_offerings: ['po-lan'],
  managing_account: 'acc-ix',
  consuming_account: 'acc-ix',
  joining_member_account: null,
  public: false,
  diversity: null,
  handover_metro_area_network: 'man-fra',
  service_metro_area_network: 'man-fra',
  provider_vlans: 'single',
};

const facts: ConfigOrderFacts = {
  service: lan,
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
  knownAssignments: new Set(['ra-noc']),
  accounts: ONBOARDED,
  usableMacs: new Set(['mac-1']),
  macsHeldByOthers: new Map(),
  actingAccounts: ['acc-a'],
  memberRule: undefined,
  callerAllowed: false,
  now: new Date('2026-11-23T12:00:00Z'),
};

const names = (change: Partial<ConfigOrder>, factChange: Partial<ConfigOrderFacts> = {}) =>
  configProblems({ ...order, ...change }, { ...facts, ...factChange }).map((p) => p.name);

describe('exchange-LAN config rules', () => {
  it('accepts an order that meets every rule', () => {
    assert.deepEqual(names({ capacity: 6_000, macs: ['mac-1'] }), []);
  });

  it('names the property of each rule broken', () => {
    assert.deepEqual(names({}, { service: undefined }), ['network_service']);
    assert.deepEqual(names({}, { service: { ...lan, state: 'requested' } }), ['network_service']);
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
    const held = configProblems(
      { ...order, macs: ['mac-1'] },
      { ...facts, macsHeldByOthers: new Map([['mac-1', '02:00:5e:50:cb:5c']]) },
    );
    assert.deepEqual(
      held.map((problem) => problem.name),
      ['macs'],
    );
    assert.match(held[0].reason, /^02:00:5e:50:cb:5c is in use on this service by another member/);
    assert.deepEqual(names({}, { assignedRoles: [] }), ['role_assignments']);
    assert.deepEqual(
      names({ role_assignments: ['ra-noc', 'ra-of-another-account'] }),
      ['role_assignments.1'],
      "another account's assignment is as unknown as one that does not exist",
    );
    assert.deepEqual(names({}, { accounts: { states: {}, billingAccountCanPay: false } }), [
      'billing_account',
    ]);
    assert.deepEqual(
      names({ product_offering: 'po-other' }, { offering: { ...facts.offering!, id: 'po-other' } }),
      ['product_offering'],
    );
    assert.deepEqual(names({ product_offering: 'po-gone' }, { offering: undefined }), ['product_offering']);
    assert.deepEqual(names({ role: 'leaf' }), ['role'], 'what another type carries stays out');
    assert.deepEqual(names({ handover: 1, cloud_vlan: 7 }), ['handover', 'cloud_vlan']);
  });

  it('holds a change to the rules it touches', () => {
    const problems = configProblems(
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

/** A customer's service of `type` in Frankfurt, owned by acc-a, with acc-b as a p2p circuit's B side. */
const circuit = (type: string, extra: Partial<ConfiguredService> = {}): ConfiguredService => ({
  ...lan,
  id: 'ns-vc',
  type,
  state: 'requested',
  product_offering: 'po-vc',
  nsc_required_contact_roles: ['role-noc'],
  nsc_product_offerings: ['po-vc'],
  managing_account: 'acc-a',
  consuming_account: 'acc-a',
  joining_member_account: type === 'p2p_vc' ? 'acc-b' : null,
  diversity: type === 'cloud_vc' ? 2 : null,
  handover_metro_area_network: 'man-fra',
  service_metro_area_network: type === 'p2p_vc' ? 'man-ams' : 'man-fra',
  provider_vlans: type === 'cloud_vc' ? 'multi' : 'single',
  ...extra,
});

const vcFacts = (service: ConfiguredService, extra: Partial<ConfigOrderFacts> = {}): ConfigOrderFacts => ({
  ...facts,
  service,
  offering: {
    id: 'po-vc',
    type: service.type,
    bandwidth_min: 100,
    bandwidth_max: 100_000,
    orderable_not_before: null,
    orderable_not_after: null,
  },
  ...extra,
});

const vcOrder = (type: ConfigOrder['type'], extra: Partial<ConfigOrder> = {}): ConfigOrder => ({
  ...absentConfigOrder(type),
  network_service: 'ns-vc',
  managing_account: 'acc-a',
  consuming_account: 'acc-a',
  billing_account: 'acc-a',
  role_assignments: ['ra-noc'],
  connection: 'conn-1',
  vlan_config: { vlan_type: 'dot1q', vlan: null },
  ...(type === 'cloud_vc' ? { handover: 1 } : {}),
  ...extra,
});

const vcNames = (
  type: ConfigOrder['type'],
  change: Partial<ConfigOrder> = {},
  service: Partial<ConfiguredService> = {},
  extra: Partial<ConfigOrderFacts> = {},
) => configProblems(vcOrder(type, change), vcFacts(circuit(type, service), extra)).map((p) => p.name);

const inAms = { connection: { ...facts.connection!, metro_area_network: 'man-ams' } };

describe('virtual-circuit config rules', () => {
  it('accepts an order of each type that meets every rule, in any state of the service but going', () => {
    for (const type of ['p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'] as const) {
      for (const state of ['requested', 'allocated', 'production', 'error'] as const)
        assert.deepEqual(vcNames(type, {}, { state }), [], `${type} ${state}`);
      for (const state of ['decommission_requested', 'decommissioned', 'cancelled', 'archived'] as const)
        assert.deepEqual(vcNames(type, {}, { state }), ['network_service'], `${type} ${state}`);
      assert.deepEqual(vcNames(type, { type }, { type: 'exchange_lan' }).slice(0, 1), ['network_service']);
    }
  });

  it('keeps to each type what it carries', () => {
    assert.deepEqual(vcNames('p2p_vc', { macs: ['mac-1'] }), ['macs']);
    assert.deepEqual(vcNames('p2mp_vc', { macs: ['mac-1'] }), ['macs']);
    assert.deepEqual(vcNames('cloud_vc', { macs: ['mac-1'] }), ['macs']);
    assert.deepEqual(vcNames('mp2mp_vc', { macs: ['mac-1'] }), []);
    assert.deepEqual(vcNames('mp2mp_vc', { macs: ['mac-2'] }), ['macs.0']);
    assert.deepEqual(vcNames('p2p_vc', { asns: [64511], listed: true }), ['asns', 'listed']);
    assert.deepEqual(vcNames('mp2mp_vc', { role: 'root' }), ['role']);
    assert.deepEqual(vcNames('p2mp_vc', { role: 'root' }), []);
    assert.deepEqual(vcNames('cloud_vc', { capacity: 500 }), ['capacity']);
    assert.deepEqual(vcNames('cloud_vc', { product_offering: 'po-vc' }), ['product_offering']);
    assert.deepEqual(vcNames('p2p_vc', { handover: 1 }), ['handover']);
  });

  it('takes null or one of the service’s offerings, and a capacity the offering allows', () => {
    for (const type of ['p2p_vc', 'mp2mp_vc', 'p2mp_vc'] as const) {
      assert.deepEqual(vcNames(type, { product_offering: 'po-vc' }), []);
      assert.deepEqual(vcNames(type, { product_offering: null }), []);
      assert.deepEqual(
        configProblems(
          vcOrder(type, { product_offering: 'po-other' }),
          vcFacts(circuit(type), { offering: { ...vcFacts(circuit(type)).offering!, id: 'po-other' } }),
        ).map((p) => p.name),
        ['product_offering'],
      );
      assert.deepEqual(vcNames(type, { capacity: 50 }), ['capacity']);
    }
  });

  it('knows a point-to-point circuit to its two sides only, each on its side’s network', () => {
    // The A side in the handover network, the B side in the service network.
    assert.deepEqual(vcNames('p2p_vc'), []);
    assert.deepEqual(vcNames('p2p_vc', {}, {}, inAms), ['connection']);
    const bSide = { managing_account: 'acc-b', consuming_account: 'acc-b', billing_account: 'acc-b' };
    const asB = { actingAccounts: ['acc-b'] };
    assert.deepEqual(vcNames('p2p_vc', bSide, {}, { ...asB, ...inAms }), []);
    assert.deepEqual(vcNames('p2p_vc', bSide, {}, asB), ['connection']);
    // Somebody else's circuit is unknown; a config consumed by neither side is refused.
    const stranger = { actingAccounts: ['acc-c'] };
    const strangers = configProblems(
      vcOrder('p2p_vc', { consuming_account: 'acc-c' }),
      vcFacts(circuit('p2p_vc'), stranger),
    );
    assert.equal(strangers[0].name, 'network_service');
    assert.match(strangers[0].reason, /^no network service ns-vc$/);
    assert.deepEqual(
      vcNames('p2p_vc', { consuming_account: 'acc-c' }, {}, { actingAccounts: ['acc-a', 'acc-c'] }),
      ['consuming_account'],
    );
    // A managing account acts for the A side too.
    assert.deepEqual(
      vcNames(
        'p2p_vc',
        {},
        { managing_account: 'acc-m', consuming_account: 'acc-a' },
        { actingAccounts: ['acc-m', 'acc-a'] },
      ),
      [],
    );
  });

  it('admits members to a multipoint service by its rules, with an allow rule’s least capacity', () => {
    for (const type of ['mp2mp_vc', 'p2mp_vc'] as const) {
      const member = { managing_account: 'acc-b', consuming_account: 'acc-b', billing_account: 'acc-b' };
      const asB = { actingAccounts: ['acc-b'] };
      const allow: JoiningRule = { type: 'allow', capacity_min: 1_000, capacity_max: 500 };
      const deny: JoiningRule = { type: 'deny', capacity_min: null, capacity_max: null };
      // Private: unknown to whom it does not allow, refused to a member without a rule.
      const unknown = configProblems(vcOrder(type, member), vcFacts(circuit(type), asB));
      assert.deepEqual(
        unknown.map((p) => [p.name, p.reason]),
        [['network_service', 'no network service ns-vc']],
      );
      const refused = configProblems(
        vcOrder(type, member),
        vcFacts(circuit(type), { ...asB, callerAllowed: true }),
      );
      assert.deepEqual(
        refused.map((p) => p.name),
        ['network_service'],
      );
      assert.match(refused[0].reason, /do not admit acc-b/);
      const allowed = { ...asB, callerAllowed: true, memberRule: allow };
      assert.deepEqual(vcNames(type, member, {}, allowed), [], 'null capacity: unlimited');
      assert.deepEqual(vcNames(type, { ...member, capacity: 999 }, {}, allowed), ['capacity']);
      assert.deepEqual(vcNames(type, { ...member, capacity: 1_000 }, {}, allowed), []);
      // Public: everyone but the denied.
      assert.deepEqual(vcNames(type, member, { public: true }, asB), []);
      assert.deepEqual(vcNames(type, member, { public: true }, { ...asB, memberRule: deny }), [
        'network_service',
      ]);
      // Either network of the offering.
      assert.deepEqual(vcNames(type, {}, { service_metro_area_network: 'man-ams' }, inAms), []);
      assert.deepEqual(vcNames(type, {}, {}, inAms), ['connection']);
    }
  });

  it('hands a cloud service over to its owners, by handover and provider VLAN, in its handover network', () => {
    assert.deepEqual(vcNames('cloud_vc', { handover: 2, cloud_vlan: 300 }), []);
    assert.deepEqual(vcNames('cloud_vc', { handover: 3 }), ['handover']);
    assert.deepEqual(vcNames('cloud_vc', { handover: null }), ['handover']);
    assert.deepEqual(vcNames('cloud_vc', { handover: 2 }, { diversity: 1 }), ['handover']);
    assert.deepEqual(vcNames('cloud_vc', { cloud_vlan: 300 }, { provider_vlans: 'single' }), ['cloud_vlan']);
    assert.deepEqual(vcNames('cloud_vc', { cloud_vlan: null }, { provider_vlans: 'single' }), []);
    assert.deepEqual(vcNames('cloud_vc', {}, { service_metro_area_network: 'man-ams' }, inAms), [
      'connection',
    ]);
    const member = { managing_account: 'acc-b', consuming_account: 'acc-b', billing_account: 'acc-b' };
    assert.deepEqual(vcNames('cloud_vc', member, {}, { actingAccounts: ['acc-b'], callerAllowed: true }), [
      'network_service',
    ]);
  });

  it('holds a change to what it touches and what those rules depend on', () => {
    const service = circuit('p2p_vc');
    const moved = vcOrder('p2p_vc', { consuming_account: 'acc-b' });
    const concerned = (property: string) => property === 'consuming_account';
    assert.deepEqual(
      configProblems(moved, vcFacts(service, { actingAccounts: ['acc-a', 'acc-b'] }), concerned).map(
        (p) => p.name,
      ),
      ['connection'],
      'the B side is delivered in the service network',
    );
    assert.deepEqual(
      configProblems(moved, vcFacts(service, { actingAccounts: ['acc-a', 'acc-b'] }), (p) => p === 'listed'),
      [],
    );
  });
});

describe('rules between the configs of a service', () => {
  const service = { id: 'ns-vc', consuming_account: 'acc-a', joining_member_account: 'acc-b', diversity: 2 };
  const sibling = (id: string, extra: Partial<SiblingConfig> = {}): SiblingConfig => ({
    id,
    consuming_account: 'acc-a',
    handover: null,
    cloud_vlan: null,
    device: 'dev-1',
    ...extra,
  });
  const p2p = (consuming_account: string) => ({
    type: 'p2p_vc' as const,
    consuming_account,
    handover: null,
    cloud_vlan: null,
  });
  const cloud = (handover: number, cloud_vlan: number | null) => ({
    type: 'cloud_vc' as const,
    consuming_account: 'acc-a',
    handover,
    cloud_vlan,
  });

  it('lets a point-to-point circuit have one end on each side', () => {
    assert.deepEqual(siblingClashes(p2p('acc-b'), service, 'dev-1', [sibling('nsc-a')]).conflicts, []);
    const second = siblingClashes(p2p('acc-a'), service, 'dev-2', [sibling('nsc-a')]);
    assert.deepEqual(
      second.conflicts.map((c) => [c.resource_id, c.resource_property, c.remote_resource_id]),
      [['nsc-a', 'consuming_account', 'ns-vc']],
    );
    assert.match(second.reasons[0], /nsc-a is the A side/);
  });

  it('lets a cloud service have one config per handover and provider VLAN, the handovers on distinct devices', () => {
    const first = sibling('nsc-1', { handover: 1, cloud_vlan: null, device: 'dev-1' });
    const same = siblingClashes(cloud(1, null), service, 'dev-1', [first]);
    assert.deepEqual(
      same.conflicts.map((c) => c.resource_id),
      ['nsc-1'],
    );
    assert.deepEqual(siblingClashes(cloud(1, 300), service, 'dev-1', [first]).conflicts, []);
    assert.deepEqual(
      siblingClashes(cloud(1, 300), service, 'dev-1', [{ ...first, cloud_vlan: 300 }]).conflicts.length,
      1,
    );
    const shared = siblingClashes(cloud(2, null), service, 'dev-1', [first]);
    assert.deepEqual(
      shared.problems.map((p) => p.name),
      ['connection'],
    );
    assert.match(shared.problems[0].reason, /dev-1/);
    assert.deepEqual(siblingClashes(cloud(2, null), service, 'dev-2', [first]), {
      problems: [],
      conflicts: [],
      reasons: [],
    });
    assert.deepEqual(
      siblingClashes(cloud(1, 300), { ...service, diversity: 1 }, 'dev-1', [first]).problems,
      [],
    );
  });

  it('finds every clash whatever the siblings', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            handover: fc.integer({ min: 1, max: 2 }),
            cloud_vlan: fc.option(fc.integer({ min: 1, max: 3 })),
            device: fc.constantFrom('dev-1', 'dev-2'),
          }),
        ),
        fc.integer({ min: 1, max: 2 }),
        fc.option(fc.integer({ min: 1, max: 3 })),
        (others, handover, cloudVlan) => {
          const siblings = others.map((other, index) => sibling(`nsc-${index}`, other));
          const found = siblingClashes(cloud(handover, cloudVlan), service, 'dev-1', siblings);
          const expected = siblings.filter((s) => s.handover === handover && s.cloud_vlan === cloudVlan);
          assert.deepEqual(
            found.conflicts.map((c) => c.resource_id),
            expected.map((s) => s.id),
          );
        },
      ),
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
