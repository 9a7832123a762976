import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  patched,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../domain/failures';
import type { WaitingKind } from '../domain/search-attributes';
import { RESOURCE_STATE, WAITING } from '../domain/search-attributes';
import type { LifecycleEvent, State } from '../domain/states';
import { ENDED_STATES, RECONSIDER_SIGNAL } from '../domain/states';
import type { StatusEntry } from '../domain/status';
import { SEVERITY } from '../domain/status';

/** The API asks the workflow to look at the stored resource: a change, decommission or cancellation. */
export const reconsiderSignal = defineSignal(RECONSIDER_SIGNAL);
/** An operator asks to test again after fixing what the status describes. */
export const retryTestingSignal = defineSignal('retryTesting');
/** An operator asks to configure again after a failure the status describes. */
export const retryProvisioningSignal = defineSignal('retryProvisioning');
/** An operator decommissions a resource now rather than on its decommission day. */
export const decommissionNowSignal = defineSignal('decommissionNow');
/** An operator (or the subscriber's LOA process) reports a connection's cross-connect done. */
export const crossConnectCompletedSignal = defineSignal('crossConnectCompleted');
/** Where the resource stands, for operators in the Temporal UI. */
export const provisioningStepQuery = defineQuery<string>('provisioningStep');

export type Outcome = State | 'deleted';

/** What every stateful resource's stored agenda tells its workflow. */
export interface LifecycleAgenda {
  state: State;
  /** A cancellation was asked for while provisioning was under way. */
  cancelRequested: boolean;
  /** Whether the resource went into production once (billing started). */
  billed: boolean;
  /** The day of a requested decommission. */
  decommissionAt: string | null;
}

export const statusEntry = (
  severity: number,
  tag: string,
  message: string,
  attrs: Record<string, unknown> = {},
): StatusEntry => ({ severity, tag, message, attrs, timestamp: new Date().toISOString() });

/** Marks runs that record a waiting status only when it changes (see `statusWhenChanged`). */
export const STATUS_WHEN_CHANGED = 'status-when-changed';

/**
 * Marks runs in which a move refused because the stored resource moved on meanwhile is judged by
 * what the resource now asks (see `move` in `runLifecycle`) rather than failing the workflow.
 */
export const OVERTAKEN_MOVES_LOOK_AGAIN = 'overtaken-moves-look-again';

/**
 * Records what a waiting resource waits for only when that changes (severity, tag, message and
 * attributes; the timestamp is left out), not on every look: a resource that waits long leaves its
 * record, and the collections listing it, alone meanwhile.
 */
export function statusWhenChanged(
  record: (status: StatusEntry[]) => Promise<unknown>,
  /** Record on every look, as runs begun before this rule did (they replay that way). */
  everyLook = false,
): (entry: StatusEntry) => Promise<void> {
  let said = '';
  return async (entry) => {
    const { timestamp: _when, ...what } = entry;
    const saying = JSON.stringify(what);
    if (saying === said && !everyLook) return;
    await record([entry]);
    said = saying;
  };
}

/** Marks runs that say what they wait for in the `IxapiWaiting` search attribute (see `waitingFor`). */
export const WAITING_ATTRIBUTE = 'waiting-attribute';

/**
 * Runs `wait` with the `IxapiWaiting` search attribute saying what the run waits for, and takes it
 * away once the wait is over however it ends, so that operators find what waits on them. Runs
 * begun before this rule say nothing (they replay that way).
 */
export async function waitingFor<T>(kind: WaitingKind, wait: () => Promise<T>): Promise<T> {
  if (!patched(WAITING_ATTRIBUTE)) return wait();
  upsertSearchAttributes([{ key: WAITING, value: kind }]);
  try {
    return await wait();
  } finally {
    upsertSearchAttributes([{ key: WAITING, value: null }]);
  }
}

/** Provisioning stops: the customer cancelled the order. */
class Cancelled extends Error {}
/** Whatever was going on stops: the resource is to be decommissioned. */
class Decommissioning extends Error {}
/** The resource is gone (deleted) while it was being taken off the devices. */
class Gone extends Error {}

/** A state change refused because the stored resource moved on meanwhile (a DELETE came in). */
export const overtaken = (error: unknown): boolean =>
  error instanceof ActivityFailure &&
  error.cause instanceof ApplicationFailure &&
  error.cause.type === FAILURE_TYPES.invalidTransition;

/** Milliseconds from now (workflow time) to the start of `day` (UTC); 0 once it has begun. */
export const untilDay = (day: string): number => Math.max(0, Date.parse(`${day}T00:00:00Z`) - Date.now());

/** What a running lifecycle offers the steps of one kind of resource. */
export interface Frame<A extends LifecycleAgenda> {
  /** Names the step under way (the `provisioningStep` query answers it). */
  step(name: string): void;
  /** The agenda as last read. */
  latest(): A;
  /**
   * Reads the agenda again, and stops what is going on if the resource is to be cancelled or to go
   * (a cancellation asked for while a step waited is never read past).
   */
  look(): Promise<A>;
  move(event: LifecycleEvent, status: StatusEntry[]): Promise<State>;
  /** Waits until `ready` (true) or `timeoutMs` passed (false), stopping for a cancellation or decommission. */
  waitFor(ready: () => boolean, timeoutMs?: number): Promise<boolean>;
  /** After a `reconsider`, stops what is going on if the resource is to be cancelled or to go. */
  interruptions(): Promise<void>;
  /**
   * Device work until it is done: when it fails for good, the resource goes to `error` with a
   * status saying so until an operator signals retryProvisioning, then `afterRetry` runs and the
   * work is tried again.
   */
  untilDone<T>(what: string, work: () => Promise<T>, afterRetry?: () => Promise<unknown>): Promise<T>;
  /** Puts the resource in `operator` with `status` until an operator signals retryTesting. */
  escalate(status: StatusEntry[]): Promise<void>;
  /**
   * Tests the resource (it moves to `testing`, the status saying `testing`) until `check` finds
   * nothing wrong. Whenever it finds something, the resource waits in `operator` with the status
   * `trouble` makes of it until an operator signals retryTesting; then `redo` runs, if given, and
   * the test starts over from `requested`, the statuses saying `again`.
   */
  test(spec: {
    testing: string;
    check: () => Promise<string[]>;
    trouble: (found: string[]) => StatusEntry;
    redo?: () => Promise<unknown>;
    again: { allocate: string; testing: string };
  }): Promise<void>;
}

/** The steps that make one kind of resource what it is; the framing around them is shared. */
export interface Lifecycle<A extends LifecycleAgenda> {
  agenda(): Promise<A | null>;
  move(event: LifecycleEvent, status: StatusEntry[]): Promise<State>;
  /** From the order to production. */
  provision(frame: Frame<A>): Promise<void>;
  /** Whether the agenda asks for a change of what the devices carry. */
  changeAsked(agenda: A): boolean;
  /**
   * A day in production on which the resource has something to do unasked (a part of it that
   * goes on its day): the workflow wakes then and asks `changeAsked` again. None by default.
   */
  wakeOn?(agenda: A): string | null;
  /** Carries out the change on the devices (the state is `production_change_pending`, or `error` after a retry). */
  reconfigure(frame: Frame<A>): Promise<void>;
  /** Takes the resource off the devices before it is cancelled or decommissioned. */
  teardown(frame: Frame<A>): Promise<void>;
  /** Starts afresh with the same input (continue-as-new) when the history grows long. */
  continueAsNew(): Promise<never>;
  /** Status messages for the two ways out. */
  farewell: { cancelled: string; decommissioned: string };
}

/**
 * The life of one stateful resource, written once: provision it (unless it went live before),
 * then wait in production for what the API asks: a change, carried out on the devices and back to
 * production; a decommission, carried out on its day (or when an operator signals decommissionNow).
 * A cancellation stops provisioning wherever it is and takes everything off the devices. What is
 * asked is read from the stored resource whenever the API signals `reconsider`.
 */
export async function runLifecycle<A extends LifecycleAgenda>(lifecycle: Lifecycle<A>): Promise<Outcome> {
  let step = 'starting';
  let woken = false;
  let retryTesting = false;
  let retryProvisioning = false;
  let decommissionNow = false;
  setHandler(provisioningStepQuery, () => step);
  setHandler(reconsiderSignal, () => {
    woken = true;
  });
  setHandler(retryTestingSignal, () => {
    retryTesting = true;
  });
  setHandler(retryProvisioningSignal, () => {
    retryProvisioning = true;
  });
  setHandler(decommissionNowSignal, () => {
    decommissionNow = true;
  });

  let latest: A | null = await lifecycle.agenda();
  if (!latest) return 'deleted';
  if (ENDED_STATES.includes(latest.state)) return latest.state;
  let state: State = latest.state;
  /**
   * Set once the resource is on its way out (cancelled or decommissioned): what the API asks then
   * is read, but interrupts nothing, so a write during the teardown cannot end it halfway.
   */
  let leaving = false;

  const look = async (): Promise<A> => {
    woken = false;
    const found = await lifecycle.agenda();
    if (!found) throw leaving ? new Gone() : new Cancelled();
    latest = found;
    state = found.state;
    return found;
  };
  const interrupting = (now: A) => {
    if (leaving) return;
    if (now.cancelRequested) throw new Cancelled();
    if (now.state === 'decommission_requested') throw new Decommissioning();
  };
  const move = async (event: LifecycleEvent, status: StatusEntry[]) => {
    try {
      state = await lifecycle.move(event, status);
    } catch (error) {
      // A DELETE got in first: a cancellation or a decommission, which the resource now asks for,
      // takes over wherever the workflow was (also after a first attempt of this very move went
      // through and only its answer was lost). Any other refusal fails the workflow as before.
      if (!leaving && overtaken(error) && patched(OVERTAKEN_MOVES_LOOK_AGAIN)) interrupting(await look());
      throw error;
    }
    upsertSearchAttributes([{ key: RESOURCE_STATE, value: state }]);
    return state;
  };
  const interruptions = async () => {
    if (!woken) return;
    interrupting(await look());
  };
  const waitFor = async (ready: () => boolean, timeoutMs?: number): Promise<boolean> => {
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (;;) {
      const remaining = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      const wake = () => ready() || woken;
      const settled =
        remaining === undefined ? (await condition(wake), true) : await condition(wake, remaining);
      if (ready()) return true;
      // A wake-up that came with the timeout counts too: what it announced is not lost.
      await interruptions();
      if (!settled) return false;
    }
  };
  const frame: Frame<A> = {
    step: (name) => {
      step = name;
    },
    latest: () => latest!,
    async look() {
      const now = await look();
      interrupting(now);
      return now;
    },
    move,
    waitFor,
    interruptions,
    async untilDone(
      what,
      work,
      afterRetry = () =>
        move('retry', [statusEntry(SEVERITY.info, 'retrying', 'An operator asked to try again.')]),
    ) {
      for (;;) {
        try {
          return await work();
        } catch (error) {
          if (!(error instanceof ActivityFailure)) throw error;
          const previous = step;
          step = 'waiting for an operator';
          // Forget earlier retries before the state shows: a signal sent once it shows must count.
          retryProvisioning = false;
          await move('fail', [
            statusEntry(
              SEVERITY.error,
              'configuration_failed',
              `${what} failed: ${error.cause?.message ?? error.message}. Fix the device, then signal retryProvisioning.`,
            ),
          ]);
          await waitingFor('retry_provisioning', () => waitFor(() => retryProvisioning));
          step = previous;
          await afterRetry();
        }
      }
    },
    async escalate(status) {
      const previous = step;
      step = 'waiting for an operator';
      retryTesting = false;
      await move('escalate', status);
      await waitingFor('retry_testing', () => waitFor(() => retryTesting));
      step = previous;
    },
    async test({ testing, check, trouble, redo, again }) {
      step = 'testing';
      await move('start_testing', [statusEntry(SEVERITY.info, 'testing', testing)]);
      for (;;) {
        const found = await check();
        await interruptions();
        if (!found.length) return;
        await frame.escalate([trouble(found)]);
        if (redo) await redo();
        // An operator's retry starts over from requested.
        await move('retry', [statusEntry(SEVERITY.info, 'retesting', 'An operator asked to test again.')]);
        await move('allocate', [statusEntry(SEVERITY.info, 'retesting', again.allocate)]);
        await move('start_testing', [statusEntry(SEVERITY.info, 'retesting', again.testing)]);
      }
    },
  };

  const nothing = () => Promise.resolve();
  /** Runs the way out; a resource deleted meanwhile ends the workflow as deleted. */
  const leave = async (way: () => Promise<Outcome>): Promise<Outcome> => {
    leaving = true;
    try {
      return await way();
    } catch (error) {
      if (error instanceof Gone) return 'deleted';
      throw error;
    }
  };
  const cancel = async (): Promise<Outcome> => {
    step = 'cancelling';
    await lifecycle.teardown({ ...frame, untilDone: (what, work) => frame.untilDone(what, work, nothing) });
    return move('cancel', [statusEntry(SEVERITY.info, 'cancelled', lifecycle.farewell.cancelled)]);
  };
  const decommission = async (day: string): Promise<Outcome> => {
    step = `decommissioning on ${day}`;
    const onItsDay = () => condition(() => decommissionNow, untilDay(day));
    await (untilDay(day) > 0 ? waitingFor('decommission_day', onItsDay) : onItsDay());
    step = 'taking it off the devices';
    await lifecycle.teardown({ ...frame, untilDone: (what, work) => frame.untilDone(what, work, nothing) });
    return move('decommission', [
      statusEntry(SEVERITY.info, 'decommissioned', lifecycle.farewell.decommissioned),
    ]);
  };

  try {
    if (latest.cancelRequested) throw new Cancelled();
    if (!latest.billed && latest.state !== 'decommission_requested') await lifecycle.provision(frame);
    for (;;) {
      // Forget earlier wake-ups before reading: a signal that comes in while the agenda is being
      // read must wake the wait below, or what it announced would wait for the next one.
      woken = false;
      const now = await lifecycle.agenda();
      if (!now) return 'deleted';
      latest = now;
      state = now.state;
      if (now.cancelRequested && !now.billed) throw new Cancelled();
      if (now.state === 'decommission_requested') throw new Decommissioning();
      if (ENDED_STATES.includes(now.state)) return now.state;
      if (lifecycle.changeAsked(now)) {
        try {
          step = 'changing the configuration';
          await lifecycle.reconfigure({
            ...frame,
            untilDone: (what, work) => frame.untilDone(what, work, nothing),
          });
          step = 'in production';
          // From error (a change an operator had to fix) straight back to production.
          if (state === 'error') await move('go_live', []);
          else if (state === 'production_change_pending') await move('complete_change', []);
        } catch (error) {
          // A decommission asked for in the meantime moved the resource on: look again.
          if (!overtaken(error)) throw error;
        }
        continue;
      }
      step = 'in production';
      // A long life in production: start afresh before the history grows large.
      if (workflowInfo().continueAsNewSuggested) await lifecycle.continueAsNew();
      const day = lifecycle.wakeOn?.(now) ?? null;
      if (day === null) await condition(() => woken);
      else await condition(() => woken, untilDay(day));
    }
  } catch (error) {
    if (error instanceof Cancelled) {
      const now = await lifecycle.agenda();
      return now ? leave(cancel) : 'deleted';
    }
    if (error instanceof Decommissioning) {
      const now = await lifecycle.agenda();
      if (!now?.decommissionAt) return 'deleted';
      const day = now.decommissionAt;
      return leave(() => decommission(day));
    }
    throw error;
  }
}
