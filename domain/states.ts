import type { components } from '../spec/types';
import { InvalidTransitionError } from './errors';

/** The IX-API resource lifecycle, as the OpenAPI document names it. */
export type State = components['schemas']['State'];

/**
 * Every state, for iteration. `satisfies` keeps each entry a State, and the check below makes the
 * compiler refuse a list that misses one.
 */
export const STATES = [
  'requested',
  'allocated',
  'testing',
  'production',
  'production_change_pending',
  'decommission_requested',
  'decommissioned',
  'archived',
  'error',
  'operator',
  'scheduled',
  'cancelled',
] as const satisfies readonly State[];

/** States in which a resource has ended: it holds nothing any more and nothing provisions it. */
export const ENDED_STATES: readonly State[] = ['decommissioned', 'cancelled', 'archived'];

/**
 * States of a resource on its way out or out already. A resource in one of them, or one whose
 * cancellation was asked for while it was being provisioned, is going: what it refers to may be
 * asked to go too (no earlier than it does). Any other resource is live and holds on to what it
 * refers to.
 */
export const GOING_STATES: readonly State[] = ['decommission_requested', ...ENDED_STATES];

/** Whether a resource in `state`, with or without a cancellation asked for, is going. */
export const isGoing = (state: State, cancelRequested: boolean): boolean =>
  cancelRequested || GOING_STATES.includes(state);

/** States of a resource in production: it carries what was ordered (a change may be pending). */
export const LIVE_STATES: readonly State[] = ['production', 'production_change_pending'];

/** Whether a resource in `state` is in production. */
export const isLive = (state: State): boolean => LIVE_STATES.includes(state);

/** States of a resource configured on its devices and carrying traffic: live, or until its decommission day. */
export const IN_SERVICE_STATES: readonly State[] = [...LIVE_STATES, 'decommission_requested'];

/** States of a resource configured on its devices, tested or not: a service over it can come up. */
export const CONFIGURED_STATES: readonly State[] = ['allocated', 'testing', ...LIVE_STATES];

/**
 * States of a resource that can take something new ordered on it (a config on a connection, a
 * session on a config): being provisioned or live; not in trouble, not on its way out.
 */
export const ACCEPTING_STATES: ReadonlySet<State> = new Set<State>([
  'requested',
  'scheduled',
  'allocated',
  'testing',
  ...LIVE_STATES,
]);

type Missing = Exclude<State, (typeof STATES)[number]>;
const everyStateListed: Missing extends never ? true : Missing = true;
void everyStateListed;

/** What happened to a resource; the table below says where each event leads from each state. */
export type LifecycleEvent =
  | 'schedule'
  | 'allocate'
  | 'start_testing'
  | 'go_live'
  | 'request_change'
  | 'complete_change'
  | 'request_decommission'
  | 'decommission'
  | 'archive'
  | 'cancel'
  | 'fail'
  | 'escalate'
  | 'retry';

type Table = { readonly [S in State]: Partial<Record<LifecycleEvent, State>> };

const TROUBLE = { fail: 'error', escalate: 'operator' } as const;

/** The one table of allowed transitions, used by the API, the workflows and the tests. */
export const TRANSITIONS: Table = {
  // Before production a resource is cancelled, or (where what it set up waits for a day, as a
  // network service's does) asked to go like a live one.
  requested: {
    schedule: 'scheduled',
    allocate: 'allocated',
    go_live: 'production',
    cancel: 'cancelled',
    request_decommission: 'decommission_requested',
    ...TROUBLE,
  },
  scheduled: {
    allocate: 'allocated',
    cancel: 'cancelled',
    request_decommission: 'decommission_requested',
    ...TROUBLE,
  },
  allocated: {
    start_testing: 'testing',
    go_live: 'production',
    cancel: 'cancelled',
    request_decommission: 'decommission_requested',
    ...TROUBLE,
  },
  testing: {
    go_live: 'production',
    cancel: 'cancelled',
    request_decommission: 'decommission_requested',
    ...TROUBLE,
  },
  production: {
    request_change: 'production_change_pending',
    request_decommission: 'decommission_requested',
    ...TROUBLE,
  },
  production_change_pending: {
    complete_change: 'production',
    request_decommission: 'decommission_requested',
    ...TROUBLE,
  },
  decommission_requested: { decommission: 'decommissioned', ...TROUBLE },
  decommissioned: { archive: 'archived' },
  archived: {},
  cancelled: { archive: 'archived' },
  // An operator steers a resource out of trouble: back to the start, on to production, or out.
  error: {
    retry: 'requested',
    go_live: 'production',
    cancel: 'cancelled',
    request_decommission: 'decommission_requested',
    decommission: 'decommissioned',
    escalate: 'operator',
  },
  operator: {
    retry: 'requested',
    go_live: 'production',
    cancel: 'cancelled',
    request_decommission: 'decommission_requested',
    decommission: 'decommissioned',
    fail: 'error',
  },
};

/** The signal by which the API tells a resource's workflow to look at what is asked of it. */
export const RECONSIDER_SIGNAL = 'reconsider';

export function canTransition(from: State, event: LifecycleEvent): boolean {
  return TRANSITIONS[from][event] !== undefined;
}

/** The state that `event` leads to from `from`; throws InvalidTransitionError when it is not allowed. */
export function transition(from: State, event: LifecycleEvent): State {
  const to = TRANSITIONS[from][event];
  if (to === undefined) throw new InvalidTransitionError(from, event);
  return to;
}
