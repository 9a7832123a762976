/**
 * The ovs fabric the `ovs` device driver drives (docs/ovs-driver.md):
 *
 *   npm run fabric -- up [--device <id> --ports <name,name,...> [--speed <Mbit/s>] [--network <id>]]
 *   npm run fabric -- status
 *   npm run fabric -- down [--purge]
 *
 * `up` starts ovsdb-server and ovs-vswitchd under OVS_RUN_DIR (default .data/ovs) unless they run,
 * and makes a bridge per device and a veth pair and customer namespace per port: the one device
 * named, or else every device and port of the catalogue in the database, with a core bridge per
 * metro area network trunked to its devices' bridges, and a namespace per route server on its
 * exchange LAN's fabric VLAN. `status` shows them, with the route servers' BIRD pids. `down` stops
 * the route servers' BIRDs and ends the processes by their recorded pids and removes the bridges,
 * veths and namespaces; `--purge` also removes the run directory. Needs root and Open vSwitch
 * (Debian: openvswitch-switch); the route servers need BIRD 2 (bird2).
 */
import { parseArgs } from 'node:util';
import path from 'node:path';
import { loadConfigOrExit } from '../config/config';
import { openDatabase } from '../db';
import { fabricDevices, fabricRouteServers } from '../drivers/ovs/catalogue';
import type { FabricDevice, FabricRouteServer } from '../drivers/ovs/topology';
import { OvsFabric } from '../drivers/ovs/fabric';
import { ensureLocalSecrets } from './local-secrets';

/** Every device of the catalogue with its ports and network, and the route servers. */
async function catalogue(): Promise<{ devices: FabricDevice[]; routeServers: FabricRouteServer[] }> {
  if (process.env.NODE_ENV !== 'production') ensureLocalSecrets(process.env);
  const config = loadConfigOrExit();
  const db = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
  try {
    return {
      devices: await fabricDevices(db.fabricCatalogue),
      routeServers: await fabricRouteServers(db.fabricCatalogue),
    };
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      device: { type: 'string' },
      ports: { type: 'string' },
      speed: { type: 'string', default: '10000' },
      network: { type: 'string' },
      purge: { type: 'boolean', default: false },
    },
  });
  const [command] = positionals;
  const fabric = new OvsFabric(path.resolve(process.env.OVS_RUN_DIR || '.data/ovs'));
  switch (command) {
    case 'up': {
      if (values.device && !values.ports) throw new Error('--device needs --ports <name,name,...>');
      const { devices, routeServers } = values.device
        ? {
            devices: [
              {
                device: values.device,
                ports: values
                  .ports!.split(',')
                  .map((name) => ({ name: name.trim(), speed: Number(values.speed) })),
                network: values.network,
              },
            ],
            routeServers: [],
          }
        : await catalogue();
      await fabric.up(devices, routeServers);
      process.stdout.write(`${JSON.stringify(await fabric.status(), null, 2)}\n`);
      break;
    }
    case 'status':
      process.stdout.write(`${JSON.stringify(await fabric.status(), null, 2)}\n`);
      break;
    case 'down':
      await fabric.down({ purge: values.purge });
      process.stdout.write(`the fabric under ${fabric.runDir} is down\n`);
      break;
    default:
      throw new Error(
        'usage: npm run fabric -- up [--device <id> --ports <a,b,...> [--network <id>]] | status | down [--purge]',
      );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
