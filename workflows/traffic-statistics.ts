import {
  ActivityFailure,
  continueAsNew,
  defineQuery,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { SamplingRound } from '../activities/traffic';

/** A round that cannot finish is given up after a few tries: the next one comes soon anyway. */
const { sampleTraffic } = proxyActivities<Pick<Activities, 'sampleTraffic'>>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    backoffCoefficient: 2,
    maximumAttempts: 3,
  },
});

/** Where the collector stands, for operators in the Temporal UI. */
export interface TrafficCollectorStatus {
  intervalSeconds: number;
  /** Rounds since the collector first started (carried across continue-as-new). */
  rounds: number;
  lastRound: SamplingRound | null;
  /** Why the last round failed, until one succeeds again. */
  lastError: string | null;
}

export const trafficCollectorStatusQuery = defineQuery<TrafficCollectorStatus>('trafficCollectorStatus');

export interface CollectTrafficStatisticsInput {
  /** Seconds between samples; samples are taken on multiples of it. */
  intervalSeconds: number;
  /** Rounds done by the runs before this one. */
  rounds?: number;
}

/** A run hands over to a new one after this many rounds at the latest, keeping histories short. */
const ROUNDS_PER_RUN = 500;

/**
 * Samples the traffic counters of everything in service once per interval, for ever: it waits for
 * the next multiple of the interval, runs one sampling round, and continues as new whenever
 * Temporal suggests it. A round that fails is a missed sample (the aggregates' `accuracy` shows
 * it), never the end of the collector.
 */
export async function collectTrafficStatistics({
  intervalSeconds,
  rounds = 0,
}: CollectTrafficStatisticsInput): Promise<never> {
  const status: TrafficCollectorStatus = { intervalSeconds, rounds, lastRound: null, lastError: null };
  setHandler(trafficCollectorStatusQuery, () => status);
  const intervalMs = intervalSeconds * 1000;
  for (let round = 0; ; round += 1) {
    if (round >= ROUNDS_PER_RUN || workflowInfo().continueAsNewSuggested)
      return continueAsNew<typeof collectTrafficStatistics>({ intervalSeconds, rounds: status.rounds });
    await sleep(intervalMs - (Date.now() % intervalMs));
    try {
      status.lastRound = await sampleTraffic({ intervalSeconds });
      status.lastError = null;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      status.lastError = error.cause?.message ?? error.message;
    }
    status.rounds += 1;
  }
}
