import type { Revival, Supervised } from '../supervision';
import { messageOf } from '../supervision';

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
