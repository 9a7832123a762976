import { continueAsNew, patched } from '@temporalio/workflow';
import { remoteActivities, storeActivities } from './activity-proxies';
import { isLive } from '../domain/states';
import { SEVERITY } from '../domain/status';
import type { Outcome } from './lifecycle';
import { STATUS_WHEN_CHANGED, runLifecycle, statusEntry, statusWhenChanged } from './lifecycle';

const activities = storeActivities();
const device = remoteActivities<
  'configureNetworkServiceConfig' | 'deconfigureNetworkServiceConfig' | 'verifyNetworkServiceConfig'
>();

export interface ProvisionNetworkServiceConfigInput {
  configId: string;
  /** The revision of the config the devices carry (after a continue-as-new). */
  configuredRevision?: number;
  /** How often to look at a connection that is not in production yet (ms). */
  recheckMs?: number;
}

/** Connection states in which a service on it can be configured. */

/**
 * The life of one network service config: once its connection is in production, its tags, MAC
 * filter and rate limit go onto the connection's device, are read back, and the config goes live;
 * then it waits in production for changes (each new revision configured once) and its decommission,
 * which takes it off the device and gives its VLAN and addresses back.
 */
export async function provisionNetworkServiceConfig({
  configId,
  configuredRevision = 0,
  recheckMs = 5_000,
}: ProvisionNetworkServiceConfigInput): Promise<Outcome> {
  let configured = configuredRevision;
  const configure = async (what: string) => {
    const done = await device.configureNetworkServiceConfig({ configId });
    configured = Math.max(configured, done.revision);
    return { ...done, what };
  };
  return runLifecycle({
    agenda: () => activities.networkServiceConfigAgenda({ configId }),
    move: (event, status) => activities.moveNetworkServiceConfig({ configId, event, status }),
    async provision(frame) {
      const waiting = statusWhenChanged(
        (status) => activities.recordNetworkServiceConfigStatus({ configId, status }),
        !patched(STATUS_WHEN_CHANGED),
      );
      frame.step('waiting for the connection');
      while (!isLive(frame.latest().connectionState)) {
        await waiting(
          statusEntry(
            SEVERITY.notice,
            'waiting_for_connection',
            `The connection is ${frame.latest().connectionState}; the service is configured once it is in production.`,
          ),
        );
        await frame.waitFor(() => isLive(frame.latest().connectionState), recheckMs);
        await frame.look();
      }
      frame.step('configuring the device');
      const done = await frame.untilDone('Configuring the service', () => configure('configure'));
      await frame.interruptions();
      await frame.move('allocate', [
        statusEntry(SEVERITY.info, 'configured', `Configured ${done.tags}.`, { commitId: done.commitId }),
      ]);
      await frame.test({
        testing: 'Reading the service back from the device.',
        check: async () => (await device.verifyNetworkServiceConfig({ configId })).differences,
        trouble: (differences) =>
          statusEntry(
            SEVERITY.error,
            'device_mismatch',
            `The device does not carry the service as configured: ${differences.join('; ')}. Check the device, then signal retryTesting.`,
          ),
        // The device is configured again before the test starts over.
        redo: () => configure('configure again'),
        again: { allocate: 'Configured again.', testing: 'Testing again.' },
      });
      // A service with a required route server goes live once the config has a session with it.
      frame.step('waiting for route-server sessions');
      while (frame.latest().missingFeatures.length) {
        const missing = frame.latest().missingFeatures;
        await waiting(
          statusEntry(
            SEVERITY.notice,
            'feature_config_missing',
            `The service requires a session with ${missing.join(', ')}: create a network feature config for it (POST /network-feature-configs).`,
            { network_features: missing },
          ),
        );
        await frame.waitFor(() => !frame.latest().missingFeatures.length, recheckMs);
        await frame.look();
      }
      frame.step('in production');
      await frame.move('go_live', []);
    },
    changeAsked: (agenda) => agenda.revision > configured || agenda.state === 'production_change_pending',
    async reconfigure(frame) {
      if (frame.latest().state === 'production' && frame.latest().revision <= configured) return;
      await frame.untilDone('Changing the service', () => configure('change'));
    },
    async teardown(frame) {
      frame.step('taking the service off the device');
      await frame.untilDone('Taking the service off the device', () =>
        device.deconfigureNetworkServiceConfig({ configId }),
      );
    },
    continueAsNew: () =>
      continueAsNew<typeof provisionNetworkServiceConfig>({
        configId,
        configuredRevision: configured,
        recheckMs,
      }),
    farewell: {
      cancelled: 'The order was cancelled; its VLAN and addresses went back to the exchange.',
      decommissioned: 'The config is decommissioned; its VLAN and addresses went back to the exchange.',
    },
  });
}
