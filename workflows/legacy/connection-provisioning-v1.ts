import {
  ActivityFailure,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { Activities } from '../../activities';
import { RESOURCE_STATE } from '../../domain/search-attributes';
import type { State } from '../../domain/states';
import { ENDED_STATES } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import {
  crossConnectCompletedSignal,
  decommissionNowSignal,
  overtaken,
  provisioningStepQuery,
  reconsiderSignal,
  retryProvisioningSignal,
  retryTestingSignal,
} from '../lifecycle';
import { SEVERITY } from '../../domain/status';
import type { ProvisionConnectionInput } from '../connection-provisioning';

const retry: RetryPolicy = {
  initialInterval: '1 second',
  maximumInterval: '1 minute',
  backoffCoefficient: 2,
};
const activities = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry });
/** Device work heartbeats: a worker dying in the middle of it is noticed within seconds. */
const device = proxyActivities<
  Pick<Activities, 'configureConnection' | 'deconfigureConnection' | 'checkConnectionOptics'>
>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '10 seconds', retry });

type Outcome = State | 'deleted';

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

/** Provisioning stops: the customer cancelled the order. */
class Cancelled extends Error {}
/** Whatever was going on stops: the connection is to be decommissioned. */
class Decommissioning extends Error {}
/** The connection is gone (deleted) while its workflow ran. */
class Gone extends Error {}

/**
 * Marks runs that end as `deleted` when the connection is found gone while they wait (before,
 * they tried to cancel it and failed on the missing row), and that mind a `reconsider` which came
 * with a wait's timeout (before, it was noticed only at the next wake-up).
 */
export const CONNECTION_GONE_ENDS = 'connection-gone-ends';

/** After an operator's retry, some steps simply try again. */
const nothing = (): Promise<void> => Promise.resolve();

/** Milliseconds from now (workflow time) to the start of `day` (UTC); 0 once it has begun. */
const untilDay = (day: string): number => Math.max(0, Date.parse(`${day}T00:00:00Z`) - Date.now());
const today = (): string => new Date(Date.now()).toISOString().slice(0, 10);

/**
 * Marks runs that leave this loop for the lifecycle framing (../connection-provisioning.ts) the next
 * time they wait in production: they start afresh as a run of the framing, with the same input.
 */
export const CONNECTION_MOVES_TO_LIFECYCLE = 'connection-moves-to-lifecycle';

/**
 * The connection's life as runs begun before the lifecycle framing took it over live it (their
 * histories replay here); each leaves for the framing at its next wait in production, so this can
 * go once no such run is left short of production.
 *
 * The life of one connection, from its order to its decommissioning. It provisions the allocated
 * ports (configure, cross-connect, test, production), then waits in production for what the API
 * asks of it: a change of the bundle or its ports, or a decommission on the policy's day. A
 * cancellation stops provisioning wherever it is and gives everything back. What is asked is read
 * from the stored connection whenever the API signals `reconsider`. Failures retrying cannot fix
 * put the connection in `error` or `operator` with a status saying what to do, until an operator
 * signals.
 */
export async function provisionConnectionV1({
  connectionId,
  crossConnectDelayMs,
}: ProvisionConnectionInput): Promise<Outcome> {
  let step = 'starting';
  let woken = false;
  let crossConnected = false;
  let retryTesting = false;
  let retryProvisioning = false;
  let decommissionNow = false;
  let state: State = 'requested';
  let changes = 0;
  setHandler(provisioningStepQuery, () => step);
  setHandler(reconsiderSignal, () => {
    woken = true;
  });
  setHandler(crossConnectCompletedSignal, () => {
    crossConnected = true;
  });
  setHandler(retryTestingSignal, () => {
    retryTesting = true;
  });
  setHandler(retryProvisioningSignal, () => {
    retryProvisioning = true;
  });
  setHandler(decommissionNowSignal, () => {
    decommissionNow = true;
  });

  const move = async (
    event: Parameters<typeof activities.moveConnection>[0]['event'],
    status: StatusEntry[],
  ) => {
    state = await activities.moveConnection({ connectionId, event, status });
    upsertSearchAttributes([{ key: RESOURCE_STATE, value: state }]);
    return state;
  };
  let loaUploaded = false;
  /** Set once the connection is being cancelled or decommissioned. */
  let leaving = false;
  const agenda = async () => {
    woken = false;
    const found = await activities.connectionAgenda({ connectionId });
    if (found) {
      state = found.state;
      loaUploaded = found.loaUploaded;
    }
    return found;
  };
  /** After a `reconsider`, stops what is going on if the connection is to be cancelled or to go. */
  const interruptions = async () => {
    if (!woken) return;
    const now = await agenda();
    if (!now && patched(CONNECTION_GONE_ENDS)) throw new Gone();
    // On its way out, the connection is taken off the device to the end.
    if (leaving) return;
    if (!now || now.cancelRequested) throw new Cancelled();
    if (now.state === 'decommission_requested') throw new Decommissioning();
  };
  /** Waits until `ready` (or `timeoutMs` passed: false), minding interruptions meanwhile. */
  const waitFor = async (ready: () => boolean, timeoutMs?: number): Promise<boolean> => {
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (;;) {
      const remaining = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      const wake = () => ready() || woken;
      const settled =
        remaining === undefined ? (await condition(wake), true) : await condition(wake, remaining);
      if (ready()) return true;
      // A wake-up that came with the timeout counts too (runs marked CONNECTION_GONE_ENDS).
      if (!settled && !(woken && patched(CONNECTION_GONE_ENDS))) return false;
      await interruptions();
      if (!settled) return false;
    }
  };
  /**
   * Commits a configuration until it is in; when the device refuses, the connection goes to
   * `error` until an operator signals retryProvisioning.
   */
  const commitUntilDone = async (
    what: string,
    commit: () => Promise<{ commitId: string }>,
    afterRetry: () => Promise<unknown>,
  ): Promise<string> => {
    for (;;) {
      try {
        return (await commit()).commitId;
      } catch (error) {
        if (!(error instanceof ActivityFailure)) throw error;
        const previous = step;
        step = 'waiting for an operator';
        // Forget earlier retries before the state shows: a signal sent once it shows must count.
        retryProvisioning = false;
        await move('fail', [
          entry(
            SEVERITY.error,
            'configuration_failed',
            `${what} on ${placement.device} failed: ${error.cause?.message ?? error.message}. Fix the device, then signal retryProvisioning.`,
          ),
        ]);
        await waitFor(() => retryProvisioning);
        step = previous;
        await afterRetry();
      }
    }
  };

  const first = await agenda();
  if (!first) return 'deleted';
  if (ENDED_STATES.includes(first.state)) return first.state;
  const found = await activities.connectionPlacement({ connectionId });
  if (!found) return 'deleted';
  const placement = found;

  /** From the allocated ports to production. */
  const provision = async () => {
    step = 'configuring ports';
    const commitId = await commitUntilDone(
      'Configuring the ports',
      () => device.configureConnection({ connectionId }),
      () => move('retry', [entry(SEVERITY.info, 'retrying', 'An operator asked to provision again.')]),
    );
    await interruptions();
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
            loaUploaded
              ? 'Your LOA is in; an operator confirms the cross-connect from your side when it is in place.'
              : `Waiting for the cross-connect from your side: upload the LOA (POST /connections/${connectionId}/loa); an operator confirms the cross-connect when it is in place.`,
          ),
        ],
      });
      // Both are needed: the subscriber's LOA, and an operator seeing the cross-connect in place.
      await waitFor(() => loaUploaded || crossConnected);
      if (!loaUploaded || !crossConnected)
        await activities.recordConnectionStatus({
          connectionId,
          status: [
            loaUploaded
              ? entry(
                  SEVERITY.notice,
                  'cross_connect_pending',
                  'Your LOA is in; an operator confirms the cross-connect from your side when it is in place.',
                )
              : entry(
                  SEVERITY.notice,
                  'loa_missing',
                  `An operator reports the cross-connect in place, but the LOA is missing: upload it (POST /connections/${connectionId}/loa).`,
                ),
          ],
        });
      await waitFor(() => loaUploaded && crossConnected);
    } else {
      await activities.recordConnectionStatus({
        connectionId,
        status: [
          entry(SEVERITY.info, 'cross_connect_ordered', 'The exchange has ordered the cross-connect.', {
            demarcs: placement.subscriber_side_demarcs,
          }),
        ],
      });
      // The exchange's cross-connect order; an operator may confirm it earlier. No delay, no timer
      // (the server fires even the shortest one only on its next tick, about a second later).
      const delay = crossConnectDelayMs ?? placement.crossConnectDelayMs;
      if (delay > 0) await waitFor(() => crossConnected, delay);
    }

    step = 'testing';
    await move('start_testing', [
      entry(SEVERITY.info, 'testing', 'The cross-connect is in place; testing the link.'),
    ]);
    for (;;) {
      const { outOfRange } = await device.checkConnectionOptics({ connectionId });
      await interruptions();
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
      await waitFor(() => retryTesting);
      step = 'testing';
      // An operator's retry starts over from requested; the ports stay configured.
      await move('retry', [entry(SEVERITY.info, 'retesting', 'An operator asked to test again.')]);
      await move('allocate', [entry(SEVERITY.info, 'retesting', 'Testing the link again.')]);
      await move('start_testing', [entry(SEVERITY.info, 'retesting', 'Testing the link again.')]);
    }
    step = 'in production';
    await move('go_live', []);
  };

  /** Provisioning stopped by a cancellation: the device is cleaned up and the ports go back. */
  const cancel = async (): Promise<Outcome> => {
    step = 'cancelling';
    await commitUntilDone(
      'Taking the ports off the device',
      () => device.deconfigureConnection({ connectionId }),
      nothing,
    );
    await activities.releaseConnectionPorts({ connectionId });
    return move('cancel', [
      entry(SEVERITY.info, 'cancelled', 'The order was cancelled; its ports went back to the exchange.'),
    ]);
  };

  /** Runs the way out; a connection deleted meanwhile ends the workflow as deleted. */
  const leave = async (way: () => Promise<Outcome>): Promise<Outcome> => {
    leaving = true;
    try {
      return await way();
    } catch (error) {
      if (error instanceof Gone) return 'deleted';
      throw error;
    }
  };

  /** A change of the bundle or of its ports, carried out on the device. */
  const reconfigure = async () => {
    step = 'changing the configuration';
    if (state === 'production')
      await move('request_change', [entry(SEVERITY.info, 'change_started', 'Changing the configuration.')]);
    changes += 1;
    const key = `connection:${connectionId}:change:${workflowInfo().runId}:${changes}`;
    await commitUntilDone(
      'Changing the configuration',
      () => device.configureConnection({ connectionId, key }),
      nothing,
    );
    await activities.releaseConnectionPorts({ connectionId, leavingOnly: true });
    step = 'in production';
    // From error (a change an operator had to fix) straight back to production.
    await move(state === 'error' ? 'go_live' : 'complete_change', []);
  };

  /** Decommissions on the decommission day (or when an operator says so), then gives everything back. */
  const decommission = async (day: string): Promise<Outcome> => {
    step = `decommissioning on ${day}`;
    await condition(() => decommissionNow, untilDay(day));
    step = 'taking the connection off the device';
    await commitUntilDone(
      'Taking the ports off the device',
      () => device.deconfigureConnection({ connectionId }),
      nothing,
    );
    await activities.releaseConnectionPorts({ connectionId });
    return move('decommission', [
      entry(
        SEVERITY.info,
        'decommissioned',
        'The connection is decommissioned; its ports went back to the exchange.',
      ),
    ]);
  };

  try {
    if (first.cancelRequested) throw new Cancelled();
    if (!first.billed && first.state !== 'decommission_requested') await provision();
    for (;;) {
      const now = await agenda();
      if (!now) return 'deleted';
      if (now.cancelRequested && !now.billed) throw new Cancelled();
      if (now.state === 'decommission_requested') throw new Decommissioning();
      if (ENDED_STATES.includes(now.state)) return now.state;
      const due = now.reservationDue !== null && now.reservationDue <= today();
      if (now.state === 'production_change_pending' || now.reservationsWaiting > 0 || due) {
        try {
          await reconfigure();
        } catch (error) {
          // A decommission asked for in the meantime moved the connection on: look again.
          if (!overtaken(error)) throw error;
        }
        continue;
      }
      step = 'in production';
      // A long life in production: start afresh before the history grows large.
      if (workflowInfo().continueAsNewSuggested || patched(CONNECTION_MOVES_TO_LIFECYCLE))
        await continueAsNew<typeof provisionConnectionV1>({ connectionId, crossConnectDelayMs });
      if (now.reservationDue === null) await condition(() => woken);
      else await condition(() => woken, untilDay(now.reservationDue));
    }
  } catch (error) {
    if (error instanceof Gone) return 'deleted';
    if (error instanceof Cancelled) return leave(cancel);
    if (error instanceof Decommissioning) {
      const now = await agenda();
      if (!now?.decommissionAt) return 'deleted';
      const day = now.decommissionAt;
      return leave(() => decommission(day));
    }
    throw error;
  }
}
