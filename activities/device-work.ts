import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { ResourceKind } from '../domain/families';
import type { LifecycleEvent, State } from '../domain/states';
import type { DeviceDriver, DeviceIntent } from '../drivers/contract';
import { DriverError } from '../drivers/contract';
import { asFailure } from './failures';

/** How often an activity waiting on a device tells Temporal it is still alive. */
const HEARTBEAT_EVERY_MS = 1_000;

/**
 * Runs device work while heartbeating, so that a worker that dies in the middle of a slow device
 * call is noticed within the heartbeat timeout, not after the whole start-to-close timeout.
 * Outside an activity (tests calling the functions directly) the work just runs.
 */
export async function heartbeating<T>(work: () => Promise<T>): Promise<T> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    return work();
  }
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * Commits an intent under `key`, so a retry after a crash finds the commit instead of applying it
 * twice; a candidate overtaken by another change to the device is loaded again. `what` names the
 * resource in errors.
 */
export async function commitIntent(
  driver: DeviceDriver,
  intent: () => DeviceIntent,
  key: string,
  what: string,
): Promise<{ commitId: string }> {
  for (let attempt = 0; ; attempt += 1) {
    const wanted = intent();
    try {
      const candidate = await driver.load(wanted);
      return { commitId: (await driver.commit(candidate.id, key)).commitId };
    } catch (error) {
      const stale = error instanceof DriverError && error.code === 'stale-candidate';
      // Other changes to the same device got in first: load again, after a moment.
      if (stale && attempt < 10) {
        await sleep(10 + Math.floor(Math.random() * 40));
        continue;
      }
      // A device this busy is retried by Temporal, with backoff.
      if (stale) throw new Error(`${wanted.device} kept changing while ${what} was configured`);
      throw asFailure(error);
    }
  }
}

/** The kinds of stateful resource the worker moves along the lifecycle (domain/families.ts). */
export type { ResourceKind };

/**
 * Runs a move of a resource along the lifecycle (`move`) and may time it: the worker's metrics
 * observe how long a resource took from its order to production. It returns what `move` returns.
 */
export type ProductionTimer = (
  kind: ResourceKind,
  id: string,
  event: LifecycleEvent,
  move: () => Promise<State>,
) => Promise<State>;

/** Moves without timing anything: the worker without metrics, and tests. */
export const untimed: ProductionTimer = (_kind, _id, _event, move) => move();

/** How what a device reads back differs from what was intended, property by property. */
export function differencesOf<T extends object>(found: T | undefined, intended: T, what: string): string[] {
  if (!found) return [`${what} is missing`];
  return (Object.keys(intended) as Array<keyof T>)
    .filter((key) => JSON.stringify(found[key]) !== JSON.stringify(intended[key]))
    .map((key) => `${String(key)} is ${JSON.stringify(found[key])}, not ${JSON.stringify(intended[key])}`);
}
