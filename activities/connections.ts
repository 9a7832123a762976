import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type {
  ConnectionAgenda,
  ConnectionPlacement,
  ConnectionRepository,
} from '../db/repositories/connection-repository';
import { effectiveLacpTimeout } from '../domain/connections';
import type { LifecycleEvent, State } from '../domain/states';
import { TRANSITIONS } from '../domain/states';
import type { StatusEntry } from '../domain/status';
import type { DeviceDriver, DeviceIntent } from './drivers/contract';
import { DriverError } from './drivers/contract';

/** A driver error the way Temporal should treat it: retried when it may pass, final otherwise. */
function asFailure(error: unknown): unknown {
  if (error instanceof DriverError && !error.retryable)
    return ApplicationFailure.nonRetryable(error.message, `DriverError:${error.code}`);
  return error;
}

/** How often an activity waiting on a device tells Temporal it is still alive. */
const HEARTBEAT_EVERY_MS = 1_000;

/**
 * Runs device work while heartbeating, so that a worker that dies in the middle of a slow device
 * call is noticed within the heartbeat timeout, not after the whole start-to-close timeout.
 * Outside an activity (tests calling the functions directly) the work just runs.
 */
async function heartbeating<T>(work: () => Promise<T>): Promise<T> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    return work();
  }
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

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

/** The name a connection's bundle has on its device. */
export const bundleName = (connectionId: string) => `ae-${connectionId}`;

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
}) {
  const { connections, driver } = deps;

  /**
   * Commits what `intentOf` makes of the connection's placement, under `key`, so a retry after a
   * crash finds the commit instead of applying it twice; a candidate overtaken by another change
   * to the device is loaded again.
   */
  async function commitIntent(
    connectionId: string,
    key: string,
    intentOf: (placement: ConnectionPlacement) => DeviceIntent,
  ): Promise<{ commitId: string }> {
    const placement = await connections.placement(connectionId);
    if (!placement) throw ApplicationFailure.nonRetryable(`no connection ${connectionId}`, 'NotFound');
    for (let attempt = 0; ; attempt += 1) {
      try {
        const candidate = await driver.load(intentOf(placement));
        return { commitId: (await driver.commit(candidate.id, key)).commitId };
      } catch (error) {
        const stale = error instanceof DriverError && error.code === 'stale-candidate';
        // Other changes to the same device got in first: load again, after a moment.
        if (stale && attempt < 10) {
          await sleep(10 + Math.floor(Math.random() * 40));
          continue;
        }
        // A device this busy is retried by Temporal, with backoff.
        if (stale) throw new Error(`${placement.device} kept changing while ${connectionId} was configured`);
        throw asFailure(error);
      }
    }
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
      return heartbeating(() => commitIntent(connectionId, key, connectionIntent));
    },

    /** Takes the connection off its device: ports shut, bundle removed. */
    async deconfigureConnection({ connectionId }: { connectionId: string }): Promise<{ commitId: string }> {
      return heartbeating(() =>
        commitIntent(connectionId, `connection:${connectionId}:teardown`, teardownIntent),
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
      if (!placement) throw ApplicationFailure.nonRetryable(`no connection ${connectionId}`, 'NotFound');
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
      if (!current) throw ApplicationFailure.nonRetryable(`no connection ${connectionId}`, 'NotFound');
      const target = TRANSITIONS[current.state][event];
      const arrived = Object.values(TRANSITIONS).some((next) => next[event] === current.state);
      if (target === undefined && arrived) return current.state;
      if (target === undefined)
        throw ApplicationFailure.nonRetryable(
          `${connectionId} cannot ${event} from ${current.state}`,
          'InvalidTransition',
        );
      return (await connections.applyLifecycleEvent(connectionId, event, status)).state;
    },

    async recordConnectionStatus({ connectionId, status }: { connectionId: string; status: StatusEntry[] }) {
      await connections.recordStatus(connectionId, status);
    },
  };
}
