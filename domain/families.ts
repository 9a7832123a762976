import { declaredHappenings } from './declared-family';
import { MAC_FAMILY, MAC_WRITES } from './macs';
import { workflowIdOf } from './workflow-ids';

/**
 * The resource families, each declared once: what the API calls its collection, what events,
 * search attributes and metrics call one of its resources, where it is stored, where an event's
 * payload holds it, what its events say happened, and, for a stateful family, the workflow that
 * owns each resource's life. The layers derive their lists from this one: event kinds,
 * `ResourceKind`, workflow ids and starts, the operator queue's types and the metrics' resource
 * tables.
 */
interface FamilyDescriptor {
  /** The path of its collection (`network-service-configs`). */
  collection: string;
  /** Its table. */
  table: string;
  /** The property under which an event's payload holds one of its resources. */
  eventProperty: string;
  /** What its events say happened to one of its resources (`created` for `<resource>.created`). */
  happenings: readonly string[];
  /** Its resources carry an IX-API `state` that moves as they are provisioned. */
  stateful?: true;
  /** Its rows record when billing started, which their first move to production sets. */
  billed?: true;
  /** The workflow that owns the life of each of its resources, and the name of its input's id. */
  workflow?: { type: string; input: string };
}

export const FAMILIES = {
  account: {
    collection: 'accounts',
    table: 'accounts',
    eventProperty: 'account',
    happenings: ['imported', 'created', 'updated', 'deleted', 'state_changed'],
    stateful: true,
    workflow: { type: 'onboardAccount', input: 'accountId' },
  },
  contact: {
    collection: 'contacts',
    table: 'contacts',
    eventProperty: 'contact',
    happenings: ['created', 'updated', 'deleted'],
  },
  role_assignment: {
    collection: 'role-assignments',
    table: 'role_assignments',
    eventProperty: 'role_assignment',
    happenings: ['created', 'deleted'],
  },
  connection: {
    collection: 'connections',
    table: 'connections',
    eventProperty: 'connection',
    happenings: ['created', 'changed', 'state_changed', 'cancellation_requested', 'loa_uploaded'],
    stateful: true,
    billed: true,
    workflow: { type: 'provisionConnection', input: 'connectionId' },
  },
  // A port reservation is part of its connection: the connection's workflow carries it out.
  port_reservation: {
    collection: 'port-reservations',
    table: 'port_reservations',
    eventProperty: 'reservation',
    happenings: ['created', 'changed', 'state_changed', 'loa_uploaded'],
    stateful: true,
    billed: true,
  },
  ip: { collection: 'ips', table: 'ip_addresses', eventProperty: 'ip', happenings: ['created', 'changed'] },
  // Declared whole in domain/macs.ts.
  mac: {
    collection: MAC_FAMILY.collection,
    table: MAC_FAMILY.table,
    eventProperty: MAC_FAMILY.resource,
    happenings: declaredHappenings(MAC_WRITES),
  },
  member_joining_rule: {
    collection: 'member-joining-rules',
    table: 'member_joining_rules',
    eventProperty: 'member_joining_rule',
    happenings: ['created', 'changed', 'deleted'],
  },
  network_service: {
    collection: 'network-services',
    table: 'network_services',
    eventProperty: 'network_service',
    happenings: [
      'created',
      'changed',
      'state_changed',
      'cancellation_requested',
      'change_requested',
      'change_request_accepted',
      'change_request_withdrawn',
      'change_request_rejected',
    ],
    stateful: true,
    billed: true,
    workflow: { type: 'provisionNetworkService', input: 'serviceId' },
  },
  network_service_config: {
    collection: 'network-service-configs',
    table: 'network_service_configs',
    eventProperty: 'network_service_config',
    happenings: ['created', 'changed', 'state_changed', 'cancellation_requested'],
    stateful: true,
    billed: true,
    workflow: { type: 'provisionNetworkServiceConfig', input: 'configId' },
  },
  network_feature_config: {
    collection: 'network-feature-configs',
    table: 'network_feature_configs',
    eventProperty: 'network_feature_config',
    happenings: ['created', 'changed', 'state_changed', 'cancellation_requested'],
    stateful: true,
    billed: true,
    workflow: { type: 'provisionNetworkFeatureConfig', input: 'featureConfigId' },
  },
} as const satisfies Record<string, FamilyDescriptor>;

type Families = typeof FAMILIES;

/** A family as events, search attributes and metrics name its resources (`network_service_config`). */
export type FamilyResource = keyof Families;

/** The families whose resources carry a state the worker moves along the lifecycle. */
export type ResourceKind = {
  [R in FamilyResource]: Families[R] extends { stateful: true } ? R : never;
}[FamilyResource];

/** The families whose resources each have a workflow of their own. */
export type WorkflowResource = {
  [R in FamilyResource]: Families[R] extends { workflow: object } ? R : never;
}[FamilyResource];

const entries = Object.entries(FAMILIES) as [FamilyResource, FamilyDescriptor][];

/** The families, each as the resource its events name, in the order declared. */
export const FAMILY_RESOURCES: readonly FamilyResource[] = entries.map(([resource]) => resource);

/** The stateful families. */
export const RESOURCE_KINDS = entries
  .filter(([, family]) => family.stateful)
  .map(([resource]) => resource) as ResourceKind[];

/** The families whose rows record when billing started. */
export const BILLED_KINDS: ReadonlySet<ResourceKind> = new Set(
  entries.filter(([, family]) => family.billed).map(([resource]) => resource as ResourceKind),
);

/** Where a family's collection lives: its name (the API's path) and its table. */
export const storedAs = (resource: FamilyResource): { name: string; table: string } => ({
  name: FAMILIES[resource].collection,
  table: FAMILIES[resource].table,
});

export { workflowIdOf };

/** A workflow start decided in a write's transaction and sent once it has committed. */
export interface WorkflowStart {
  workflowType: string;
  workflowId: string;
  args: unknown[];
  searchAttributes: Record<string, string>;
}

/**
 * The start of the workflow that owns a new resource's life: its type, its id, its input, and the
 * search attributes by which operators find it (type, id, managing account).
 */
export function workflowStartOf(
  resource: WorkflowResource,
  created: { id: string; managing_account: string },
): WorkflowStart {
  const { type, input } = FAMILIES[resource].workflow;
  return {
    workflowType: type,
    workflowId: workflowIdOf(resource, created.id),
    args: [{ [input]: created.id }],
    searchAttributes: {
      IxapiResourceType: resource,
      IxapiResourceId: created.id,
      IxapiAccount: created.managing_account,
    },
  };
}
