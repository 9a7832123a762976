import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DeviceIntent, InterfaceState, LagConfig } from '../../drivers/contract';
import { applyChanges, inverseOf, planChanges } from '../../drivers/intent';
import { comparable, intentArbitrary, NAMES, plan, port, snapshotOf } from '../support/device-intents';

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
