import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { ConnectionPlacement, ConnectionRepository } from '../db/repositories/connection-repository';
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

/** The configuration a connection needs on its device: its ports up, bundled as its mode says. */
export function connectionIntent(placement: ConnectionPlacement): DeviceIntent {
  const interfaces = placement.ports.map((port) => ({
    name: port.name,
    description: `ixapi ${placement.id}`,
    enabled: true,
  }));
  if (placement.mode === 'standalone' || placement.lag_name === null)
    return { device: placement.device, interfaces };
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

/** Activities that provision connections, over the connection repository and a device driver. */
export function connectionActivities(deps: { connections: ConnectionRepository; driver: DeviceDriver }) {
  const { connections, driver } = deps;
  return {
    /** Where the connection's ports are; null when the connection is gone. */
    async connectionPlacement({
      connectionId,
    }: {
      connectionId: string;
    }): Promise<ConnectionPlacement | null> {
      return (await connections.placement(connectionId)) ?? null;
    },

    /**
     * Configures the connection's ports on their device. Committed under the connection's key, so
     * a retry after a crash finds the commit instead of applying it twice; a candidate overtaken by
     * another change is loaded again.
     */
    async configureConnection({ connectionId }: { connectionId: string }): Promise<{ commitId: string }> {
      const placement = await connections.placement(connectionId);
      if (!placement) throw ApplicationFailure.nonRetryable(`no connection ${connectionId}`, 'NotFound');
      const key = `connection:${connectionId}:configure`;
      for (let attempt = 0; ; attempt += 1) {
        try {
          const candidate = await driver.load(connectionIntent(placement));
          return { commitId: (await driver.commit(candidate.id, key)).commitId };
        } catch (error) {
          const stale = error instanceof DriverError && error.code === 'stale-candidate';
          // Other changes to the same device got in first: load again, after a moment.
          if (stale && attempt < 10) {
            await sleep(10 + Math.floor(Math.random() * 40));
            continue;
          }
          // A device this busy is retried by Temporal, with backoff.
          if (stale)
            throw new Error(`${placement.device} kept changing while ${connectionId} was configured`);
          throw asFailure(error);
        }
      }
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
        const readings = await driver.readOptics(
          placement.device,
          placement.ports.map((port) => port.name),
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
