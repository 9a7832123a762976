import assert from 'node:assert/strict';
import { InvalidTransitionError } from '../../domain/errors';
import type { State } from '../../domain/states';
import { STATES, TRANSITIONS, canTransition, transition } from '../../domain/states';
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
