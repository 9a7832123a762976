import { ApplicationFailure } from '@temporalio/common';
import { DomainError, InvalidTransitionError, NotFoundError } from '../domain/errors';
import { cloudFailureType, driverFailureType, FAILURE_TYPES } from '../domain/failures';
import type { LifecycleEvent, State } from '../domain/states';
import { TRANSITIONS } from '../domain/states';
import { CloudProviderError } from '../drivers/cloud/contract';
import { DriverError } from '../drivers/contract';

/**
 * The one translation of what activities meet into what Temporal and the workflows understand: an
 * error that may pass (a device not answering, a database hiccup) is left to Temporal to retry; one
 * retrying cannot change becomes a non-retryable failure of a type from domain/failures.ts.
 */
export function asFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  if (error instanceof DriverError)
    return error.retryable
      ? error
      : ApplicationFailure.nonRetryable(error.message, driverFailureType(error.code));
  if (error instanceof CloudProviderError)
    return error.retryable
      ? error
      : ApplicationFailure.nonRetryable(error.message, cloudFailureType(error.code));
  if (error instanceof InvalidTransitionError)
    return ApplicationFailure.nonRetryable(error.message, FAILURE_TYPES.invalidTransition);
  if (error instanceof NotFoundError)
    return ApplicationFailure.nonRetryable(error.message, FAILURE_TYPES.notFound);
  // Other domain errors do not get better by retrying either.
  if (error instanceof DomainError)
    return ApplicationFailure.nonRetryable(error.message, error.constructor.name);
  return error;
}

/** Runs `work`, translating what it throws (asFailure). */
export async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asFailure(error);
  }
}

/** The resource is gone: a final failure the workflows end on. */
export const notFound = (what: string): ApplicationFailure =>
  ApplicationFailure.nonRetryable(`no ${what}`, FAILURE_TYPES.notFound);

/** Some other final failure, of a type the workflow shows its operators (`IncompleteOffering`, ...). */
export const refused = (type: string, message: string): ApplicationFailure =>
  ApplicationFailure.nonRetryable(message, type);

/**
 * Moves a resource along the lifecycle so that a retried attempt whose first one got through
 * arrives where it left off: an event the state already followed (the state is one the event
 * leads to) is left as it is; an event the state does not take fails for good as
 * `InvalidTransition`, whether seen before the move or under the row lock by the store.
 */
export async function moveIdempotently(
  what: string,
  current: State | undefined,
  event: LifecycleEvent,
  apply: () => Promise<State>,
): Promise<State> {
  if (current === undefined) throw notFound(what);
  const settle = (found: State): State => {
    const arrived = Object.values(TRANSITIONS).some((next) => next[event] === found);
    if (TRANSITIONS[found][event] === undefined && arrived) return found;
    throw ApplicationFailure.nonRetryable(
      `${what} cannot ${event} from ${found}`,
      FAILURE_TYPES.invalidTransition,
    );
  };
  if (TRANSITIONS[current][event] === undefined) return settle(current);
  try {
    return await apply();
  } catch (error) {
    // The store found another state under its lock: judge the move by that one.
    if (error instanceof InvalidTransitionError) return settle(error.from as State);
    throw error;
  }
}
