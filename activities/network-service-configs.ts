import type {
  ConfigAgenda,
  ConfigPlacement,
  NetworkServiceConfigRepository,
} from '../db/repositories/network-service-config-repository';
import type { ConfigType } from '../domain/network-service-configs';
import type { LifecycleEvent, State } from '../domain/states';
import type { StatusEntry } from '../domain/status';
import { commitIntent, differencesOf, heartbeating } from './device-work';
import { asFailure, moveIdempotently, notFound } from './failures';
import type { ProductionTimer } from './device-work';
import type { DeviceDriver, ServiceAttachment } from '../drivers/contract';

/**
 * The config types whose MACs are all their service takes frames from, even while there are none.
 * An exchange LAN is shared: a member's port sending from a MAC no config of the member names could
 * be sending as another member. A circuit carries no MACs, and an mp2mp_vc without any is a private
 * VLAN of the member's own, which takes every source.
 */
const MAC_FILTERED_TYPES: ReadonlySet<ConfigType> = new Set(['exchange_lan']);

/**
 * What a config of `type` puts on its connection's device: its tags on the bundle or port, MACs
 * (filtering even when there are none on an exchange LAN), rate limit, and the segment (its network
 * service) it joins, isolated when it is a leaf. Without its type a config is taken for an exchange
 * LAN's, which lets the fewest frames in.
 */
export function serviceAttachment(placement: ConfigPlacement, type?: ConfigType): ServiceAttachment {
  return {
    name: placement.id,
    description: `ixapi ${placement.id} on ${placement.connection}`,
    parent: placement.parent,
    vlanType: placement.tagging.vlan_type,
    outerVlan: placement.tagging.outer_vlan,
    innerVlan: placement.tagging.inner_vlan,
    macs: placement.macs,
    macFilter: type === undefined || MAC_FILTERED_TYPES.has(type),
    rateLimit: placement.capacity,
    segment: placement.segment,
    isolated: placement.isolated,
  };
}

/**
 * Where a config sits and the service it puts there, as the database says now; undefined when the
 * config is gone.
 */
export async function attachmentOf(
  configs: NetworkServiceConfigRepository,
  configId: string,
): Promise<{ placement: ConfigPlacement; attachment: ServiceAttachment } | undefined> {
  const placement = await configs.placement(configId);
  const config = placement && (await configs.findById(configId));
  if (!placement || !config) return undefined;
  return { placement, attachment: serviceAttachment(placement, config.type) };
}

/** The tags in words, for status entries. */
export function describeTags(placement: ConfigPlacement): string {
  const { vlan_type, outer_vlan, inner_vlan } = placement.tagging;
  if (vlan_type === 'port') return `untagged on ${placement.parent}`;
  if (vlan_type === 'dot1q') return `VLAN ${outer_vlan} on ${placement.parent}`;
  return `VLAN ${outer_vlan}.${inner_vlan} (QinQ) on ${placement.parent}`;
}

/** Activities that provision network service configs, over their repository and a device driver. */
export function networkServiceConfigActivities(deps: {
  configs: NetworkServiceConfigRepository;
  driver: DeviceDriver;
  timeProduction: ProductionTimer;
}) {
  const { configs, driver, timeProduction } = deps;
  const placementOf = async (configId: string) => {
    const placement = await configs.placement(configId);
    if (!placement) throw notFound(`network service config ${configId}`);
    return placement;
  };
  const attachedOf = async (configId: string) => {
    const attached = await attachmentOf(configs, configId);
    if (!attached) throw notFound(`network service config ${configId}`);
    return attached;
  };

  return {
    /** What the config's workflow has to do next; null when the config is gone. */
    async networkServiceConfigAgenda({ configId }: { configId: string }): Promise<ConfigAgenda | null> {
      return (await configs.agenda(configId)) ?? null;
    },

    /**
     * Puts the config on its device as it is now stored, once per revision: the commit key names
     * the revision, so a retried activity finds its commit instead of applying it again.
     */
    async configureNetworkServiceConfig({
      configId,
    }: {
      configId: string;
    }): Promise<{ commitId: string; revision: number; tags: string }> {
      const { placement, attachment } = await attachedOf(configId);
      const { commitId } = await heartbeating(() =>
        commitIntent(
          driver,
          () => ({ device: placement.device, services: [attachment] }),
          `network-service-config:${configId}:revision:${placement.revision}`,
          configId,
        ),
      );
      return { commitId, revision: placement.revision, tags: describeTags(placement) };
    },

    /** Takes the config off its device. */
    async deconfigureNetworkServiceConfig({ configId }: { configId: string }): Promise<{ commitId: string }> {
      const placement = await placementOf(configId);
      return heartbeating(() =>
        commitIntent(
          driver,
          () => ({ device: placement.device, removeServices: [configId] }),
          `network-service-config:${configId}:teardown`,
          configId,
        ),
      );
    },

    /** Reads the config back from the device: what differs from what was intended, if anything. */
    async verifyNetworkServiceConfig({ configId }: { configId: string }): Promise<{ differences: string[] }> {
      const { placement, attachment } = await attachedOf(configId);
      try {
        const [found] = await heartbeating(() => driver.readServices(placement.device, [configId]));
        return {
          differences: differencesOf(found, attachment, `service ${configId} on ${placement.device}`),
        };
      } catch (error) {
        throw asFailure(error);
      }
    },

    /** Moves the config along the lifecycle with a status saying why; idempotent like every move. */
    async moveNetworkServiceConfig({
      configId,
      event,
      status,
    }: {
      configId: string;
      event: LifecycleEvent;
      status: StatusEntry[];
    }): Promise<State> {
      const current = await configs.agenda(configId);
      return moveIdempotently(`network service config ${configId}`, current?.state, event, () =>
        timeProduction(
          'network_service_config',
          configId,
          event,
          async () => (await configs.applyLifecycleEvent(configId, event, status)).state,
        ),
      );
    },

    async recordNetworkServiceConfigStatus({
      configId,
      status,
    }: {
      configId: string;
      status: StatusEntry[];
    }) {
      await configs.recordStatus(configId, status);
    },
  };
}
