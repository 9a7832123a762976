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
import type { Reconciliation, SupervisionRound } from '../activities/device-supervision';

/** A round that cannot finish is given up after a few tries: the next one comes soon anyway. */
const { superviseDevices, reconcileDevices } = proxyActivities<
  Pick<Activities, 'superviseDevices' | 'reconcileDevices'>
>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    backoffCoefficient: 2,
    maximumAttempts: 3,
  },
});

/** Where the supervisor stands, for operators in the Temporal UI. */
export interface FabricSupervisorStatus {
  intervalSeconds: number;
  /** Rounds since the supervisor first started (carried across continue-as-new). */
  rounds: number;
  /** Processes started again since the supervisor first started, newest last (the last 20). */
  restarts: string[];
  lastSupervision: SupervisionRound | null;
  lastReconciliation: Reconciliation | null;
  /** Why the last round failed, until one succeeds again. */
  lastError: string | null;
}

export const fabricSupervisorStatusQuery = defineQuery<FabricSupervisorStatus>('fabricSupervisorStatus');

export interface SuperviseFabricInput {
  /** Seconds between two rounds. */
  intervalSeconds: number;
  /** Rounds done by the runs before this one. */
  rounds?: number;
  /** Restarts seen by the runs before this one. */
  restarts?: string[];
}

/** A run hands over to a new one after this many rounds at the latest, keeping histories short. */
const ROUNDS_PER_RUN = 500;
const RESTARTS_KEPT = 20;

/**
 * Looks after the fabric for ever, one round per interval: it brings back the processes that died
 * and what they held (superviseDevices), then brings every device in line with the database
 * (reconcileDevices). The first round comes at once, so that a worker that starts it finds its
 * devices reconciled. A round that fails is retried by the next one, never the end of the supervisor.
 */
export async function superviseFabric({
  intervalSeconds,
  rounds = 0,
  restarts = [],
}: SuperviseFabricInput): Promise<never> {
  const status: FabricSupervisorStatus = {
    intervalSeconds,
    rounds,
    restarts,
    lastSupervision: null,
    lastReconciliation: null,
    lastError: null,
  };
  setHandler(fabricSupervisorStatusQuery, () => status);
  for (let round = 0; ; round += 1) {
    if (round >= ROUNDS_PER_RUN || workflowInfo().continueAsNewSuggested)
      return continueAsNew<typeof superviseFabric>({
        intervalSeconds,
        rounds: status.rounds,
        restarts: status.restarts,
      });
    try {
      status.lastSupervision = await superviseDevices();
      status.restarts = [...status.restarts, ...status.lastSupervision.restarted].slice(-RESTARTS_KEPT);
      status.lastReconciliation = await reconcileDevices();
      status.lastError = null;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      status.lastError = error.cause?.message ?? error.message;
    }
    status.rounds += 1;
    await sleep(intervalSeconds * 1000);
  }
}
