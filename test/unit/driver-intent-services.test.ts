import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ConfigChange, DeviceIntent, LagConfig, ServiceAttachment } from '../../drivers/contract';
import type { DeviceSnapshot } from '../../drivers/intent';
import { applyChanges, inverseOf, planChanges } from '../../drivers/intent';
import {
  comparable,
  dot1q,
  intentArbitrary,
  NAMES,
  plan,
  qinq,
  refusalOf,
  service,
  snapshotOf,
  untagged,
} from '../support/device-intents';

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
