import assert from 'node:assert/strict';
import fc from 'fast-check';
import type {
  BgpSession,
  ConfigChange,
  DeviceIntent,
  InterfaceState,
  LagConfig,
  ServiceAttachment,
} from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import type { DeviceSnapshot } from '../../drivers/intent';
import { applyChanges, inverseOf, planChanges } from '../../drivers/intent';

const NAMES = ['et-0/0/0', 'et-0/0/1', 'et-0/0/2', 'et-0/0/3', 'et-0/0/4'];

const port = (name: string, extra: Partial<InterfaceState> = {}): InterfaceState => ({
  name,
  description: '',
  enabled: false,
  speed: 100000,
  lag: null,
  operUp: false,
  ...extra,
});

function snapshotOf(
  lags: LagConfig[] = [],
  services: ServiceAttachment[] = [],
  sessions: BgpSession[] = [],
): DeviceSnapshot {
  const interfaces = new Map(NAMES.map((name) => [name, port(name)]));
  for (const lag of lags)
    for (const member of lag.members) interfaces.set(member, port(member, { lag: lag.name }));
  return {
    interfaces,
    lags: new Map(lags.map((lag) => [lag.name, lag])),
    services: new Map(services.map((service) => [service.name, service])),
    bgpSessions: new Map(sessions.map((session) => [session.name, session])),
  };
}

const service = (
  name: string,
  parent: string,
  tags: Pick<ServiceAttachment, 'vlanType' | 'outerVlan' | 'innerVlan'>,
  extra: Partial<ServiceAttachment> = {},
): ServiceAttachment => ({
  name,
  description: '',
  parent,
  ...tags,
  macs: [],
  macFilter: false,
  rateLimit: null,
  segment: 'ns-test',
  isolated: false,
  ...extra,
});
const untagged = { vlanType: 'port', outerVlan: null, innerVlan: null } as const;
const dot1q = (tag: number) => ({ vlanType: 'dot1q', outerVlan: tag, innerVlan: null }) as const;
const qinq = (outer: number, inner: number) =>
  ({ vlanType: 'qinq', outerVlan: outer, innerVlan: inner }) as const;

const comparable = (snapshot: DeviceSnapshot) => ({
  interfaces: [...snapshot.interfaces.values()].sort((x, y) => x.name.localeCompare(y.name)),
  lags: [...snapshot.lags.values()]
    .map((lag) => ({ ...lag, members: [...lag.members].sort() }))
    .sort((x, y) => x.name.localeCompare(y.name)),
  services: [...snapshot.services.values()].sort((x, y) => x.name.localeCompare(y.name)),
  bgpSessions: [...snapshot.bgpSessions.values()].sort((x, y) => x.name.localeCompare(y.name)),
});

const lagArbitrary = fc.record({
  name: fc.constantFrom('ae0', 'ae1', 'ae2'),
  description: fc.constantFrom('', 'peering'),
  mode: fc.constantFrom('lacp' as const, 'static' as const),
  members: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
});

const intentArbitrary: fc.Arbitrary<DeviceIntent> = fc.record({
  device: fc.constant('dev-1'),
  interfaces: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...NAMES),
      description: fc.constantFrom('', 'cust-1'),
      enabled: fc.boolean(),
    }),
    { selector: (i) => i.name, maxLength: 4 },
  ),
  lags: fc.uniqueArray(
    lagArbitrary.map((lag): LagConfig => ({ ...lag, lacpTimeout: lag.mode === 'lacp' ? 'slow' : null })),
    { selector: (lag) => lag.name, maxLength: 2 },
  ),
  removeLags: fc.uniqueArray(fc.constantFrom('ae0', 'ae1', 'ae2'), { maxLength: 2 }),
});

/** Plans an intent, or says the device would refuse it. */
function plan(snapshot: DeviceSnapshot, intent: DeviceIntent) {
  try {
    return planChanges(snapshot, intent);
  } catch (error) {
    assert.ok(error instanceof DriverError && error.code === 'invalid-config', String(error));
    return undefined;
  }
}

describe('device intents', () => {
  const existing: LagConfig = {
    name: 'ae0',
    description: '',
    mode: 'lacp',
    lacpTimeout: 'fast',
    members: [NAMES[0], NAMES[1]],
  };

  it('plans nothing for what already runs', () => {
    assert.deepEqual(
      planChanges(snapshotOf([existing]), {
        device: 'd',
        lags: [{ ...existing, members: [NAMES[1], NAMES[0]] }],
      }),
      [],
    );
  });

  it('moves members between LAGs and reports each interface once', () => {
    const changes = planChanges(snapshotOf([existing]), {
      device: 'd',
      lags: [{ ...existing, members: [NAMES[0], NAMES[2]] }],
    });
    assert.deepEqual(
      changes.map((c) => `${c.kind} ${c.name} ${c.action}`),
      [`interface ${NAMES[1]} update`, `interface ${NAMES[2]} update`, 'lag ae0 update'],
    );
  });

  it('refuses a member in two LAGs, unknown interfaces and inconsistent LACP settings', () => {
    const refused: DeviceIntent[] = [
      {
        device: 'd',
        lags: [{ name: 'ae1', description: '', mode: 'static', lacpTimeout: null, members: [NAMES[1]] }],
      },
      { device: 'd', interfaces: [{ name: 'et-9/9/9', description: '', enabled: true }] },
      {
        device: 'd',
        lags: [{ name: 'ae1', description: '', mode: 'lacp', lacpTimeout: null, members: [NAMES[3]] }],
      },
      { device: 'd', lags: [{ ...existing }], removeLags: ['ae0'] },
    ];
    for (const intent of refused)
      assert.equal(plan(snapshotOf([existing]), intent), undefined, JSON.stringify(intent));
  });

  it('refuses members of different speeds', () => {
    const snapshot = snapshotOf();
    (snapshot.interfaces as Map<string, InterfaceState>).set(NAMES[4], port(NAMES[4], { speed: 10000 }));
    const intent: DeviceIntent = {
      device: 'd',
      lags: [
        { name: 'ae1', description: '', mode: 'static', lacpTimeout: null, members: [NAMES[3], NAMES[4]] },
      ],
    };
    assert.throws(() => planChanges(snapshot, intent), /different speeds/);
  });

  it('commits to a state that plans nothing more, and rolls back to where it started', () => {
    fc.assert(
      fc.property(intentArbitrary, fc.boolean(), (intent, withExisting) => {
        const start = snapshotOf(withExisting ? [existing] : []);
        const changes = plan(start, intent);
        if (changes === undefined) return;
        const after = applyChanges(start, changes);
        assert.deepEqual(plan(after, intent), [], 'the same intent again changes nothing');
        assert.deepEqual(comparable(applyChanges(after, inverseOf(changes))), comparable(start));
        // Every interface points at the LAG that lists it, and at no other.
        for (const i of after.interfaces.values()) {
          const listing = [...after.lags.values()].filter((lag) => lag.members.includes(i.name));
          assert.deepEqual(
            listing.map((lag) => lag.name),
            i.lag ? [i.lag] : [],
          );
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** The tag rules, said plainly: may these two services sit on the same parent? */
function compatibleTags(x: ServiceAttachment, y: ServiceAttachment): boolean {
  if (x.vlanType === 'port' || y.vlanType === 'port') return false;
  if (x.vlanType === 'dot1q' && y.vlanType === 'dot1q') return x.outerVlan !== y.outerVlan;
  if (x.vlanType === 'qinq' && y.vlanType === 'qinq')
    return x.outerVlan !== y.outerVlan || x.innerVlan !== y.innerVlan;
  return x.outerVlan !== y.outerVlan;
}

const tagsArbitrary = fc.oneof(
  { arbitrary: fc.constant(untagged), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 3 }).map(dot1q), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 2 }))
      .map(([o, i]) => qinq(o, i)),
    weight: 3,
  },
);

const serviceArbitrary = fc
  .record({
    name: fc.constantFrom('svc-a', 'svc-b', 'svc-c'),
    parent: fc.constantFrom(...NAMES, 'ae0', 'ae1', 'ae2'),
    tags: tagsArbitrary,
    macs: fc.constantFrom<string[]>([], ['02:00:00:00:00:01'], ['02:00:00:00:00:02', '02:00:00:00:00:01']),
    macFilter: fc.boolean(),
    rateLimit: fc.constantFrom(null, 1000),
  })
  .map(({ name, parent, tags, ...extra }) => service(name, parent, tags, extra));

const withServicesArbitrary: fc.Arbitrary<DeviceIntent> = fc
  .record({
    base: intentArbitrary,
    services: fc.uniqueArray(serviceArbitrary, { selector: (s) => s.name, maxLength: 3 }),
    removeServices: fc.uniqueArray(fc.constantFrom('svc-a', 'svc-b', 'svc-c'), { maxLength: 2 }),
  })
  .map(({ base, ...services }) => ({ ...base, ...services }));

/** Where the service sits in `snapshot`, if that is nowhere it can: a missing parent or a LAG member. */
function misplaced(snapshot: DeviceSnapshot): string[] {
  return [...snapshot.services.values()]
    .filter((s) => !snapshot.lags.has(s.parent) && snapshot.interfaces.get(s.parent)?.lag !== null)
    .map((s) => `${s.name} on ${s.parent}`);
}

/** Applies changes one at a time, asserting no service is ever misplaced on the way. */
function applyStepwise(start: DeviceSnapshot, changes: readonly ConfigChange[]): DeviceSnapshot {
  let state = start;
  for (const change of changes) {
    state = applyChanges(state, [change]);
    assert.deepEqual(misplaced(state), [], `after ${change.kind} ${change.name} ${change.action}`);
  }
  return state;
}

/** The refusal planning an intent meets, or undefined where it is accepted. */
function refusalOf(snapshot: DeviceSnapshot, intent: DeviceIntent): DriverError | undefined {
  try {
    planChanges(snapshot, intent);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof DriverError && error.code === 'invalid-config', String(error));
    return error;
  }
}

describe('services in device intents', () => {
  const ae0: LagConfig = {
    name: 'ae0',
    description: '',
    mode: 'lacp',
    lacpTimeout: 'fast',
    members: [NAMES[0], NAMES[1]],
  };
  const summary = (changes: readonly ConfigChange[]) => changes.map((c) => `${c.kind} ${c.name} ${c.action}`);

  it('creates, changes and removes services, with their MACs as a set', () => {
    const start = snapshotOf([ae0]);
    const lan = service('svc-lan', 'ae0', dot1q(100), { macs: ['02:00:00:00:00:02', '02:00:00:00:00:01'] });
    const vc = service('svc-vc', NAMES[2], qinq(200, 300), { rateLimit: 1000 });
    const created = planChanges(start, { device: 'd', services: [vc, lan] });
    assert.deepEqual(summary(created), ['service svc-lan create', 'service svc-vc create']);
    const running = applyChanges(start, created);
    assert.deepEqual(running.services.get('svc-lan')?.macs, ['02:00:00:00:00:01', '02:00:00:00:00:02']);
    assert.deepEqual(
      planChanges(running, { device: 'd', services: [{ ...lan, macs: [...lan.macs].reverse() }, vc] }),
      [],
    );
    const changed = planChanges(running, {
      device: 'd',
      services: [
        { ...lan, macs: [] },
        { ...vc, rateLimit: 500 },
      ],
    });
    assert.deepEqual(summary(changed), ['service svc-lan update', 'service svc-vc update']);
    const filtered = planChanges(running, { device: 'd', services: [{ ...lan, macFilter: true }, vc] });
    assert.deepEqual(
      filtered.map((change) => [change.name, change.action, (change.after as ServiceAttachment).macFilter]),
      [['svc-lan', 'update', true]],
      'the MAC filter alone is a change',
    );
    const removed = planChanges(running, { device: 'd', removeServices: ['svc-vc', 'svc-lan', 'svc-none'] });
    assert.deepEqual(summary(removed), ['service svc-lan delete', 'service svc-vc delete']);
    assert.deepEqual([...applyChanges(running, removed).services.keys()], []);
  });

  it('refuses services that say something impossible of themselves', () => {
    const fine = service('svc-1', NAMES[2], dot1q(100));
    const refused: Array<[Partial<ServiceAttachment>, RegExp]> = [
      [{ name: '' }, /not a valid name/],
      [{ name: 'svc 1' }, /not a valid name/],
      [{ description: 'x'.repeat(241) }, /description longer/],
      [{ ...untagged, outerVlan: 100 }, /port service takes no tags/],
      [{ ...dot1q(100), vlanType: 'dot1q', outerVlan: null }, /dot1q tag null/],
      [dot1q(0), /dot1q tag 0/],
      [dot1q(4095), /dot1q tag 4095/],
      [{ ...dot1q(100), innerVlan: 5 }, /dot1q tag 100 takes no inner tag/],
      [{ ...qinq(100, 5), innerVlan: null }, /qinq tags 100\/null/],
      [qinq(100, 4095), /qinq tags 100\/4095/],
      [qinq(1.5, 5), /qinq tags 1.5\/5/],
      [{ vlanType: 'vxlan' as ServiceAttachment['vlanType'] }, /unknown VLAN type vxlan/],
      [{ macs: ['02:00:00:00:00:0A'] }, /not lower-case and colon-separated/],
      [{ macs: ['02-00-00-00-00-0a'] }, /not lower-case and colon-separated/],
      [{ macs: ['01:00:5e:00:00:01'] }, /01:00:5e:00:00:01 is not a unicast address/],
      [{ macs: ['ff:ff:ff:ff:ff:ff'] }, /not a unicast address/],
      [{ macs: ['02:00:00:00:00:01', '02:00:00:00:00:01'] }, /names a MAC twice/],
      [{ macFilter: undefined }, /macFilter is not true or false/],
      [{ macFilter: 1 as unknown as boolean }, /macFilter is not true or false/],
      [{ rateLimit: 0 }, /rate limit 0/],
      [{ rateLimit: -10 }, /rate limit -10/],
      [{ rateLimit: 2.5 }, /rate limit 2.5/],
    ];
    for (const [change, message] of refused) {
      const error = refusalOf(snapshotOf(), { device: 'd', services: [{ ...fine, ...change }] });
      assert.match(error?.message ?? 'accepted', message, JSON.stringify(change));
    }
    assert.match(
      refusalOf(snapshotOf(), { device: 'd', services: [fine, { ...fine, parent: NAMES[3] }] })?.message ??
        '',
      /names service svc-1 twice/,
    );
    assert.match(
      refusalOf(snapshotOf(), { device: 'd', services: [fine], removeServices: ['svc-1'] })?.message ?? '',
      /both intended and removed/,
    );
  });

  it('refuses tags that collide on one parent, naming both services, the parent and the tag', () => {
    const cases: Array<[ServiceAttachment, ServiceAttachment, RegExp]> = [
      [
        service('svc-1', 'ae0', dot1q(100)),
        service('svc-2', 'ae0', dot1q(100)),
        /^services svc-1 and svc-2 on ae0 both take dot1q tag 100$/,
      ],
      [
        service('svc-1', 'ae0', dot1q(100)),
        service('svc-2', 'ae0', qinq(100, 7)),
        /^service svc-2 on ae0: qinq outer tag 100 is the tag of dot1q service svc-1$/,
      ],
      [
        service('svc-1', 'ae0', qinq(100, 7)),
        service('svc-2', 'ae0', dot1q(100)),
        /^service svc-1 on ae0: qinq outer tag 100 is the tag of dot1q service svc-2$/,
      ],
      [
        service('svc-1', 'ae0', qinq(100, 7)),
        service('svc-2', 'ae0', qinq(100, 7)),
        /^services svc-1 and svc-2 on ae0 both take qinq tags 100\/7$/,
      ],
      [
        service('svc-1', 'ae0', untagged),
        service('svc-2', 'ae0', dot1q(100)),
        /^service svc-1 on ae0: a port service takes the whole of ae0, yet service svc-2 \(dot1q tag 100\)/,
      ],
      [
        service('svc-1', 'ae0', qinq(100, 7)),
        service('svc-2', 'ae0', untagged),
        /^service svc-2 on ae0: a port service takes the whole of ae0, yet service svc-1 \(qinq tags 100\/7\)/,
      ],
      [
        service('svc-1', NAMES[2], untagged),
        service('svc-2', NAMES[2], untagged),
        /^service svc-1 on et-0\/0\/2: a port service takes the whole of et-0\/0\/2, yet service svc-2 \(untagged\)/,
      ],
    ];
    for (const [running, intended, message] of cases) {
      // Whether the first is on the device already or comes in the same intent.
      const against = refusalOf(snapshotOf([ae0], [running]), { device: 'd', services: [intended] });
      const together = refusalOf(snapshotOf([ae0]), { device: 'd', services: [intended, running] });
      assert.match(against?.message ?? 'accepted', message);
      assert.match(together?.message ?? 'accepted', message);
    }
  });

  it('accepts the same tags on other parents, qinq services sharing an outer tag, and tags freed in the same intent', () => {
    const start = snapshotOf(
      [ae0],
      [service('svc-1', 'ae0', dot1q(100)), service('svc-2', 'ae0', qinq(200, 1))],
    );
    const accepted: DeviceIntent[] = [
      {
        device: 'd',
        services: [service('svc-3', NAMES[2], dot1q(100)), service('svc-4', NAMES[3], untagged)],
      },
      {
        device: 'd',
        services: [service('svc-3', 'ae0', qinq(200, 2)), service('svc-4', 'ae0', qinq(300, 1))],
      },
      { device: 'd', services: [service('svc-3', 'ae0', dot1q(100))], removeServices: ['svc-1'] },
      {
        device: 'd',
        services: [service('svc-1', 'ae0', dot1q(200)), service('svc-2', 'ae0', qinq(100, 1))],
      },
      {
        device: 'd',
        services: [service('svc-1', NAMES[2], dot1q(100)), service('svc-3', 'ae0', dot1q(100))],
      },
      { device: 'd', services: [service('svc-3', 'ae0', untagged)], removeServices: ['svc-1', 'svc-2'] },
    ];
    for (const intent of accepted) assert.equal(refusalOf(start, intent), undefined, JSON.stringify(intent));
  });

  it('keeps a LAG or interface carrying a service until the same intent removes or moves the service', () => {
    const start = snapshotOf(
      [ae0],
      [service('svc-1', 'ae0', dot1q(100)), service('svc-2', NAMES[2], dot1q(100))],
    );
    const refusals: Array<[DeviceIntent, RegExp]> = [
      [{ device: 'd', removeLags: ['ae0'] }, /^LAG ae0 is removed while service svc-1 sits on it/],
      [
        {
          device: 'd',
          lags: [{ name: 'ae1', description: '', mode: 'static', lacpTimeout: null, members: [NAMES[2]] }],
        },
        /^interface et-0\/0\/2 would join LAG ae1 while service svc-2 sits on it/,
      ],
      [
        { device: 'd', services: [service('svc-3', NAMES[0], dot1q(200))] },
        /^service svc-3 on et-0\/0\/0: interface et-0\/0\/0 belongs to LAG ae0/,
      ],
      [
        { device: 'd', removeLags: ['ae0'], services: [service('svc-1', 'ae0', dot1q(101))] },
        /^service svc-1 on ae0: the intent removes LAG ae0/,
      ],
      [
        { device: 'd', services: [service('svc-3', 'ae9', dot1q(200))] },
        /^service svc-3 on ae9: the device has no interface or LAG ae9/,
      ],
    ];
    for (const [intent, message] of refusals)
      assert.match(refusalOf(start, intent)?.message ?? 'accepted', message);

    assert.deepEqual(
      summary(planChanges(start, { device: 'd', removeLags: ['ae0'], removeServices: ['svc-1'] })),
      [
        'service svc-1 delete',
        'lag ae0 delete',
        `interface ${NAMES[0]} update`,
        `interface ${NAMES[1]} update`,
      ],
    );
    assert.deepEqual(
      summary(
        planChanges(start, {
          device: 'd',
          removeLags: ['ae0'],
          services: [service('svc-1', NAMES[3], dot1q(100))],
        }),
      ),
      [
        'service svc-1 update',
        'lag ae0 delete',
        `interface ${NAMES[0]} update`,
        `interface ${NAMES[1]} update`,
      ],
    );
  });

  it('orders changes so that no service sits on a missing parent or a LAG member on the way, forth and back', () => {
    const start = snapshotOf(
      [ae0],
      [
        service('svc-1', 'ae0', dot1q(100)),
        service('svc-2', NAMES[3], dot1q(100)),
        service('svc-3', NAMES[2], dot1q(100)),
      ],
    );
    const rebuilt: LagConfig = { ...ae0, name: 'ae1', members: [NAMES[0], NAMES[1], NAMES[2]] };
    const intent: DeviceIntent = {
      device: 'd',
      removeLags: ['ae0'],
      lags: [rebuilt],
      // svc-1 leaves a LAG that goes and svc-3 an interface that joins one: neither parent lasts
      // until ae1 comes, so both go first and come back last. svc-2's interface stays free.
      services: [
        service('svc-1', 'ae1', dot1q(100)),
        service('svc-2', 'ae1', dot1q(200)),
        service('svc-3', 'ae1', dot1q(300)),
      ],
    };
    const changes = planChanges(start, intent);
    assert.deepEqual(summary(changes), [
      'service svc-1 delete',
      'service svc-3 delete',
      'lag ae0 delete',
      `interface ${NAMES[0]} update`,
      `interface ${NAMES[1]} update`,
      `interface ${NAMES[2]} update`,
      'lag ae1 create',
      'service svc-2 update',
      'service svc-1 create',
      'service svc-3 create',
    ]);
    const end = applyStepwise(start, changes);
    assert.deepEqual(planChanges(end, intent), []);
    assert.deepEqual(comparable(applyStepwise(end, inverseOf(changes))), comparable(start));
  });

  it('accepts exactly the services on one parent whose tags are pairwise compatible', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(tagsArbitrary, fc.boolean()), { maxLength: 6 }),
        fc.constantFrom('ae0', NAMES[3]),
        (entries, parent) => {
          const services = entries.map(([tags], i) => service(`svc-${i}`, parent, tags));
          const pairwise = (list: ServiceAttachment[]) =>
            list.every((x, i) => list.slice(i + 1).every((y) => compatibleTags(x, y)));
          // Some of them run already (when they can run together); the intent brings the rest.
          const flagged = services.filter((_, i) => entries[i][1]);
          const running = pairwise(flagged) ? flagged : [];
          const intended = services.filter((s) => !running.includes(s));
          const refusal = refusalOf(snapshotOf([ae0], running), { device: 'd', services: intended });
          assert.equal(refusal === undefined, pairwise(services), refusal?.message ?? 'accepted');
          if (refusal) assert.ok(refusal.message.includes(` on ${parent}`), refusal.message);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('commits services to a state that plans nothing more, and rolls back, never misplacing one on the way', () => {
    const running = [service('svc-a', 'ae0', dot1q(1)), service('svc-b', NAMES[2], qinq(1, 1))];
    let accepted = 0;
    fc.assert(
      fc.property(withServicesArbitrary, fc.boolean(), (intent, withExisting) => {
        const start = withExisting ? snapshotOf([ae0], running) : snapshotOf();
        const changes = plan(start, intent);
        if (changes === undefined) return;
        accepted += 1;
        const after = applyStepwise(start, changes);
        assert.deepEqual(plan(after, intent), [], 'the same intent again changes nothing');
        assert.deepEqual(comparable(applyStepwise(after, inverseOf(changes))), comparable(start));
      }),
      { numRuns: 1000 },
    );
    assert.ok(accepted > 100, `only ${accepted} intents were accepted`);
  });
});

const session = (name: string, peerAddress: string, extra: Partial<BgpSession> = {}): BgpSession => ({
  name,
  peerAsn: 64496,
  peerAddress,
  passive: true,
  password: null,
  asSet: null,
  maxPrefix: null,
  insertIxpAsn: false,
  flags: [],
  ...extra,
});

const SESSION_NAMES = ['rs-a', 'rs-b', 'rs-c', 'rs-d'];
// Few addresses, so that sessions often want the same one.
const PEER_ADDRESSES = ['192.0.2.1', '192.0.2.2', '2001:db8::1', '2001:db8::2'];

const sessionArbitrary: fc.Arbitrary<BgpSession> = fc.record({
  name: fc.constantFrom(...SESSION_NAMES),
  peerAsn: fc.integer({ min: 1, max: 4294967294 }).filter((asn) => asn !== 23456),
  peerAddress: fc.constantFrom(...PEER_ADDRESSES),
  passive: fc.boolean(),
  password: fc.constantFrom(null, 'secret', 'S3cr3t!#&~'),
  asSet: fc.constantFrom(null, 'AS-EXAMPLE', 'RIPE::AS64496:AS-CUSTOMERS'),
  maxPrefix: fc.option(fc.nat({ max: 1_000_000 })),
  insertIxpAsn: fc.boolean(),
  flags: fc.uniqueArray(fc.constantFrom('no-export', 'rpki-strict', 'graceful-shutdown'), { maxLength: 3 }),
});

/** Sessions with distinct names, keeping the first of those that share an address. */
const distinctSessionsArbitrary = fc
  .uniqueArray(sessionArbitrary, { selector: (s) => s.name, maxLength: 4 })
  .map((list) => list.filter((s, i) => list.findIndex((o) => o.peerAddress === s.peerAddress) === i));

describe('BGP sessions in device intents', () => {
  const summary = (changes: readonly ConfigChange[]) => changes.map((c) => `${c.kind} ${c.name} ${c.action}`);
  const v4 = session('rs-v4', '192.0.2.10', { passive: true, maxPrefix: 100, asSet: 'AS-EXAMPLE' });
  const v6 = session('rs-v6', '2001:db8::10', {
    passive: false,
    password: 'secret',
    flags: ['rpki-strict', 'no-export'],
  });

  it('creates, changes and removes sessions, with their flags as a set', () => {
    const start = snapshotOf();
    const created = planChanges(start, { device: 'rs', bgpSessions: [v6, v4] });
    assert.deepEqual(summary(created), ['bgp_session rs-v4 create', 'bgp_session rs-v6 create']);
    const running = applyChanges(start, created);
    assert.deepEqual(running.bgpSessions.get('rs-v6')?.flags, ['no-export', 'rpki-strict']);
    assert.deepEqual(running.bgpSessions.get('rs-v4'), v4);
    assert.deepEqual(planChanges(running, { device: 'rs', bgpSessions: [v4, v6] }), [], 'flags in any order');

    const changed = planChanges(running, {
      device: 'rs',
      bgpSessions: [
        { ...v4, maxPrefix: 200 },
        { ...v6, password: null, flags: ['no-export'] },
      ],
    });
    assert.deepEqual(summary(changed), ['bgp_session rs-v4 update', 'bgp_session rs-v6 update']);
    assert.deepEqual(changed[0].before, v4);
    assert.deepEqual(changed[1].after, { ...v6, password: null, flags: ['no-export'] });

    const removed = planChanges(running, { device: 'rs', removeBgpSessions: ['rs-v6', 'rs-v4', 'rs-none'] });
    assert.deepEqual(summary(removed), ['bgp_session rs-v4 delete', 'bgp_session rs-v6 delete']);
    assert.deepEqual([...applyChanges(running, removed).bgpSessions.keys()], []);
  });

  it('refuses sessions that say something impossible of themselves, naming the session', () => {
    const refused: Array<[Partial<BgpSession>, RegExp]> = [
      [{ name: '' }, /BGP session name "" is not a valid name/],
      [{ name: 'rs 1' }, /BGP session name "rs 1" is not a valid name/],
      [{ peerAsn: 0 }, /peer ASN 0 is not an ASN/],
      [{ peerAsn: -1 }, /peer ASN -1 is not an ASN/],
      [{ peerAsn: 4294967295 }, /peer ASN 4294967295 is not an ASN/],
      [{ peerAsn: 64496.5 }, /peer ASN 64496.5 is not an ASN/],
      [{ peerAsn: 23456 }, /peer ASN 23456 is AS_TRANS/],
      [{ peerAddress: '' }, /peer address "" is not an IPv4 or IPv6 address/],
      [{ peerAddress: 'rs1.example.net' }, /peer address "rs1.example.net"/],
      [{ peerAddress: '192.0.2.256' }, /peer address "192.0.2.256"/],
      [{ peerAddress: '192.0.2.01' }, /peer address "192.0.2.01"/],
      [{ peerAddress: '192.0.2.0/24' }, /peer address "192.0.2.0\/24"/],
      [{ peerAddress: '2001:DB8::1' }, /peer address "2001:DB8::1" .* canonical form/],
      [{ peerAddress: '2001:db8:0:0::1' }, /peer address "2001:db8:0:0::1"/],
      [{ peerAddress: '2001:0db8::1' }, /peer address "2001:0db8::1"/],
      [{ peerAddress: 'fe80::1%eth0' }, /peer address "fe80::1%eth0"/],
      [{ password: '' }, /password is not 1 to 80 printable ASCII/],
      [{ password: 'two words' }, /password/],
      [{ password: 'say"when' }, /password/],
      [{ password: "it's" }, /password/],
      [{ password: 'tab\there' }, /password/],
      [{ password: 'pässword' }, /password/],
      [{ password: 'x'.repeat(81) }, /password/],
      [{ asSet: 'A'.repeat(101) }, /AS-SET longer than 100 characters/],
      [{ maxPrefix: -1 }, /max prefix -1/],
      [{ maxPrefix: 2.5 }, /max prefix 2.5/],
      [{ flags: ['no-export', 'no-export'] }, /names a flag twice/],
      [{ flags: [''] }, /flags are not a list of names/],
    ];
    for (const [change, message] of refused) {
      const error = refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [{ ...v4, ...change }] });
      assert.match(error?.message ?? 'accepted', message, JSON.stringify(change));
      if (change.name === undefined) assert.match(error!.message, /^BGP session rs-v4: /);
    }
    const accepted: Array<Partial<BgpSession>> = [
      { peerAsn: 1 },
      { peerAsn: 4294967294 },
      { peerAsn: 23455 },
      { peerAddress: '0.0.0.1' },
      { peerAddress: '::1' },
      { peerAddress: '2001:db8:1:2:3:4:5:6' },
      { password: `!#$%&()*+,-./0123456789:;<=>?@AZ[\\]^_\`az{|}~`.padEnd(80, 'x') },
      { asSet: 'A'.repeat(100) },
      { maxPrefix: 0 },
      { flags: ['graceful-shutdown', 'no-export'] },
      { name: 'nfc:Abc_1' },
    ];
    for (const change of accepted)
      assert.equal(
        refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [{ ...v4, ...change }] })?.message,
        undefined,
        JSON.stringify(change),
      );
    assert.match(
      refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [v4, { ...v4, peerAddress: '192.0.2.11' }] })
        ?.message ?? '',
      /^the intent names BGP session rs-v4 twice$/,
    );
    assert.match(
      refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [v4], removeBgpSessions: ['rs-v4'] })?.message ??
        '',
      /^BGP session rs-v4 is both intended and removed$/,
    );
  });

  it('refuses two sessions with one peer address, running or in the same intent, and accepts an address freed in the same intent', () => {
    const start = snapshotOf([], [], [v4, v6]);
    const refusals: Array<[DeviceIntent, RegExp]> = [
      [
        { device: 'rs', bgpSessions: [session('rs-new', '192.0.2.10')] },
        /^BGP sessions rs-new and rs-v4 both peer with 192\.0\.2\.10/,
      ],
      [
        { device: 'rs', bgpSessions: [{ ...v6, peerAddress: '192.0.2.10' }] },
        /^BGP sessions rs-v4 and rs-v6 both peer with 192\.0\.2\.10/,
      ],
      [
        {
          device: 'rs',
          bgpSessions: [session('rs-x', '2001:db8::20'), session('rs-y', '2001:db8::20')],
        },
        /^BGP sessions rs-x and rs-y both peer with 2001:db8::20/,
      ],
    ];
    for (const [intent, message] of refusals)
      assert.match(refusalOf(start, intent)?.message ?? 'accepted', message, JSON.stringify(intent));
    const accepted: DeviceIntent[] = [
      { device: 'rs', bgpSessions: [session('rs-new', '192.0.2.10')], removeBgpSessions: ['rs-v4'] },
      {
        device: 'rs',
        bgpSessions: [
          { ...v4, peerAddress: '2001:db8::10' },
          { ...v6, peerAddress: '192.0.2.10' },
        ],
      },
      { device: 'rs', bgpSessions: [session('rs-new', '192.0.2.11', { peerAsn: v4.peerAsn })] },
    ];
    for (const intent of accepted) assert.equal(refusalOf(start, intent), undefined, JSON.stringify(intent));
  });

  it('removes sessions before every other change and creates or changes them after every other, in name order', () => {
    const ae0: LagConfig = {
      name: 'ae0',
      description: '',
      mode: 'static',
      lacpTimeout: null,
      members: [NAMES[0], NAMES[1]],
    };
    const start = snapshotOf(
      [ae0],
      [service('svc-1', 'ae0', dot1q(100))],
      [session('rs-b', '192.0.2.2'), session('rs-d', '192.0.2.4'), session('rs-e', '192.0.2.5')],
    );
    const changes = planChanges(start, {
      device: 'd',
      interfaces: [{ name: NAMES[2], description: 'cust-1', enabled: true }],
      removeLags: ['ae0'],
      removeServices: ['svc-1'],
      lags: [{ ...ae0, name: 'ae1', members: [NAMES[3], NAMES[4]] }],
      services: [service('svc-2', 'ae1', dot1q(100))],
      removeBgpSessions: ['rs-e', 'rs-b'],
      bgpSessions: [
        session('rs-c', '192.0.2.3'),
        session('rs-d', '192.0.2.4', { maxPrefix: 10 }),
        session('rs-a', '192.0.2.1'),
      ],
    });
    assert.deepEqual(summary(changes), [
      'bgp_session rs-b delete',
      'bgp_session rs-e delete',
      'service svc-1 delete',
      'lag ae0 delete',
      `interface ${NAMES[0]} update`,
      `interface ${NAMES[1]} update`,
      `interface ${NAMES[2]} update`,
      `interface ${NAMES[3]} update`,
      `interface ${NAMES[4]} update`,
      'lag ae1 create',
      'service svc-2 create',
      'bgp_session rs-a create',
      'bgp_session rs-c create',
      'bgp_session rs-d update',
    ]);
    assert.deepEqual(summary(inverseOf(changes)).slice(0, 3), [
      'bgp_session rs-d update',
      'bgp_session rs-c delete',
      'bgp_session rs-a delete',
    ]);
    assert.deepEqual(
      comparable(applyChanges(applyChanges(start, changes), inverseOf(changes))),
      comparable(start),
    );
  });

  it('accepts exactly the sessions whose peer addresses stay distinct, and plans them to a state it rolls back from', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        distinctSessionsArbitrary,
        fc.uniqueArray(sessionArbitrary, { selector: (s) => s.name, maxLength: 4 }),
        fc.uniqueArray(fc.constantFrom(...SESSION_NAMES, 'rs-none'), { maxLength: 3 }),
        (running, intended, removing) => {
          const start = snapshotOf(
            [],
            [],
            running.map((s) => ({ ...s, flags: [...s.flags].sort() })),
          );
          const removed = removing.filter((name) => !intended.some((s) => s.name === name));
          const intent: DeviceIntent = { device: 'rs', bgpSessions: intended, removeBgpSessions: removed };
          const expected = new Map(start.bgpSessions);
          for (const name of removed) expected.delete(name);
          for (const s of intended) expected.set(s.name, { ...s, flags: [...s.flags].sort() });
          const addresses = [...expected.values()].map((s) => s.peerAddress);
          const distinct = new Set(addresses).size === addresses.length;

          const refusal = refusalOf(start, intent);
          assert.equal(refusal === undefined, distinct, refusal?.message ?? 'accepted');
          if (refusal) return;
          accepted += 1;
          const changes = planChanges(start, intent);
          // Deletes first, then creates and updates, each group in name order.
          const deletes = changes.filter((c) => c.action === 'delete');
          assert.deepEqual(changes.slice(0, deletes.length), deletes);
          for (const group of [deletes, changes.slice(deletes.length)]) {
            const names = group.map((c) => c.name);
            assert.deepEqual(names, [...names].sort());
          }
          const after = applyChanges(start, changes);
          assert.deepEqual(comparable(after), comparable({ ...start, bgpSessions: expected }));
          assert.deepEqual(planChanges(after, intent), [], 'the same intent again changes nothing');
          assert.deepEqual(comparable(applyChanges(after, inverseOf(changes))), comparable(start));
        },
      ),
      { numRuns: 500 },
    );
    assert.ok(accepted > 100, `only ${accepted} intents were accepted`);
  });
});
