import type { Revival, Supervised } from '../supervision';
import { messageOf } from '../supervision';
import type { OvsDriver } from './driver';

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
