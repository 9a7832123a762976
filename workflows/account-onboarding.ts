import {
  condition,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACCOUNT_CHANGED_SIGNAL } from '../domain/onboarding';
import { RESOURCE_STATE } from '../domain/search-attributes';
import type { StatusEntry } from '../domain/status';
import { waitingFor } from './lifecycle';

const { checkAccountOnboarding, recordAccountStatus, completeAccountOnboarding } =
  proxyActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
  });

/** Sent when something the on-boarding depends on changed (a contact, a role assignment, the address). */
export const accountChangedSignal = defineSignal(ACCOUNT_CHANGED_SIGNAL);
/** What on-boarding is still waiting for. */
export const onboardingGapsQuery = defineQuery<StatusEntry[]>('onboardingGapsQuery');

export interface OnboardAccountInput {
  accountId: string;
  /** How long to wait for a change before looking again anyway (milliseconds). */
  recheckIntervalMs?: number;
}

/**
 * Takes a new account from `requested` to `production` once the exchange's requirements hold,
 * keeping the account's `status` saying what is still missing meanwhile. Returns the account's
 * final state, or `deleted` when the account was deleted before it got there.
 */
export async function onboardAccount({
  accountId,
  recheckIntervalMs = 3_600_000,
}: OnboardAccountInput): Promise<string> {
  let changed = false;
  let gaps: StatusEntry[] = [];
  setHandler(accountChangedSignal, () => {
    changed = true;
  });
  setHandler(onboardingGapsQuery, () => gaps);

  for (;;) {
    changed = false;
    const found = await checkAccountOnboarding({ accountId });
    // The account was deleted while it waited: nothing is left to on-board.
    if (found === null) return 'deleted';
    gaps = found;
    if (gaps.length === 0) break;
    await recordAccountStatus({ accountId, status: gaps });
    upsertSearchAttributes([{ key: RESOURCE_STATE, value: 'requested' }]);
    await waitingFor('onboarding', () => condition(() => changed, recheckIntervalMs));
  }
  const state = await completeAccountOnboarding({ accountId });
  upsertSearchAttributes([{ key: RESOURCE_STATE, value: state }]);
  return state;
}
