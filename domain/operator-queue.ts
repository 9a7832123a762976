import type { WorkflowResource } from './families';
import type { WaitingKind } from './search-attributes';

/** The resources that have a workflow of their own, by the type IX-API and the queue name them. */
export type QueuedResourceType = WorkflowResource;

/** One resource waiting on the exchange (or, on-boarding, on its member) before it can go on. */
export interface WaitingResource {
  kind: WaitingKind;
  resourceType: QueuedResourceType;
  id: string;
  /** The account whose resource it is (its managing account; an account is its own). */
  account: string;
  /** Since when it waits (ISO 8601): when its status last said why, else when it last changed. */
  since: string;
  /** Why it waits, in the words of its status (or the day it goes, for a decommission). */
  why: string;
  /** The day a decommission is due (`decommission_day` only). */
  day?: string;
  /** The id of its workflow. */
  workflowId: string;
}

/** The Temporal signal that moves a waiting resource on, by kind; none when the member must act. */
export const SIGNAL_OF: Readonly<Record<WaitingKind, string | null>> = {
  cross_connect: 'crossConnectCompleted',
  retry_provisioning: 'retryProvisioning',
  retry_testing: 'retryTesting',
  decommission_day: 'decommissionNow',
  onboarding: null,
};

/** What moves each kind on, for people: when to send the signal, or who is to act. */
export const NEXT_STEP_OF: Readonly<Record<WaitingKind, string>> = {
  cross_connect: 'once the cross-connect is in place (and, from the subscriber side, the LOA is in), signal',
  retry_provisioning: 'once the device is fixed (the status says what failed), signal',
  retry_testing: 'once what the test found is fixed (the status says what), signal',
  decommission_day: 'it goes by itself on its day; to take it off the devices now, signal',
  onboarding:
    'the member completes the account (the status says what is missing, e.g. a contact with a role: POST /role-assignments); the workflow moves on by itself',
};

/** The exact command that moves the resource on, or none when its member is to act. */
export function nextCommand(
  resource: Pick<WaitingResource, 'kind' | 'workflowId'>,
  namespace: string,
): string | null {
  const signal = SIGNAL_OF[resource.kind];
  return signal === null
    ? null
    : `temporal workflow signal --namespace ${namespace} --workflow-id ${resource.workflowId} --name ${signal}`;
}

/** The Temporal visibility query that lists the running workflows waiting for `kind` (every kind: none given). */
export const waitingQuery = (kind?: WaitingKind): string =>
  `ExecutionStatus = "Running" AND ${kind ? `IxapiWaiting = "${kind}"` : 'IxapiWaiting IS NOT NULL'}`;
