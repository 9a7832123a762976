import type { WorkflowResource } from './families';

/**
 * The id of the workflow that owns a resource's life (`ixapi:network-service:<id>`): deterministic,
 * so that a second start of it is harmless. (Apart from the family list, so that the workflows that
 * use it do not change with every family added.)
 */
export const workflowIdOf = (resource: WorkflowResource, id: string): string =>
  `ixapi:${resource.replace(/_/g, '-')}:${id}`;
