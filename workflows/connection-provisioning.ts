import { continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { remoteActivities, storeActivities } from './activity-proxies';
import { SEVERITY } from '../domain/status';
import type { Frame, Outcome } from './lifecycle';
import { crossConnectCompletedSignal, runLifecycle, statusEntry, waitingFor } from './lifecycle';

export interface ProvisionConnectionInput {
  connectionId: string;
  /** Overrides the worker's setting of how long the exchange's own cross-connect takes (ms). */
  crossConnectDelayMs?: number;
}
export { crossConnectCompletedSignal };

const activities = storeActivities();
const device = remoteActivities<'configureConnection' | 'deconfigureConnection' | 'checkConnectionOptics'>();

type ConnectionAgenda = NonNullable<Awaited<ReturnType<Activities['connectionAgenda']>>>;

const today = (): string => new Date(Date.now()).toISOString().slice(0, 10);

/**
 * The life of one connection (the workflow type `provisionConnection`, which runs it unless the run
 * began before it: see workflows/legacy/connection.ts), from its order to its decommissioning, on the lifecycle framing
 * every stateful resource shares (workflows/lifecycle.ts). It provisions the allocated ports
 * (configure, cross-connect, test, production), then waits in production for what the API asks of
 * it: a change of the bundle or its ports (a port reservation that joins or, on its day, leaves),
 * or a decommission on the policy's day. A cancellation stops provisioning wherever it is and gives
 * everything back. Failures retrying cannot fix put the connection in `error` or `operator` with a
 * status saying what to do, until an operator signals.
 */
export async function connectionOnLifecycle(input: ProvisionConnectionInput): Promise<Outcome> {
  const { connectionId, crossConnectDelayMs } = input;
  /** Where the ports are: read with the first agenda, and kept (what is configured follows the row). */
  let placement!: NonNullable<Awaited<ReturnType<Activities['connectionPlacement']>>>;
  let crossConnected = false;
  setHandler(crossConnectCompletedSignal, () => {
    crossConnected = true;
  });
  let changes = 0;
  const status = (entry: ReturnType<typeof statusEntry>) =>
    activities.recordConnectionStatus({ connectionId, status: [entry] });
  const onDevice = (what: string) => `${what} on ${placement.device}`;

  /** Waits for the cross-connect: the subscriber's (LOA and an operator's word) or the exchange's. */
  async function crossConnect(frame: Frame<ConnectionAgenda>) {
    const loaUploaded = () => frame.latest().loaUploaded;
    const loaIn = statusEntry(
      SEVERITY.notice,
      'cross_connect_pending',
      'Your LOA is in; an operator confirms the cross-connect from your side when it is in place.',
    );
    if (placement.cross_connect_initiator === 'subscriber') {
      await status(
        loaUploaded()
          ? loaIn
          : statusEntry(
              SEVERITY.notice,
              'cross_connect_pending',
              `Waiting for the cross-connect from your side: upload the LOA (POST /connections/${connectionId}/loa); an operator confirms the cross-connect when it is in place.`,
            ),
      );
      // Both are needed: the subscriber's LOA, and an operator seeing the cross-connect in place.
      await frame.waitFor(() => loaUploaded() || crossConnected);
      if (!loaUploaded() || !crossConnected)
        await status(
          loaUploaded()
            ? loaIn
            : statusEntry(
                SEVERITY.notice,
                'loa_missing',
                `An operator reports the cross-connect in place, but the LOA is missing: upload it (POST /connections/${connectionId}/loa).`,
              ),
        );
      await frame.waitFor(() => loaUploaded() && crossConnected);
      return;
    }
    await status(
      statusEntry(SEVERITY.info, 'cross_connect_ordered', 'The exchange has ordered the cross-connect.', {
        demarcs: placement.subscriber_side_demarcs,
      }),
    );
    // The exchange's cross-connect order; an operator may confirm it earlier. No delay, no timer
    // (the server fires even the shortest one only on its next tick, about a second later).
    const delay = crossConnectDelayMs ?? placement.crossConnectDelayMs;
    if (delay > 0) await frame.waitFor(() => crossConnected, delay);
  }

  return runLifecycle<ConnectionAgenda>({
    async agenda() {
      const agenda = await activities.connectionAgenda({ connectionId });
      if (agenda && !placement) {
        const found = await activities.connectionPlacement({ connectionId });
        if (!found) return null;
        placement = found;
      }
      return agenda;
    },
    move: (event, entries) => activities.moveConnection({ connectionId, event, status: entries }),
    async provision(frame) {
      frame.step('configuring ports');
      const { commitId } = await frame.untilDone(
        onDevice('Configuring the ports'),
        () => device.configureConnection({ connectionId }),
        () =>
          frame.move('retry', [
            statusEntry(SEVERITY.info, 'retrying', 'An operator asked to provision again.'),
          ]),
      );
      await frame.interruptions();
      const ports = placement.ports.map((port) => port.name).join(', ');
      await frame.move('allocate', [
        statusEntry(
          SEVERITY.info,
          'ports_configured',
          `Ports ${ports} on ${placement.device} are configured.`,
          { commitId },
        ),
      ]);

      frame.step('waiting for the cross-connect');
      await waitingFor('cross_connect', () => crossConnect(frame));

      // An operator's retry tests again; the ports stay configured.
      await frame.test({
        testing: 'The cross-connect is in place; testing the link.',
        check: async () => (await device.checkConnectionOptics({ connectionId })).outOfRange,
        trouble: (outOfRange) =>
          statusEntry(
            SEVERITY.error,
            'optics_out_of_range',
            `Receive power out of range on ${outOfRange.join(', ')}. Check the cross-connect and the optics, then signal retryTesting.`,
            { ports: outOfRange },
          ),
        again: { allocate: 'Testing the link again.', testing: 'Testing the link again.' },
      });
      frame.step('in production');
      await frame.move('go_live', []);
    },
    changeAsked: (agenda) =>
      agenda.state === 'production_change_pending' ||
      agenda.reservationsWaiting > 0 ||
      (agenda.reservationDue !== null && agenda.reservationDue <= today()),
    // A port reservation ending on a day ahead: its port leaves the bundle that day.
    wakeOn: (agenda) => agenda.reservationDue,
    async reconfigure(frame) {
      if (frame.latest().state === 'production')
        await frame.move('request_change', [
          statusEntry(SEVERITY.info, 'change_started', 'Changing the configuration.'),
        ]);
      changes += 1;
      const key = `connection:${connectionId}:change:${workflowInfo().runId}:${changes}`;
      await frame.untilDone(onDevice('Changing the configuration'), () =>
        device.configureConnection({ connectionId, key }),
      );
      await activities.releaseConnectionPorts({ connectionId, leavingOnly: true });
    },
    async teardown(frame) {
      if (frame.latest().state === 'decommission_requested')
        frame.step('taking the connection off the device');
      await frame.untilDone(onDevice('Taking the ports off the device'), () =>
        device.deconfigureConnection({ connectionId }),
      );
      await activities.releaseConnectionPorts({ connectionId });
    },
    continueAsNew: () => continueAsNew<typeof connectionOnLifecycle>({ connectionId, crossConnectDelayMs }),
    farewell: {
      cancelled: 'The order was cancelled; its ports went back to the exchange.',
      decommissioned: 'The connection is decommissioned; its ports went back to the exchange.',
    },
  });
}
