import { workflowInfo } from '@temporalio/workflow';
import type { ProvisionConnectionInput } from '../../../workflows/connection-provisioning';
import { connectionOnLifecycle } from '../../../workflows/connection-provisioning';
import { provisionConnectionV1 } from '../../../workflows/legacy/connection-provisioning-v1';

/** What the tier's workers run: every workflow of the service, and the test's own below. */
export * from '../../../workflows';

/**
 * A connection's run as begun before its workflow lived on the lifecycle framing: the first run
 * lives the loop such runs live (their histories replay through it), the runs it continues as live
 * what `provisionConnection` runs now.
 */
export async function connectionBeganBeforeFraming(input: ProvisionConnectionInput) {
  return workflowInfo().continuedFromExecutionRunId === undefined
    ? provisionConnectionV1(input)
    : connectionOnLifecycle(input);
}
