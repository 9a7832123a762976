import { workflowIdOf } from './workflow-ids';
import type { StatusEntry } from './status';
import { SEVERITY } from './status';

/** What the exchange needs of an account before it may use the account in production. */
export interface OnboardingFacts {
  accountId: string;
  hasAddress: boolean;
  /** Names of the roles assigned to contacts that the account consumes. */
  assignedRoleNames: readonly string[];
}

/** Roles an account must have a contact for before it goes to production. */
export const ONBOARDING_REQUIRED_ROLES = ['legal'] as const;

export interface OnboardingGap {
  tag: string;
  message: string;
  attrs: Record<string, unknown>;
}

/** Everything still missing for on-boarding; empty when the account may go to production. */
export function onboardingGaps(facts: OnboardingFacts): OnboardingGap[] {
  const gaps: OnboardingGap[] = [];
  if (!facts.hasAddress) {
    gaps.push({ tag: 'address_missing', message: 'The account needs a postal address.', attrs: {} });
  }
  for (const role of ONBOARDING_REQUIRED_ROLES) {
    if (!facts.assignedRoleNames.includes(role)) {
      gaps.push({
        tag: 'contact_role_missing',
        message: `Assign the role "${role}" to a contact of this account (POST /role-assignments).`,
        attrs: { role },
      });
    }
  }
  return gaps;
}

export function gapsAsStatus(gaps: readonly OnboardingGap[], timestamp: string): StatusEntry[] {
  return gaps.map((gap) => ({ severity: SEVERITY.notice, ...gap, timestamp }));
}

/** The on-boarding workflow of an account; its id is derived from the account id. */
export const onboardingWorkflowId = (accountId: string): string => workflowIdOf('account', accountId);

/** The signal that tells a waiting on-boarding workflow to look again. */
export const ACCOUNT_CHANGED_SIGNAL = 'accountChangedSignal';
