import type { RetryPolicy } from '@temporalio/common';
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

/** Activities are tried again from a second apart, doubling up to a minute, until they pass. */
const retry: RetryPolicy = {
  initialInterval: '1 second',
  maximumInterval: '1 minute',
  backoffCoefficient: 2,
};

/** Reads and moves of the stored resources. */
export const storeActivities = () => proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry });

/**
 * Work on devices, route servers and cloud providers. It heartbeats: a worker dying in the middle
 * of it is noticed within seconds.
 */
export const remoteActivities = <K extends keyof Activities>() =>
  proxyActivities<Pick<Activities, K>>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '10 seconds',
    retry,
  });
