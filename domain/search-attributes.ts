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

export const SEARCH_ATTRIBUTES = [RESOURCE_TYPE, RESOURCE_ID, ACCOUNT_ID, RESOURCE_STATE] as const;

/** `name=Type` pairs in the spelling of `temporal server start-dev --search-attribute`. */
export function searchAttributeFlags(): string[] {
  return SEARCH_ATTRIBUTES.map((key) => `${key.name}=Keyword`);
}
