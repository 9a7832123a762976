import { continueAsNew, patched, sleep } from '@temporalio/workflow';
import { remoteActivities, storeActivities } from './activity-proxies';
import { SEVERITY } from '../domain/status';
import type { Outcome } from './lifecycle';
import { STATUS_WHEN_CHANGED, runLifecycle, statusEntry, statusWhenChanged } from './lifecycle';

const activities = storeActivities();
const provider = remoteActivities<
  'orderCloudCircuit' | 'connectCloudHandovers' | 'changeCloudBandwidth' | 'releaseCloudCircuit'
>();

/**
 * Marks runs whose `waiting_for_configs` status follows each end that goes live (one handover of
 * two, one side of a circuit), rather than only the last one.
 */
export const STATUS_FOLLOWS_ENDS = 'status-follows-ends';

export interface ProvisionNetworkServiceInput {
  serviceId: string;
  /** The revision of the service the fabric and the provider carry (after a continue-as-new). */
  configuredRevision?: number;
  /**
   * How often to look at the service's configs while waiting for them (ms), besides the signal
   * each config's move sends; a safety net, so rare.
   */
  recheckMs?: number;
}

/**
 * The life of one network service a customer ordered: a cloud service first gets its circuit at the
 * provider; then the service waits for its ends (both sides of a circuit, every handover of a cloud
 * service, a first member of a multipoint one) to be in production, connects cloud handovers at
 * the provider, and goes live. In production it carries out bandwidth changes (after the owner
 * answered a circuit's change request); decommissioned, its configs go with it and the provider
 * lets the circuit go.
 */
export async function provisionNetworkService({
  serviceId,
  configuredRevision = 0,
  recheckMs = 60_000,
}: ProvisionNetworkServiceInput): Promise<Outcome> {
  let configured = configuredRevision;
  return runLifecycle({
    agenda: () => activities.networkServiceAgenda({ serviceId }),
    move: (event, status) => activities.moveNetworkService({ serviceId, event, status }),
    async provision(frame) {
      const cloud = frame.latest().cloud;
      if (cloud) {
        frame.step('ordering the circuit at the provider');
        const { providerRef } = await frame.untilDone(`Getting the circuit at ${cloud.provider}`, () =>
          provider.orderCloudCircuit({ serviceId }),
        );
        await frame.interruptions();
        await frame.move('allocate', [
          statusEntry(SEVERITY.info, 'circuit_ready', `${cloud.provider} holds the circuit ${providerRef}.`, {
            provider_ref: providerRef,
          }),
        ]);
      } else {
        await frame.move('allocate', [
          statusEntry(
            SEVERITY.info,
            'allocated',
            'The service is set up on the fabric; its members join it with configs.',
          ),
        ]);
      }
      configured = frame.latest().revision;
      frame.step('waiting for the configs');
      await frame.look();
      // Runs begun before the status was recorded only when it changes record it on every look.
      const waiting = statusWhenChanged(
        (status) => activities.recordNetworkServiceStatus({ serviceId, status }),
        !patched(STATUS_WHEN_CHANGED),
      );
      // Runs begun before the status followed every end going live waited for all of them (or the
      // recheck) before saying anything new.
      const followEveryEnd = patched(STATUS_FOLLOWS_ENDS);
      while (frame.latest().missing.length) {
        const missing = frame.latest().missing;
        await waiting(
          statusEntry(
            SEVERITY.notice,
            'waiting_for_configs',
            `The service goes into production once ${missing.join(' and ')} ha${missing.length > 1 ? 've' : 's'} a network service config in production.`,
            { missing },
          ),
        );
        const said = missing.join('\n');
        await frame.waitFor(
          () =>
            !frame.latest().missing.length || (followEveryEnd && frame.latest().missing.join('\n') !== said),
          recheckMs,
        );
        await frame.look();
      }
      if (cloud) {
        frame.step('connecting the handovers at the provider');
        await frame.untilDone(`Connecting the handovers at ${cloud.provider}`, () =>
          provider.connectCloudHandovers({ serviceId }),
        );
      }
      await frame.move('start_testing', [
        statusEntry(SEVERITY.info, 'testing', 'Every end of the service is up.'),
      ]);
      frame.step('in production');
      await frame.move('go_live', []);
    },
    changeAsked: (agenda) => agenda.revision > configured || agenda.state === 'production_change_pending',
    async reconfigure(frame) {
      // A circuit's change request waits for the owner to apply it, or for either side to drop it.
      while (frame.latest().changeRequested) {
        frame.step('waiting for the owner to answer the change request');
        await frame.waitFor(() => !frame.latest().changeRequested);
      }
      const latest = frame.latest();
      if (latest.revision > configured && latest.cloud) {
        frame.step('changing the bandwidth at the provider');
        await frame.untilDone('Changing the bandwidth at the provider', () =>
          provider.changeCloudBandwidth({ serviceId }),
        );
      }
      configured = Math.max(configured, latest.revision);
    },
    async teardown(frame) {
      if (frame.latest().cloud) {
        frame.step('giving the circuit back at the provider');
        await frame.untilDone('Giving the circuit back at the provider', () =>
          provider.releaseCloudCircuit({ serviceId }),
        );
      }
      // The configs went with the service (the same day); it ends after the last of them. Plain
      // timers here: a signal now must not interrupt the ending itself.
      frame.step('waiting for the configs to go');
      for (;;) {
        const agenda = await activities.networkServiceAgenda({ serviceId });
        if (!agenda || agenda.liveConfigs === 0) break;
        // The configs go on the same day; this wait is short.
        await sleep(Math.min(recheckMs, 2_000));
      }
    },
    continueAsNew: () =>
      continueAsNew<typeof provisionNetworkService>({ serviceId, configuredRevision: configured, recheckMs }),
    farewell: {
      cancelled: 'The order was cancelled, with its configs.',
      decommissioned: 'The service is decommissioned, with its configs.',
    },
  });
}
