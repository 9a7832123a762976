import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { ConnectionRepository } from '../db/repositories/connection-repository';
import type { DeviceHoldingsRepository } from '../db/repositories/device-holdings-repository';
import type { NetworkFeatureConfigRepository } from '../db/repositories/network-feature-config-repository';
import type { NetworkServiceConfigRepository } from '../db/repositories/network-service-config-repository';
import { newId } from '../domain/ids';
import type { DeviceDriver, DeviceIntent } from '../drivers/contract';
import { DriverError } from '../drivers/contract';
import type { Revival, Supervised } from '../drivers/supervision';
import { connectionIntent } from './connections';
import { commitIntent, heartbeating } from './device-work';
import { attachmentOf } from './network-service-configs';

/** What one round of supervision brought back, and what it could not. */
export interface SupervisionRound extends Revival {
  /** When the round ended (ISO 8601). */
  at: string;
}

/** What bringing the devices in line with the database did. */
export interface Reconciliation {
  /** When it ended (ISO 8601). */
  at: string;
  /** Devices looked at. */
  devices: number;
  /** Devices that differed from the database, and what their commit changed. */
  changed: Array<{ device: string; commitId: string; changes: string[] }>;
  /** Devices that refused what the database says they hold, with their answer; nothing moved. */
  refused: Array<{ device: string; error: string }>;
}

/** The activity's logger, where there is one (tests call activities as plain functions too). */
function activityLog(): Context['log'] | undefined {
  try {
    return Context.current().log;
  } catch {
    return undefined;
  }
}

/** Sorted and without repeats. */
const uniqueSorted = (items: Iterable<string>) => [...new Set(items)].sort();

/**
 * Activities that keep the data plane alive and in line with the database: they bring back what
 * died (the parts the worker supervises) and drive every device to what the resources in service
 * say it holds, through the driver contract.
 */
export function deviceSupervisionActivities(deps: {
  supervised: readonly Supervised[];
  holdings: DeviceHoldingsRepository;
  connections: ConnectionRepository;
  networkServiceConfigs: NetworkServiceConfigRepository;
  networkFeatureConfigs: NetworkFeatureConfigRepository;
  driver: DeviceDriver;
  clock: () => Date;
}) {
  const { supervised, holdings, driver, clock } = deps;

  /**
   * Per device, what the resources in service put on it, made by the provisioning activities' own
   * intent builders: a connection's ports and bundle, a config's service, a session on its route
   * server.
   */
  async function intendedHoldings(): Promise<Map<string, DeviceIntent[]>> {
    const inService = await holdings.inService();
    const intents = new Map<string, DeviceIntent[]>();
    const add = (intent: DeviceIntent) =>
      intents.set(intent.device, [...(intents.get(intent.device) ?? []), intent]);
    for (const id of inService.connections) {
      const placement = await deps.connections.placement(id);
      if (placement) add(connectionIntent(placement));
    }
    for (const id of inService.networkServiceConfigs) {
      const attached = await attachmentOf(deps.networkServiceConfigs, id);
      if (attached) add({ device: attached.placement.device, services: [attached.attachment] });
    }
    for (const id of inService.networkFeatureConfigs) {
      const placement = await deps.networkFeatureConfigs.placement(id);
      if (placement) add({ device: placement.routeServer, bgpSessions: [placement.session] });
    }
    return intents;
  }

  /**
   * One intent for the device: every part the resources in service put on it, and the removal of
   * the services and sessions it holds that the database does not know (or knows as ended).
   */
  async function deviceIntent(device: string, parts: readonly DeviceIntent[]): Promise<DeviceIntent> {
    const intent: Required<DeviceIntent> = {
      device,
      interfaces: parts.flatMap((part) => part.interfaces ?? []),
      lags: parts.flatMap((part) => part.lags ?? []),
      removeLags: uniqueSorted(parts.flatMap((part) => part.removeLags ?? [])),
      services: parts.flatMap((part) => part.services ?? []),
      removeServices: [],
      bgpSessions: parts.flatMap((part) => part.bgpSessions ?? []),
      removeBgpSessions: [],
    };
    const intended = new Set([...intent.services, ...intent.bgpSessions].map((part) => part.name));
    const [services, sessions] = await Promise.all([
      driver.capabilities.services ? driver.readServices(device) : [],
      driver.capabilities.bgpSessions ? driver.readBgpSessions(device) : [],
    ]);
    const held = [...services, ...sessions].map((part) => part.name).filter((name) => !intended.has(name));
    const live = await holdings.liveConfigs(held);
    intent.removeServices = services.map((s) => s.name).filter((n) => !intended.has(n) && !live.has(n));
    intent.removeBgpSessions = sessions.map((s) => s.name).filter((n) => !intended.has(n) && !live.has(n));
    return intent;
  }

  /**
   * Drives one device to `intent`: load, diff, and commit when it differs. The key names this
   * activity's run and what it changes, so that a retry finds its commit rather than applying it
   * again. Answers what changed, or nothing.
   */
  async function reconcileDevice(
    intent: DeviceIntent,
    run: string,
  ): Promise<{ commitId: string; changes: string[] } | undefined> {
    const candidate = await driver.load(intent);
    const changes = await driver.diff(candidate.id);
    if (!changes.length) return undefined;
    const digest = createHash('sha256')
      .update(`${run}\0${JSON.stringify(changes)}`)
      .digest('hex')
      .slice(0, 16);
    const { commitId } = await commitIntent(
      driver,
      () => intent,
      `reconcile:${intent.device}:${digest}`,
      `the reconciliation of ${intent.device}`,
    );
    return { commitId, changes: changes.map((change) => `${change.action} ${change.kind} ${change.name}`) };
  }

  return {
    /**
     * One look at every supervised part of the data plane: processes that died are started again,
     * and what they held in memory is installed again. Says, and logs, what it brought back.
     */
    async superviseDevices(): Promise<SupervisionRound> {
      const round: SupervisionRound = { at: '', restarted: [], restored: [], failures: [] };
      for (const part of supervised) {
        const revival = await heartbeating(() => part.revive());
        round.restarted.push(...revival.restarted);
        round.restored.push(...revival.restored);
        round.failures.push(...revival.failures);
        if (revival.restarted.length || revival.restored.length)
          activityLog()?.warn(`${part.name}: brought back what died`, { ...revival });
        if (revival.failures.length)
          activityLog()?.error(`${part.name}: could not bring everything back`, {
            failures: revival.failures,
          });
      }
      round.at = clock().toISOString();
      return round;
    },

    /**
     * Brings every device in line with the database: what the connections, network service configs
     * and network feature configs in service put on it, and none of the services or sessions the
     * database does not know. A device that refuses is reported (and logged) and left as it is;
     * no resource changes state.
     */
    async reconcileDevices(): Promise<Reconciliation> {
      let run: string;
      try {
        const { workflowExecution, activityId } = Context.current().info;
        run = `${workflowExecution?.runId ?? newId('run')}/${activityId}`;
      } catch {
        run = newId('reconcile');
      }
      const intents = await intendedHoldings();
      const devices = uniqueSorted([...(await holdings.devices()), ...intents.keys()]);
      const result: Reconciliation = { at: '', devices: 0, changed: [], refused: [] };
      for (const device of devices) {
        const parts = intents.get(device) ?? [];
        try {
          const intent = await heartbeating(() => deviceIntent(device, parts));
          result.devices += 1;
          const done = await heartbeating(() => reconcileDevice(intent, run));
          if (!done) continue;
          result.changed.push({ device, ...done });
          activityLog()?.warn(`${device} differed from the database; brought in line`, { device, ...done });
        } catch (error) {
          // A device of the catalogue the driver does not have, holding nothing in service: no concern.
          if (!parts.length && error instanceof DriverError && error.code === 'invalid-config') continue;
          const message = error instanceof Error ? error.message : String(error);
          result.refused.push({ device, error: message });
          activityLog()?.error(`${device} refused what the database says it holds`, {
            device,
            error: message,
          });
        }
      }
      result.at = clock().toISOString();
      return result;
    },
  };
}
