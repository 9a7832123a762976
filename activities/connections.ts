import { ApplicationFailure } from '@temporalio/common';
import type {
  ConnectionAgenda,
  ConnectionPlacement,
  ConnectionRepository,
} from '../db/repositories/connection-repository';
import { bundleName, effectiveLacpTimeout } from '../domain/connections';
import type { LifecycleEvent, State } from '../domain/states';
import type { StatusEntry } from '../domain/status';
import { commitIntent, heartbeating } from './device-work';
import { asFailure, moveIdempotently, notFound } from './failures';
import type { ProductionTimer } from './device-work';
import type { DeviceDriver, DeviceIntent } from '../drivers/contract';

/**
 * The configuration a connection needs on its device: its ports up, bundled as its mode says, and
 * ports leaving it shut and out of the bundle. A standalone connection has no bundle (any it had
 * before goes).
 */
export function connectionIntent(placement: ConnectionPlacement): DeviceIntent {
  const interfaces = [
    ...placement.ports.map((port) => ({
      name: port.name,
      description: `ixapi ${placement.id}`,
      enabled: true,
    })),
    ...placement.leaving.map((port) => ({ name: port.name, description: '', enabled: false })),
  ];
  if (placement.mode === 'standalone' || placement.lag_name === null)
    return { device: placement.device, interfaces, removeLags: [bundleName(placement.id)] };
  const lacpTimeout = effectiveLacpTimeout(placement);
  return {
    device: placement.device,
    interfaces,
    lags: [
      {
        name: placement.lag_name,
        description: `ixapi ${placement.id}`,
        mode: placement.mode === 'lag_lacp' ? 'lacp' : 'static',
        lacpTimeout,
        members: placement.ports.map((port) => port.name),
      },
    ],
  };
}

/** The configuration that takes a connection off its device: every port shut, the bundle gone. */
export function teardownIntent(placement: ConnectionPlacement): DeviceIntent {
  return {
    device: placement.device,
    interfaces: [...placement.ports, ...placement.leaving].map((port) => ({
      name: port.name,
      description: '',
      enabled: false,
    })),
    removeLags: [bundleName(placement.id)],
  };
}

/** Activities that provision connections, over the connection repository and a device driver. */
export function connectionActivities(deps: {
  connections: ConnectionRepository;
  driver: DeviceDriver;
  crossConnectDelayMs: number;
  timeProduction: ProductionTimer;
}) {
  const { connections, driver, timeProduction } = deps;

  /** Commits what `intentOf` makes of the connection's placement as it is now, under `key`. */
  async function commitConnection(
    connectionId: string,
    key: string,
    intentOf: (placement: ConnectionPlacement) => DeviceIntent,
  ): Promise<{ commitId: string }> {
    const placement = await connections.placement(connectionId);
    if (!placement) throw notFound(`connection ${connectionId}`);
    return commitIntent(driver, () => intentOf(placement), key, connectionId);
  }

  return {
    /** Where the connection's ports are, and how long the exchange's cross-connects take; null when gone. */
    async connectionPlacement({
      connectionId,
    }: {
      connectionId: string;
    }): Promise<(ConnectionPlacement & { crossConnectDelayMs: number }) | null> {
      const placement = await connections.placement(connectionId);
      return placement ? { ...placement, crossConnectDelayMs: deps.crossConnectDelayMs } : null;
    },

    /** What the connection's workflow has to do next; null when the connection is gone. */
    async connectionAgenda({ connectionId }: { connectionId: string }): Promise<ConnectionAgenda | null> {
      return (await connections.agenda(connectionId)) ?? null;
    },

    /** Configures the connection's ports and bundle on their device as the connection now is. */
    async configureConnection({
      connectionId,
      key = `connection:${connectionId}:configure`,
    }: {
      connectionId: string;
      key?: string;
    }): Promise<{ commitId: string }> {
      return heartbeating(() => commitConnection(connectionId, key, connectionIntent));
    },

    /**
     * Takes the connection off its device: ports shut, bundle removed. Service configs still on its
     * ports go first (they go no later than the connection's day): until they are off the device,
     * this fails and is tried again.
     */
    async deconfigureConnection({ connectionId }: { connectionId: string }): Promise<{ commitId: string }> {
      const carried = await connections.carriedConfigs(connectionId);
      if (carried.length)
        throw ApplicationFailure.retryable(
          `${carried.join(', ')} ${carried.length > 1 ? 'are' : 'is'} still on the ports of ${connectionId}; they are taken off first`,
          'ConfigsStillOn',
        );
      return heartbeating(() =>
        commitConnection(connectionId, `connection:${connectionId}:teardown`, teardownIntent),
      );
    },

    /** Gives the connection's ports (or only those whose reservations ended) back to the exchange. */
    async releaseConnectionPorts({
      connectionId,
      leavingOnly = false,
    }: {
      connectionId: string;
      leavingOnly?: boolean;
    }): Promise<number> {
      const placement = await connections.placement(connectionId);
      if (!placement) return 0;
      return connections.releasePorts(
        connectionId,
        leavingOnly ? placement.leaving.map((port) => port.id) : undefined,
      );
    },

    /** The optics of the connection's ports: all in range, or the ports that are not. */
    async checkConnectionOptics({
      connectionId,
    }: {
      connectionId: string;
    }): Promise<{ outOfRange: string[] }> {
      const placement = await connections.placement(connectionId);
      if (!placement) throw notFound(`connection ${connectionId}`);
      try {
        const readings = await heartbeating(() =>
          driver.readOptics(
            placement.device,
            placement.ports.map((port) => port.name),
          ),
        );
        return {
          outOfRange: readings.filter((r) => !r.inRange).map((r) => `${r.interface} (${r.rxDbm} dBm)`),
        };
      } catch (error) {
        throw asFailure(error);
      }
    },

    /**
     * Moves the connection along the lifecycle with a status saying why. Idempotent: a connection
     * already where the event leads is left as it is.
     */
    async moveConnection({
      connectionId,
      event,
      status,
    }: {
      connectionId: string;
      event: LifecycleEvent;
      status: StatusEntry[];
    }): Promise<State> {
      const current = await connections.findById(connectionId);
      return moveIdempotently(`connection ${connectionId}`, current?.state, event, () =>
        timeProduction(
          'connection',
          connectionId,
          event,
          async () => (await connections.applyLifecycleEvent(connectionId, event, status)).state,
        ),
      );
    },

    async recordConnectionStatus({ connectionId, status }: { connectionId: string; status: StatusEntry[] }) {
      await connections.recordStatus(connectionId, status);
    },
  };
}
