import type {
  FeatureConfigAgenda,
  NetworkFeatureConfigRepository,
} from '../db/repositories/network-feature-config-repository';
import type { LifecycleEvent, State } from '../domain/states';
import type { StatusEntry } from '../domain/status';
import { commitIntent, differencesOf, heartbeating } from './device-work';
import { asFailure, moveIdempotently, notFound } from './failures';
import type { ProductionTimer } from './device-work';
import type { DeviceDriver } from '../drivers/contract';

/** Activities that provision route-server sessions, over their repository and a device driver. */
export function networkFeatureConfigActivities(deps: {
  featureConfigs: NetworkFeatureConfigRepository;
  driver: DeviceDriver;
  timeProduction: ProductionTimer;
}) {
  const { featureConfigs, driver, timeProduction } = deps;
  const placementOf = async (featureConfigId: string) => {
    const placement = await featureConfigs.placement(featureConfigId);
    if (!placement) throw notFound(`network feature config ${featureConfigId}`);
    return placement;
  };

  return {
    /** What the session's workflow has to do next; null when the session is gone. */
    async networkFeatureConfigAgenda({
      featureConfigId,
    }: {
      featureConfigId: string;
    }): Promise<FeatureConfigAgenda | null> {
      return (await featureConfigs.agenda(featureConfigId)) ?? null;
    },

    /** Puts the session on its route server as it is now stored, once per revision. */
    async configureNetworkFeatureConfig({
      featureConfigId,
    }: {
      featureConfigId: string;
    }): Promise<{ commitId: string; revision: number; routeServer: string }> {
      const placement = await placementOf(featureConfigId);
      const { commitId } = await heartbeating(() =>
        commitIntent(
          driver,
          () => ({ device: placement.routeServer, bgpSessions: [placement.session] }),
          `network-feature-config:${featureConfigId}:revision:${placement.revision}`,
          featureConfigId,
        ),
      );
      return { commitId, revision: placement.revision, routeServer: placement.routeServer };
    },

    /** Takes the session off its route server. */
    async deconfigureNetworkFeatureConfig({
      featureConfigId,
    }: {
      featureConfigId: string;
    }): Promise<{ commitId: string }> {
      const placement = await placementOf(featureConfigId);
      return heartbeating(() =>
        commitIntent(
          driver,
          () => ({ device: placement.routeServer, removeBgpSessions: [featureConfigId] }),
          `network-feature-config:${featureConfigId}:teardown`,
          featureConfigId,
        ),
      );
    },

    /** Reads the session back from the route server: what differs from what was intended. */
    async verifyNetworkFeatureConfig({
      featureConfigId,
    }: {
      featureConfigId: string;
    }): Promise<{ differences: string[] }> {
      const placement = await placementOf(featureConfigId);
      try {
        const [found] = await heartbeating(() =>
          driver.readBgpSessions(placement.routeServer, [featureConfigId]),
        );
        return {
          differences: differencesOf(
            found,
            placement.session,
            `session ${featureConfigId} on ${placement.routeServer}`,
          ),
        };
      } catch (error) {
        throw asFailure(error);
      }
    },

    async moveNetworkFeatureConfig({
      featureConfigId,
      event,
      status,
    }: {
      featureConfigId: string;
      event: LifecycleEvent;
      status: StatusEntry[];
    }): Promise<State> {
      const current = await featureConfigs.agenda(featureConfigId);
      return moveIdempotently(`network feature config ${featureConfigId}`, current?.state, event, () =>
        timeProduction(
          'network_feature_config',
          featureConfigId,
          event,
          async () => (await featureConfigs.applyLifecycleEvent(featureConfigId, event, status)).state,
        ),
      );
    },

    async recordNetworkFeatureConfigStatus({
      featureConfigId,
      status,
    }: {
      featureConfigId: string;
      status: StatusEntry[];
    }) {
      await featureConfigs.recordStatus(featureConfigId, status);
    },
  };
}
