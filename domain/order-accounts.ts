import type { Scope } from './authority';
import { requireActingAccount } from './authority';
import type { PropertyError } from './errors';
import type { State } from './states';

/** The properties by which an order names its accounts. */
export const ORDER_ACCOUNT_PROPERTIES = ['managing_account', 'consuming_account', 'billing_account'] as const;
export type OrderAccountProperty = (typeof ORDER_ACCOUNT_PROPERTIES)[number];

/** An order's managing, consuming and billing accounts must be accounts the caller acts for. */
export function requireOrderAccountsActedFor(
  scope: Scope,
  order: Readonly<Record<OrderAccountProperty, unknown>>,
): void {
  for (const property of ORDER_ACCOUNT_PROPERTIES) requireActingAccount(scope, property, order[property]);
}

/** What the order rules know of the accounts an order names. */
export interface OrderAccounts {
  /** The state of each account named (none where there is no such account: other rules say so). */
  states: Partial<Record<OrderAccountProperty, State>>;
  /** Whether the billing account has billing information. */
  billingAccountCanPay: boolean;
}

/**
 * An order names accounts the exchange has on-boarded: each in production (an account still
 * `requested` lacks what on-boarding asks for, its status says what), and a billing account that
 * can pay. Otherwise a resource could be provisioned, and charged, for an account the exchange
 * never accepted.
 */
export function orderAccountProblems(accounts: OrderAccounts): PropertyError[] {
  const problems: PropertyError[] = [];
  for (const property of ORDER_ACCOUNT_PROPERTIES) {
    const state = accounts.states[property];
    if (state !== undefined && state !== 'production')
      problems.push({
        name: property,
        reason: `the account is ${state}, not on-boarded (its status says what it lacks); orders name accounts in production`,
      });
  }
  if (!accounts.billingAccountCanPay)
    problems.push({ name: 'billing_account', reason: 'the billing account has no billing information' });
  return problems;
}
