import { proxyActivities } from '@temporalio/workflow';
import type { CeilingActivities } from './activities';

/** The same activity options as the provisioning workflow, so that both pay the same for a call. */
const { writeState } = proxyActivities<CeilingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

export interface CeilingInput {
  /** The row of the bench table this workflow owns. */
  rowId: string;
  /** How many activities to run, one after the other. */
  steps: number;
}

/**
 * The ceiling of provisioning on this machine: nothing but a chain of activities, each of which only
 * writes this workflow's state row, as many as one real provisioning schedules.
 */
export async function ceilingWorkflow({ rowId, steps }: CeilingInput): Promise<number> {
  for (let step = 1; step <= steps; step += 1) await writeState({ rowId, step });
  return steps;
}
