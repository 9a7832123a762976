import type { OvsDriver } from './ovs/driver';

/** What one look at a part of the data plane found dead or lost, and brought back. */
export interface Revival {
  /** Processes started again, each with what it serves (`ovs-vswitchd`, `bird of rs1`). */
  restarted: string[];
  /** Devices whose state, lost with a process, was installed again (`rules of sw1`). */
  restored: string[];
  /** What could not be brought back, with what the device answered. */
  failures: string[];
}

/**
 * A part of the data plane that the worker looks after (the fabric's processes, the route
 * servers' daemons): each look brings back what died and what lived only in its memory. The worker
 * hands the supervisor whatever parts its device driver has (worker/create-worker.ts).
 */
export interface Supervised {
  /** What the part is, for logs. */
  readonly name: string;
  revive(): Promise<Revival>;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The ovs fabric: ovsdb-server and ovs-vswitchd started again when their recorded processes died,
 * then every device's OpenFlow rules and meters installed again where they are missing (a
 * restarted ovs-vswitchd starts with none).
 */
export function ovsFabricSupervision(driver: OvsDriver): Supervised {
  return {
    name: `ovs fabric ${driver.fabric.runDir}`,
    async revive() {
      const revival: Revival = { restarted: [], restored: [], failures: [] };
      try {
        revival.restarted.push(...(await driver.fabric.restartDead()));
        for (const device of await driver.devices()) {
          try {
            if ((await driver.restore(device)).restored) revival.restored.push(`rules of ${device}`);
          } catch (error) {
            revival.failures.push(messageOf(error));
          }
        }
      } catch (error) {
        revival.failures.push(`ovs fabric: ${messageOf(error)}`);
      }
      return revival;
    },
  };
}

/**
 * Route servers' daemons (BIRD, drivers/bird/driver.ts): each route server's started again, with the
 * configuration it last accepted, when it died. `routeServers` lists the route servers to look at.
 */
export function routeServerSupervision(
  daemons: { restartIfDead(device: string): Promise<boolean> },
  routeServers: () => Promise<readonly string[]>,
): Supervised {
  return {
    name: 'route servers',
    async revive() {
      const revival: Revival = { restarted: [], restored: [], failures: [] };
      try {
        for (const device of await routeServers()) {
          try {
            if (await daemons.restartIfDead(device)) revival.restarted.push(`bird of ${device}`);
          } catch (error) {
            revival.failures.push(`${device}: ${messageOf(error)}`);
          }
        }
      } catch (error) {
        revival.failures.push(`route servers: ${messageOf(error)}`);
      }
      return revival;
    },
  };
}
