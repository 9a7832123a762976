import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { asFailure, moveIdempotently, notFound } from '../../activities/failures';
import { InvalidTransitionError, NotFoundError, UnableToFulfillError } from '../../domain/errors';
import { FAILURE_TYPES } from '../../domain/failures';
import { CloudProviderError } from '../../drivers/cloud/contract';
import { DriverError } from '../../drivers/contract';

/** The failure `error` becomes: its type, and whether Temporal may retry it. */
function translatedAs(error: unknown): { type: string | undefined | null; final: boolean } | 'as is' {
  const failure = asFailure(error);
  if (failure === error && !(error instanceof ApplicationFailure)) return 'as is';
  assert.ok(failure instanceof ApplicationFailure);
  return { type: failure.type, final: failure.nonRetryable === true };
}

describe('the failures activities end with', () => {
  it('leaves what may pass to Temporal, and makes what cannot final, of one vocabulary', () => {
    assert.equal(translatedAs(new DriverError('unreachable', 'no answer')), 'as is');
    assert.deepEqual(translatedAs(new DriverError('rejected', 'locked')), {
      type: 'DriverError:rejected',
      final: true,
    });
    assert.equal(translatedAs(new CloudProviderError('timeout', 'try later')), 'as is');
    assert.deepEqual(translatedAs(new CloudProviderError('invalid-request', 'no such region')), {
      type: 'CloudProviderError:invalid-request',
      final: true,
    });
    assert.deepEqual(translatedAs(new InvalidTransitionError('production', 'cancel')), {
      type: FAILURE_TYPES.invalidTransition,
      final: true,
    });
    assert.deepEqual(translatedAs(new NotFoundError('no connections with id c-1')), {
      type: FAILURE_TYPES.notFound,
      final: true,
    });
    assert.deepEqual(translatedAs(new UnableToFulfillError('vlan', 'taken')), {
      type: 'UnableToFulfillError',
      final: true,
    });
    assert.equal(translatedAs(new Error('connection reset')), 'as is');
    const already = notFound('connection c-1');
    assert.equal(asFailure(already), already);
  });

  it('moves a resource once: a retried move that got through arrives where it left off', async () => {
    let applied = 0;
    const apply = () => {
      applied += 1;
      return Promise.resolve('production' as const);
    };
    assert.equal(await moveIdempotently('connection c-1', 'testing', 'go_live', apply), 'production');
    assert.equal(await moveIdempotently('connection c-1', 'production', 'go_live', apply), 'production');
    assert.equal(applied, 1);
  });

  it('judges a move the store refused under its lock by the state the store found', async () => {
    const refusedFrom = (from: string) => () => Promise.reject(new InvalidTransitionError(from, 'go_live'));
    // A duplicate attempt moved it first: arrived.
    assert.equal(
      await moveIdempotently('connection c-1', 'testing', 'go_live', refusedFrom('production')),
      'production',
    );
    // A DELETE moved it on: a final InvalidTransition, which the workflows read as overtaken.
    await assert.rejects(
      moveIdempotently('connection c-1', 'testing', 'go_live', refusedFrom('decommission_requested')),
      (error: unknown) =>
        error instanceof ApplicationFailure &&
        error.type === FAILURE_TYPES.invalidTransition &&
        error.nonRetryable &&
        /cannot go_live from decommission_requested/.test(error.message),
    );
    await assert.rejects(
      moveIdempotently('connection c-1', undefined, 'go_live', () => Promise.resolve('production')),
      (error: unknown) => error instanceof ApplicationFailure && error.type === FAILURE_TYPES.notFound,
    );
  });
});
