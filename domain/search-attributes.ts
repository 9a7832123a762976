import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * Custom search attributes that every provisioning workflow sets, so that operators can find
 * the workflow of a resource in the Temporal Web UI (for example `IxapiResourceId = "acc-…"`).
 * The dev stack registers them when it starts its Temporal server; production registers them
 * once with `temporal operator search-attribute create`.
 */
export const RESOURCE_TYPE = defineSearchAttributeKey('IxapiResourceType', 'KEYWORD');
export const RESOURCE_ID = defineSearchAttributeKey('IxapiResourceId', 'KEYWORD');
export const ACCOUNT_ID = defineSearchAttributeKey('IxapiAccount', 'KEYWORD');
export const RESOURCE_STATE = defineSearchAttributeKey('IxapiState', 'KEYWORD');
/**
 * What a resource's workflow waits for from the exchange (or, for `onboarding`, from the member)
 * before it can go on; absent while it waits for nothing. `IxapiWaiting = "cross_connect"` lists
 * the connections whose cross-connect an operator is to confirm.
 */
export const WAITING = defineSearchAttributeKey('IxapiWaiting', 'KEYWORD');

/**
 * The kinds of waiting: a cross-connect to confirm (`crossConnectCompleted`), device work that
 * failed (`retryProvisioning`), a test that found trouble (`retryTesting`), a decommission day to
 * come (`decommissionNow` brings it forward), an account's on-boarding (contacts or details missing).
 */
export const WAITING_KINDS = [
  'cross_connect',
  'retry_provisioning',
  'retry_testing',
  'decommission_day',
  'onboarding',
] as const;
export type WaitingKind = (typeof WAITING_KINDS)[number];

export const SEARCH_ATTRIBUTES = [RESOURCE_TYPE, RESOURCE_ID, ACCOUNT_ID, RESOURCE_STATE, WAITING] as const;

/** `name=Type` pairs in the spelling of `temporal server start-dev --search-attribute`. */
export function searchAttributeFlags(): string[] {
  return SEARCH_ATTRIBUTES.map((key) => `${key.name}=Keyword`);
}
