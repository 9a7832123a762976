import { patched } from '@temporalio/workflow';
import type { ProvisionConnectionInput } from '../connection-provisioning';
import { connectionOnLifecycle } from '../connection-provisioning';
import { provisionConnectionV1 } from './connection-provisioning-v1';

/** Marks runs that live on the lifecycle framing; runs begun before live the loop of their own. */
export const CONNECTION_ON_LIFECYCLE = 'connection-on-lifecycle';

/**
 * The workflow type `provisionConnection`. Runs begun before connections lived on the lifecycle
 * framing (their histories have no `connection-on-lifecycle` marker) replay through the loop they
 * began in, connection-provisioning-v1.ts; every other run is `connectionOnLifecycle`. Such a run
 * leaves the old loop the next time it waits in production, by continuing as new.
 *
 * When this folder can go: once no run of `provisionConnection` is open that started before the
 * first release with the lifecycle framing (worker code of 2026-11-27). `temporal workflow list
 * --query "WorkflowType='provisionConnection' AND ExecutionStatus='Running' AND StartTime <
 * '<that deploy time>'"` must answer nothing. Then `provisionConnection` becomes
 * `connectionOnLifecycle` behind `deprecatePatch(CONNECTION_ON_LIFECYCLE)`, and the recorded
 * histories of runs that took the old loop (those without the marker) go with this folder
 * (docs/upgrading.md, "Keeping and removing old histories").
 */
export async function provisionConnection(input: ProvisionConnectionInput) {
  if (!patched(CONNECTION_ON_LIFECYCLE)) return provisionConnectionV1(input);
  return connectionOnLifecycle(input);
}
