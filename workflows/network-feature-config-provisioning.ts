import { continueAsNew, patched } from '@temporalio/workflow';
import { remoteActivities, storeActivities } from './activity-proxies';
import { CONFIGURED_STATES } from '../domain/states';
import { SEVERITY } from '../domain/status';
import type { Outcome } from './lifecycle';
import { STATUS_WHEN_CHANGED, runLifecycle, statusEntry, statusWhenChanged } from './lifecycle';

const activities = storeActivities();
const routeServer = remoteActivities<
  'configureNetworkFeatureConfig' | 'deconfigureNetworkFeatureConfig' | 'verifyNetworkFeatureConfig'
>();

export interface ProvisionNetworkFeatureConfigInput {
  featureConfigId: string;
  /** The revision of the session the route server carries (after a continue-as-new). */
  configuredRevision?: number;
  /** How often to look at a network service config that is not on its device yet (ms). */
  recheckMs?: number;
}

/**
 * The life of one route-server session: once its network service config is on the device, the
 * session goes onto the route server, is read back, and goes live; then it waits in production
 * for changes (each revision configured once) and its decommission, which takes it off the route
 * server.
 */
export async function provisionNetworkFeatureConfig({
  featureConfigId,
  configuredRevision = 0,
  recheckMs = 5_000,
}: ProvisionNetworkFeatureConfigInput): Promise<Outcome> {
  let configured = configuredRevision;
  const configure = async () => {
    const done = await routeServer.configureNetworkFeatureConfig({ featureConfigId });
    configured = Math.max(configured, done.revision);
    return done;
  };
  return runLifecycle({
    agenda: () => activities.networkFeatureConfigAgenda({ featureConfigId }),
    move: (event, status) => activities.moveNetworkFeatureConfig({ featureConfigId, event, status }),
    async provision(frame) {
      frame.step('waiting for the network service config');
      const waiting = statusWhenChanged(
        (status) => activities.recordNetworkFeatureConfigStatus({ featureConfigId, status }),
        !patched(STATUS_WHEN_CHANGED),
      );
      while (!CONFIGURED_STATES.includes(frame.latest().configState)) {
        await waiting(
          statusEntry(
            SEVERITY.notice,
            'waiting_for_config',
            `The network service config is ${frame.latest().configState}; the session comes up once it is on the device.`,
          ),
        );
        await frame.waitFor(() => CONFIGURED_STATES.includes(frame.latest().configState), recheckMs);
        await frame.look();
      }
      frame.step('configuring the route server');
      const done = await frame.untilDone('Configuring the session', configure);
      await frame.interruptions();
      await frame.move('allocate', [
        statusEntry(SEVERITY.info, 'configured', `The session is configured on ${done.routeServer}.`, {
          commitId: done.commitId,
        }),
      ]);
      await frame.test({
        testing: 'Reading the session back.',
        check: async () => (await routeServer.verifyNetworkFeatureConfig({ featureConfigId })).differences,
        trouble: (differences) =>
          statusEntry(
            SEVERITY.error,
            'route_server_mismatch',
            `The route server does not hold the session as configured: ${differences.join('; ')}. Check it, then signal retryTesting.`,
          ),
        redo: configure,
        again: { allocate: 'Configured again.', testing: 'Testing again.' },
      });
      frame.step('in production');
      await frame.move('go_live', []);
    },
    changeAsked: (agenda) => agenda.revision > configured || agenda.state === 'production_change_pending',
    async reconfigure(frame) {
      await frame.untilDone('Changing the session', configure);
    },
    async teardown(frame) {
      frame.step('taking the session off the route server');
      await frame.untilDone('Taking the session off the route server', () =>
        routeServer.deconfigureNetworkFeatureConfig({ featureConfigId }),
      );
    },
    continueAsNew: () =>
      continueAsNew<typeof provisionNetworkFeatureConfig>({
        featureConfigId,
        configuredRevision: configured,
        recheckMs,
      }),
    farewell: {
      cancelled: 'The order was cancelled; the route server holds no session for it.',
      decommissioned: 'The session is decommissioned and off the route server.',
    },
  });
}
