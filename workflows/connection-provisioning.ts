import {
  ActivityFailure,
  condition,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { RESOURCE_STATE } from '../domain/search-attributes';
import type { State } from '../domain/states';
import type { StatusEntry } from '../domain/status';
import { SEVERITY } from '../domain/status';

const activities = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/** An operator (or the subscriber's LOA process) reports the cross-connect done. */
export const crossConnectCompletedSignal = defineSignal('crossConnectCompleted');
/** An operator asks to test the connection again after fixing what the status describes. */
export const retryTestingSignal = defineSignal('retryTesting');
/** An operator asks to configure again after a failure the status describes. */
export const retryProvisioningSignal = defineSignal('retryProvisioning');
/** Where provisioning stands, for operators in the Temporal UI. */
export const provisioningStepQuery = defineQuery<string>('provisioningStep');

export interface ProvisionConnectionInput {
  connectionId: string;
  /** How long the exchange's own cross-connect takes (milliseconds); the lab completes it then. */
  crossConnectDelayMs?: number;
}

const entry = (
  severity: number,
  tag: string,
  message: string,
  attrs: Record<string, unknown> = {},
): StatusEntry => ({
  severity,
  tag,
  message,
  attrs,
  timestamp: new Date().toISOString(),
});

/**
 * Provisions one connection from its allocated ports to production: configures the ports and the
 * bundle on the device, waits for the cross-connect (ordered by the exchange, or done by the
 * subscriber's side and confirmed by an operator), tests the optics and hands the connection
 * over. Optics out of range put it in `operator` until an operator asks to test again.
 */
export async function provisionConnection({
  connectionId,
  crossConnectDelayMs = 2_000,
}: ProvisionConnectionInput): Promise<State | 'deleted'> {
  let step = 'starting';
  let crossConnected = false;
  let retryTesting = false;
  let retryProvisioning = false;
  setHandler(provisioningStepQuery, () => step);
  setHandler(crossConnectCompletedSignal, () => {
    crossConnected = true;
  });
  setHandler(retryTestingSignal, () => {
    retryTesting = true;
  });
  setHandler(retryProvisioningSignal, () => {
    retryProvisioning = true;
  });
  const move = async (
    event: Parameters<typeof activities.moveConnection>[0]['event'],
    status: StatusEntry[],
  ) => {
    const state = await activities.moveConnection({ connectionId, event, status });
    upsertSearchAttributes([{ key: RESOURCE_STATE, value: state }]);
    return state;
  };

  const placement = await activities.connectionPlacement({ connectionId });
  if (!placement) return 'deleted';

  step = 'configuring ports';
  let commitId: string;
  for (;;) {
    try {
      ({ commitId } = await activities.configureConnection({ connectionId }));
      break;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // Retrying did not help (the device refused, or the intent cannot work there): a person must.
      step = 'waiting for an operator';
      // Forget earlier retries before the state shows: a signal sent once it shows must count.
      retryProvisioning = false;
      await move('fail', [
        entry(
          SEVERITY.error,
          'configuration_failed',
          `Configuring the ports on ${placement.device} failed: ${error.cause?.message ?? error.message}. Fix the device, then signal retryProvisioning.`,
        ),
      ]);
      await condition(() => retryProvisioning);
      step = 'configuring ports';
      await move('retry', [entry(SEVERITY.info, 'retrying', 'An operator asked to provision again.')]);
    }
  }
  const ports = placement.ports.map((port) => port.name).join(', ');
  await move('allocate', [
    entry(SEVERITY.info, 'ports_configured', `Ports ${ports} on ${placement.device} are configured.`, {
      commitId,
    }),
  ]);

  step = 'waiting for the cross-connect';
  if (placement.cross_connect_initiator === 'subscriber') {
    await activities.recordConnectionStatus({
      connectionId,
      status: [
        entry(
          SEVERITY.notice,
          'cross_connect_pending',
          'Waiting for the cross-connect from your side: upload the LOA; an operator confirms the cross-connect when it is in place.',
        ),
      ],
    });
    await condition(() => crossConnected);
  } else {
    await activities.recordConnectionStatus({
      connectionId,
      status: [
        entry(SEVERITY.info, 'cross_connect_ordered', 'The exchange has ordered the cross-connect.', {
          demarcs: placement.subscriber_side_demarcs,
        }),
      ],
    });
    // The exchange's cross-connect order; an operator may confirm it earlier.
    await condition(() => crossConnected, crossConnectDelayMs);
  }

  step = 'testing';
  await move('start_testing', [
    entry(SEVERITY.info, 'testing', 'The cross-connect is in place; testing the link.'),
  ]);
  for (;;) {
    const { outOfRange } = await activities.checkConnectionOptics({ connectionId });
    if (!outOfRange.length) break;
    step = 'waiting for an operator';
    retryTesting = false;
    await move('escalate', [
      entry(
        SEVERITY.error,
        'optics_out_of_range',
        `Receive power out of range on ${outOfRange.join(', ')}. Check the cross-connect and the optics, then signal retryTesting.`,
        { ports: outOfRange },
      ),
    ]);
    await condition(() => retryTesting);
    step = 'testing';
    // An operator's retry starts over from requested; the ports stay configured.
    await move('retry', [entry(SEVERITY.info, 'retesting', 'An operator asked to test again.')]);
    await move('allocate', [entry(SEVERITY.info, 'retesting', 'Testing the link again.')]);
    await move('start_testing', [entry(SEVERITY.info, 'retesting', 'Testing the link again.')]);
    await sleep(0);
  }

  step = 'in production';
  return move('go_live', []);
}
