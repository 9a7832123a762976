import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidTransitionError } from '../../domain/errors';
import type { State } from '../../domain/states';
import {
  ACCEPTING_STATES,
  CONFIGURED_STATES,
  ENDED_STATES,
  GOING_STATES,
  IN_SERVICE_STATES,
  isGoing,
  isLive,
  LIVE_STATES,
  STATES,
  TRANSITIONS,
  canTransition,
  transition,
} from '../../domain/states';
import { loadSpec } from '../../spec';

describe('lifecycle states and transitions', () => {
  it('uses exactly the state names of the OpenAPI document', () => {
    const spec = loadSpec().components.schemas.State as { enum: string[] };
    assert.deepEqual([...STATES].sort(), [...spec.enum].sort());
  });

  it('walks the happy path from requested to archived', () => {
    let state: State = 'requested';
    for (const event of [
      'allocate',
      'start_testing',
      'go_live',
      'request_change',
      'complete_change',
    ] as const) {
      state = transition(state, event);
    }
    assert.equal(state, 'production');
    state = transition(transition(transition(state, 'request_decommission'), 'decommission'), 'archive');
    assert.equal(state, 'archived');
  });

  it("archives a decommissioned resource (the seed's one stated transition)", () => {
    assert.equal(transition('decommissioned', 'archive'), 'archived');
  });

  it('cancels only before production', () => {
    for (const from of ['requested', 'scheduled', 'allocated', 'testing'] as const) {
      assert.equal(transition(from, 'cancel'), 'cancelled');
    }
    assert.equal(canTransition('production', 'cancel'), false);
  });

  it('refuses transitions the table does not allow, with a typed error', () => {
    assert.throws(() => transition('archived', 'go_live'), InvalidTransitionError);
    assert.throws(
      () => transition('decommissioned', 'request_change'),
      (error: unknown) => {
        return (
          error instanceof InvalidTransitionError &&
          error.from === 'decommissioned' &&
          error.event === 'request_change'
        );
      },
    );
  });

  it('leaves archived as the only state without a way out, and every state reachable from requested', () => {
    const reachable = new Set<State>(['requested']);
    const queue: State[] = ['requested'];
    while (queue.length) {
      for (const to of Object.values(TRANSITIONS[queue.shift()!])) {
        if (to && !reachable.has(to)) {
          reachable.add(to);
          queue.push(to);
        }
      }
    }
    assert.deepEqual([...reachable].sort(), [...STATES].sort());
    assert.deepEqual(
      STATES.filter((s) => Object.keys(TRANSITIONS[s]).length === 0),
      ['archived'],
    );
  });

  it('lets an operator steer error and operator states out of trouble', () => {
    for (const from of ['error', 'operator'] as const) {
      assert.equal(transition(from, 'retry'), 'requested');
      assert.equal(transition(from, 'go_live'), 'production');
      assert.equal(transition(from, 'decommission'), 'decommissioned');
    }
  });
});

describe('the named sets of states', () => {
  const TROUBLE: State[] = ['error', 'operator'];

  it('nest as their names say: live within in service, in service within neither ended nor trouble', () => {
    for (const state of LIVE_STATES) assert.ok(IN_SERVICE_STATES.includes(state), state);
    for (const state of IN_SERVICE_STATES) {
      assert.ok(!ENDED_STATES.includes(state) && !TROUBLE.includes(state), state);
      assert.ok(canTransition(state, 'fail'), `${state} can fail: it is on the devices`);
    }
    assert.deepEqual(
      STATES.filter((state) => isLive(state)),
      ['production', 'production_change_pending'],
    );
  });

  it('takes new orders only on a resource being provisioned or live', () => {
    for (const state of ACCEPTING_STATES) {
      assert.ok(!isGoing(state, false), `${state} is not going`);
      assert.ok(!TROUBLE.includes(state), `${state} is not in trouble`);
    }
    for (const state of LIVE_STATES) assert.ok(ACCEPTING_STATES.has(state));
    for (const state of CONFIGURED_STATES) assert.ok(ACCEPTING_STATES.has(state));
  });

  it('are declared in domain/states.ts only', () => {
    const root = path.resolve(__dirname, '../..');
    const named = Object.entries({
      ENDED_STATES,
      GOING_STATES,
      LIVE_STATES,
      IN_SERVICE_STATES,
      CONFIGURED_STATES,
      ACCEPTING_STATES: [...ACCEPTING_STATES],
    }).map(([name, states]) => [name, [...states].sort().join()] as const);
    const folders = ['api', 'db', 'domain', 'activities', 'workflows', 'temporal', 'worker', 'drivers'];
    const files = execFileSync('git', ['ls-files', ...folders.map((f) => `${f}/*.ts`)], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => file && file !== 'domain/states.ts');
    // Every list of quoted state names, in code (`[...]`) or in SQL (`IN (...)`).
    const list = /[[(]\s*((?:['"][a-z_]+['"]\s*,\s*)+['"][a-z_]+['"])\s*,?\s*[\])]/g;
    const restated: string[] = [];
    for (const file of files) {
      for (const [, items] of readFileSync(path.join(root, file), 'utf8').matchAll(list)) {
        const states = items.split(',').map((item) => item.trim().slice(1, -1));
        if (!states.every((state) => (STATES as readonly string[]).includes(state))) continue;
        const key = [...states].sort().join();
        for (const [name, set] of named) if (set === key) restated.push(`${file}: ${name}`);
      }
    }
    assert.deepEqual(restated, []);
  });
});
