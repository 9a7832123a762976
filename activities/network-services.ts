import type { NetworkServiceRepository, ServiceAgenda } from '../db/repositories/network-service-repository';
import type { LifecycleEvent, State } from '../domain/states';
import type { StatusEntry } from '../domain/status';
import { heartbeating } from './device-work';
import { moveIdempotently, notFound, refused, translated } from './failures';
import type { ProductionTimer } from './device-work';
import type { CloudProvider } from '../drivers/cloud/contract';

/**
 * Activities of network services: their agenda and lifecycle, and what a cloud service asks of its
 * provider (the circuit, its handovers, its bandwidth, its end).
 */
export function networkServiceActivities(deps: {
  services: NetworkServiceRepository;
  cloud: CloudProvider;
  timeProduction: ProductionTimer;
}) {
  const { services, cloud, timeProduction } = deps;

  const cloudOf = async (serviceId: string) => {
    const agenda = await services.agenda(serviceId);
    if (!agenda) throw notFound(`network service ${serviceId}`);
    if (!agenda.cloud) throw refused('NotCloud', `${serviceId} is not a cloud service`);
    return { agenda, order: agenda.cloud };
  };
  /** Work at the provider, heartbeating; a refusal retrying cannot change fails for good. */
  const provider = async <T>(work: () => Promise<T>): Promise<T> => {
    return translated(() => heartbeating(work));
  };

  return {
    /** What the service's workflow has to do next; null when the service is gone. */
    async networkServiceAgenda({ serviceId }: { serviceId: string }): Promise<ServiceAgenda | null> {
      return (await services.agenda(serviceId)) ?? null;
    },

    async moveNetworkService({
      serviceId,
      event,
      status,
    }: {
      serviceId: string;
      event: LifecycleEvent;
      status: StatusEntry[];
    }): Promise<State> {
      const current = await services.agenda(serviceId);
      return moveIdempotently(`network service ${serviceId}`, current?.state, event, () =>
        timeProduction(
          'network_service',
          serviceId,
          event,
          async () => (await services.applyLifecycleEvent(serviceId, event, status)).state,
        ),
      );
    },

    async recordNetworkServiceStatus({ serviceId, status }: { serviceId: string; status: StatusEntry[] }) {
      await services.recordStatus(serviceId, status);
    },

    /**
     * Gets the service its circuit at the provider: made by the exchange (exchange first) or taken
     * over from the customer, whose key names it (provider first). The circuit's reference is kept
     * as the service's `provider_ref`; a retry finds the circuit it made or took.
     */
    async orderCloudCircuit({ serviceId }: { serviceId: string }): Promise<{ providerRef: string }> {
      const { order } = await cloudOf(serviceId);
      const requestKey = `network-service:${serviceId}`;
      const circuit = await provider(async () => {
        if (order.workflow === 'exchange_first') {
          if (!order.region || !order.pop || order.bandwidth === null)
            throw refused(
              'IncompleteOffering',
              `The offering of ${serviceId} names no provider region, PoP or bandwidth to order the circuit with`,
            );
          return cloud.createCircuit({
            requestKey,
            provider: order.provider,
            customerKey: order.key,
            region: order.region,
            pop: order.pop,
            bandwidth: order.bandwidth,
            handovers: order.diversity,
            vlans: order.vlans,
          });
        }
        const found = await cloud.findCircuit(order.provider, order.key);
        if (!found)
          throw refused(
            'UnknownCloudKey',
            `${order.provider} knows no circuit with the key ${order.key}; create it there first, or correct the key`,
          );
        const misfits: string[] = [];
        if (order.pop && found.pop !== order.pop) misfits.push(`it is at ${found.pop}, not ${order.pop}`);
        if (found.handovers < order.diversity)
          misfits.push(`it has ${found.handovers} handover(s), the offering needs ${order.diversity}`);
        // Without a capacity the service takes the circuit as the customer bought it.
        if (order.capacity !== null && found.bandwidthLimit < order.capacity)
          misfits.push(
            `it carries at most ${found.bandwidthLimit} Mbit/s, the service asks for ${order.capacity}`,
          );
        if (misfits.length)
          throw refused(
            'CloudCircuitMismatch',
            `The circuit ${order.key} at ${order.provider} does not fit: ${misfits.join('; ')}`,
          );
        return cloud.acceptCircuit(found.ref, { requestKey });
      });
      await services.recordProviderRef(serviceId, circuit.ref);
      return { providerRef: circuit.ref };
    },

    /** Connects each handover whose config is in production at the provider; answers those connected. */
    async connectCloudHandovers({ serviceId }: { serviceId: string }): Promise<{ connected: number[] }> {
      const { agenda, order } = await cloudOf(serviceId);
      if (!order.providerRef) throw refused('NoCircuit', `${serviceId} has no circuit at its provider yet`);
      const ref = order.providerRef;
      await provider(async () => {
        for (const handover of agenda.handovers)
          // The provider VLAN the config selects (null: the handover's only one, or all unmatched).
          await cloud.connectHandover(ref, handover.handover, {
            device: handover.device,
            vlan: handover.cloudVlan,
          });
      });
      return { connected: agenda.handovers.map((handover) => handover.handover) };
    },

    /** Gives the circuit the service's bandwidth at the provider. */
    async changeCloudBandwidth({ serviceId }: { serviceId: string }): Promise<void> {
      const { order } = await cloudOf(serviceId);
      // A customer's circuit keeps the bandwidth the customer bought unless a capacity is asked for.
      const bandwidth = order.workflow === 'provider_first' ? order.capacity : order.bandwidth;
      if (!order.providerRef || bandwidth === null) return;
      const ref = order.providerRef;
      await provider(() => cloud.changeBandwidth(ref, bandwidth));
    },

    /** Disconnects the handovers and gives the circuit up at the provider. */
    async releaseCloudCircuit({ serviceId }: { serviceId: string }): Promise<void> {
      const { order } = await cloudOf(serviceId);
      if (!order.providerRef) return;
      const ref = order.providerRef;
      await provider(async () => {
        const circuit = await cloud.readCircuit(ref);
        if (!circuit || circuit.state === 'released') return;
        // Releasing takes every attachment with it.
        await cloud.releaseCircuit(ref);
      });
    },
  };
}
