import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { deviceDirectory } from '../bird/driver';
import { BirdProcess } from '../bird/process';
import { endProcess, processRuns } from '../processes';
import type { ProgramOutput } from './program';
import { ProgramError, runProgram } from './program';
import type {
  FabricCore,
  FabricDevice,
  FabricRecord,
  FabricRouteServer,
  FabricRouteServerLink,
} from './topology';
import { bridgeName, coreBridgeName, EXTERNAL_IDS, linkOf, routeServerLinkOf, trunkOf } from './topology';

/** The Open_vSwitch row's `external_ids` key of a segment's fabric VLAN. */
const SEGMENT_VLAN = 'ixapi-segment-vlan:';
/** Fabric VLANs, from the first on: VLAN 1 is left alone, as switches keep it for themselves. */
const FABRIC_VLANS = { first: 2, last: 4094 } as const;

// RFC 7047's encoding of a map.
const mapOf = (value: unknown): Map<string, string> =>
  new Map(((value as [string, Array<[string, string]>])[1] ?? []).map(([k, v]) => [k, String(v)]));

/**
 * An exchange fabric on Open vSwitch's userspace datapath: its own ovsdb-server and ovs-vswitchd
 * under a private run directory (their pids, sockets, logs and database), one bridge
 * (`datapath_type=netdev`) per device, and per port a veth pair whose exchange end is a port of the
 * bridge and whose customer end sits in a network namespace of its own, the customer's router.
 * `up` makes what is missing and keeps what runs; `down` ends the processes by their recorded pids
 * and removes the bridges, veths and namespaces it recorded. Needs root, `openvswitch-switch`,
 * `iproute2` and `ethtool`.
 */
export class OvsFabric {
  constructor(readonly runDir: string) {}

  get dbSocket(): string {
    return path.join(this.runDir, 'db.sock');
  }

  private get recordPath(): string {
    return path.join(this.runDir, 'fabric.json');
  }

  /** The environment OVS's programs find their private directories by. */
  get env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      OVS_RUNDIR: this.runDir,
      OVS_DBDIR: this.runDir,
      OVS_LOGDIR: this.runDir,
      OVS_SYSCONFDIR: this.runDir,
      OVS_PKGDATADIR: process.env.OVS_PKGDATADIR ?? '/usr/share/openvswitch',
    };
  }

  /** ovs-vsctl against this fabric's database; waits until ovs-vswitchd applied the change. */
  vsctl(args: readonly string[]): Promise<ProgramOutput> {
    return runProgram('ovs-vsctl', [`--db=unix:${this.dbSocket}`, '--timeout=20', ...args], {
      env: this.env,
    });
  }

  /** An RFC 7047 transaction on this fabric's database, through ovsdb-client; its results. */
  async transact(operations: readonly object[]): Promise<Array<{ rows?: Array<Record<string, unknown>> }>> {
    const { stdout } = await runProgram(
      'ovsdb-client',
      ['transact', `unix:${this.dbSocket}`, JSON.stringify(['Open_vSwitch', ...operations])],
      { env: this.env, timeoutMs: 20_000 },
    );
    const results = JSON.parse(stdout) as Array<{ rows?: Array<Record<string, unknown>>; error?: string }>;
    const failed = results.find((result) => result?.error);
    if (failed) throw new ProgramError('ovsdb-client', String(failed.error), false, false);
    return results;
  }

  /** ovs-ofctl (OpenFlow 1.3) on a bridge's management socket; `args` name the switch as `{}`. */
  ofctl(bridge: string, args: readonly string[], input?: string): Promise<ProgramOutput> {
    const target = `unix:${path.join(this.runDir, `${bridge}.mgmt`)}`;
    return runProgram('ovs-ofctl', ['-O', 'OpenFlow13', ...args.map((a) => (a === '{}' ? target : a))], {
      env: this.env,
      input,
    });
  }

  async record(): Promise<FabricRecord> {
    if (!existsSync(this.recordPath)) return { pids: { ovsdbServer: null, ovsVswitchd: null }, devices: [] };
    return JSON.parse(await readFile(this.recordPath, 'utf8')) as FabricRecord;
  }

  private async save(record: FabricRecord): Promise<void> {
    await writeFile(this.recordPath, `${JSON.stringify(record, null, 2)}\n`);
  }

  private async pidOf(name: string): Promise<number | null> {
    const file = path.join(this.runDir, `${name}.pid`);
    if (!existsSync(file)) return null;
    const pid = Number((await readFile(file, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  }

  /**
   * Starts ovsdb-server and ovs-vswitchd unless they run, and makes the devices and ports missing,
   * the core bridges of the devices' networks with their trunks, and the route servers.
   */
  async up(
    devices: readonly FabricDevice[] = [],
    routeServers: readonly FabricRouteServer[] = [],
  ): Promise<FabricRecord> {
    await mkdir(this.runDir, { recursive: true });
    const record = await this.record();
    const db = path.join(this.runDir, 'conf.db');
    if (!processRuns(record.pids.ovsdbServer)) {
      if (!existsSync(db))
        await runProgram(
          'ovsdb-tool',
          ['create', db, path.join(this.env.OVS_PKGDATADIR!, 'vswitch.ovsschema')],
          {
            env: this.env,
          },
        );
      await runProgram(
        'ovsdb-server',
        [
          db,
          `--remote=punix:${this.dbSocket}`,
          `--pidfile=${path.join(this.runDir, 'ovsdb-server.pid')}`,
          `--unixctl=${path.join(this.runDir, 'ovsdb-server.ctl')}`,
          `--log-file=${path.join(this.runDir, 'ovsdb-server.log')}`,
          '--detach',
        ],
        { env: this.env },
      );
      record.pids.ovsdbServer = await this.pidOf('ovsdb-server');
      await this.save(record);
      await runProgram('ovs-vsctl', [`--db=unix:${this.dbSocket}`, '--no-wait', 'init'], { env: this.env });
      // Two tags deep: qinq services match the inner tag once the outer one is popped.
      await runProgram(
        'ovs-vsctl',
        [`--db=unix:${this.dbSocket}`, '--no-wait', 'set', 'Open_vSwitch', '.', 'other_config:vlan-limit=2'],
        { env: this.env },
      );
    }
    if (!processRuns(record.pids.ovsVswitchd)) {
      await runProgram(
        'ovs-vswitchd',
        [
          `unix:${this.dbSocket}`,
          `--pidfile=${path.join(this.runDir, 'ovs-vswitchd.pid')}`,
          `--unixctl=${path.join(this.runDir, 'ovs-vswitchd.ctl')}`,
          `--log-file=${path.join(this.runDir, 'ovs-vswitchd.log')}`,
          '--detach',
        ],
        { env: this.env },
      );
      record.pids.ovsVswitchd = await this.pidOf('ovs-vswitchd');
      await this.save(record);
    }
    for (const device of devices) {
      await this.addDevice(record, device);
      if (device.network) await this.addTrunk(record, device.device, device.network);
    }
    for (const server of routeServers) await this.addRouteServer(record, server);
    return record;
  }

  /**
   * The fabric VLAN of each segment: the VLAN its frames carry on the trunks and core bridges, the
   * same on every bridge. Kept in the Open_vSwitch row's `external_ids` (`ixapi-segment-vlan:<id>`);
   * a segment without one takes the lowest free VLAN in one transaction whose `wait` fails if any
   * other process allocated meanwhile, and then tries again, so that two never take one VLAN.
   */
  async segmentVlans(segments: Iterable<string>): Promise<Map<string, number>> {
    const wanted = [...new Set(segments)];
    for (let attempt = 0; ; attempt += 1) {
      const { ids, all } = await this.allocatedVlans();
      const vlans = new Map([...all].filter(([segment]) => wanted.includes(segment)));
      const used = new Set(all.values());
      const missing = wanted.filter((segment) => !vlans.has(segment));
      if (!missing.length) return vlans;
      let next: number = FABRIC_VLANS.first;
      const allocated: Array<[string, string]> = [];
      for (const segment of missing) {
        while (used.has(next)) next += 1;
        if (next > FABRIC_VLANS.last)
          throw new ProgramError(
            'ovsdb-client',
            `no fabric VLAN is left for segment ${segment}`,
            false,
            false,
          );
        used.add(next);
        vlans.set(segment, next);
        allocated.push([SEGMENT_VLAN + segment, String(next)]);
      }
      try {
        await this.transact([
          {
            op: 'wait',
            table: 'Open_vSwitch',
            where: [],
            timeout: 0,
            columns: ['external_ids'],
            until: '==',
            rows: [{ external_ids: ids }],
          },
          {
            op: 'mutate',
            table: 'Open_vSwitch',
            where: [],
            mutations: [['external_ids', 'insert', ['map', allocated]]],
          },
        ]);
        return vlans;
      } catch (error) {
        if (!(error instanceof ProgramError && /timed out/.test(error.message)) || attempt >= 50) throw error;
      }
    }
  }

  /** Every segment's fabric VLAN, and the Open_vSwitch row's `external_ids` they were read from. */
  private async allocatedVlans(): Promise<{ ids: unknown; all: Map<string, number> }> {
    const [{ rows }] = await this.transact([
      { op: 'select', table: 'Open_vSwitch', where: [], columns: ['external_ids'] },
    ]);
    const ids = rows?.[0]?.external_ids;
    if (ids === undefined)
      throw new ProgramError('ovsdb-client', 'the fabric has no Open_vSwitch row', false, false);
    const all = new Map<string, number>();
    for (const [key, value] of mapOf(ids))
      if (key.startsWith(SEGMENT_VLAN)) all.set(key.slice(SEGMENT_VLAN.length), Number(value));
    return { ids, all };
  }

  /** The core bridge of `network`: a plain learning switch on the userspace datapath. */
  private async addCore(record: FabricRecord, network: string): Promise<FabricCore> {
    record.cores ??= [];
    let core = record.cores.find((c) => c.network === network);
    if (!core) {
      core = { network, bridge: coreBridgeName(network), trunks: [] };
      record.cores.push(core);
      await this.save(record);
    }
    await this.vsctl([
      '--may-exist',
      'add-br',
      core.bridge,
      '--',
      'set',
      'Bridge',
      core.bridge,
      'datapath_type=netdev',
      'fail_mode=standalone',
      `external_ids:${EXTERNAL_IDS.network}=${JSON.stringify(network)}`,
    ]);
    return core;
  }

  /** The trunk from a device's bridge to its network's core bridge: two patch ports, peers. */
  private async addTrunk(record: FabricRecord, device: string, network: string): Promise<void> {
    const core = await this.addCore(record, network);
    const trunk = trunkOf(device, network);
    if (!core.trunks.some((t) => t.device === device)) {
      core.trunks.push(trunk);
      await this.save(record);
    }
    await this.vsctl([
      '--may-exist',
      'add-port',
      bridgeName(device),
      trunk.devicePort,
      '--',
      'set',
      'Interface',
      trunk.devicePort,
      'type=patch',
      `options:peer=${trunk.corePort}`,
      `external_ids:${EXTERNAL_IDS.network}=${JSON.stringify(network)}`,
      '--',
      '--may-exist',
      'add-port',
      core.bridge,
      trunk.corePort,
      '--',
      'set',
      'Interface',
      trunk.corePort,
      'type=patch',
      `options:peer=${trunk.devicePort}`,
    ]);
  }

  /**
   * A route server's namespace, with a veth whose other end is an access port of the core bridge
   * on its exchange LAN's fabric VLAN, and its addresses on the LAN.
   */
  private async addRouteServer(record: FabricRecord, server: FabricRouteServer): Promise<void> {
    const core = await this.addCore(record, server.network);
    const link = routeServerLinkOf(server);
    record.routeServers ??= [];
    if (!record.routeServers.some((r) => r.feature === server.feature)) {
      record.routeServers.push(link);
      await this.save(record);
    }
    const vlan = (await this.segmentVlans([server.segment])).get(server.segment)!;
    await this.addVeth(link.namespace, link.coreEnd, link.serverEnd);
    await runProgram('ip', ['link', 'set', link.coreEnd, 'up']);
    // `replace`, so that an `up` again leaves the sessions of a running route server alone.
    for (const [address, extra] of [
      [server.ipv4, []],
      [server.ipv6, ['nodad']],
    ] as const)
      if (address)
        await runProgram('ip', [
          '-n',
          link.namespace,
          'addr',
          'replace',
          address,
          'dev',
          link.serverEnd,
          ...extra,
        ]);
    await this.vsctl([
      '--may-exist',
      'add-port',
      core.bridge,
      link.coreEnd,
      '--',
      'set',
      'Port',
      link.coreEnd,
      `tag=${vlan}`,
      '--',
      'set',
      'Interface',
      link.coreEnd,
      `external_ids:${EXTERNAL_IDS.routeServer}=${JSON.stringify(server.feature)}`,
    ]);
  }

  /**
   * A network namespace with a veth pair whose `inner` end sits in it, up, beside its loopback.
   * The `outer` end belongs to the switch, not to the host: the host must not answer ARP for its
   * own addresses on it, nor speak IPv6 there.
   */
  private async addVeth(namespace: string, outer: string, inner: string): Promise<void> {
    if (!existsSync(`/run/netns/${namespace}`)) await runProgram('ip', ['netns', 'add', namespace]);
    if (!existsSync(`/sys/class/net/${outer}`))
      await runProgram('ip', [
        'link',
        'add',
        outer,
        'type',
        'veth',
        'peer',
        'name',
        inner,
        'netns',
        namespace,
      ]);
    await writeFile(`/proc/sys/net/ipv4/conf/${outer}/arp_ignore`, '8');
    await writeFile(`/proc/sys/net/ipv6/conf/${outer}/disable_ipv6`, '1').catch(() => undefined);
    // The userspace datapath passes frames on as they are, and a veth leaves the checksums of what
    // it sends to be filled in later: without this, TCP (BGP) between namespaces never connects.
    await runProgram('ip', ['netns', 'exec', namespace, 'ethtool', '-K', inner, 'tx', 'off']);
    await runProgram('ip', ['-n', namespace, 'link', 'set', inner, 'up']);
    await runProgram('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
  }

  /** Where the route servers' BIRDs keep their run directories (docs/route-servers.md). */
  get birdDir(): string {
    return path.join(this.runDir, 'bird');
  }

  /** A bridge for the device and a veth pair and namespace per port, where they are missing. */
  private async addDevice(record: FabricRecord, { device, ports }: FabricDevice): Promise<void> {
    const bridge = bridgeName(device);
    let entry = record.devices.find((d) => d.device === device);
    if (!entry) {
      entry = { device, bridge, links: [] };
      record.devices.push(entry);
      await this.save(record);
    }
    await this.vsctl([
      '--may-exist',
      'add-br',
      bridge,
      '--',
      'set',
      'Bridge',
      bridge,
      'datapath_type=netdev',
      'fail_mode=secure',
      'protocols=OpenFlow10,OpenFlow13,OpenFlow14',
      `external_ids:${EXTERNAL_IDS.device}=${JSON.stringify(device)}`,
    ]);
    // The driver's version counter starts at 0 on a new bridge, and carries on on one that runs.
    const version = await this.vsctl(['--if-exists', 'get', 'Bridge', bridge, 'external_ids:ixapi-version']);
    if (!version.stdout.trim()) await this.vsctl(['set', 'Bridge', bridge, 'external_ids:ixapi-version=0']);
    // Until the driver installs flows, a secure bridge forwards nothing.
    for (const { name, speed } of ports) {
      const link = linkOf(device, name);
      if (!entry.links.some((l) => l.port === name)) {
        entry.links.push(link);
        await this.save(record);
      }
      await this.addVeth(link.namespace, link.exchangeEnd, link.customerEnd);
      // A new port is disabled, like a port no connection uses yet.
      const known = await this.vsctl([
        '--bare',
        '--columns=name',
        'find',
        'Interface',
        `name=${link.exchangeEnd}`,
      ]);
      if (!known.stdout.trim()) {
        await runProgram('ip', ['link', 'set', link.exchangeEnd, 'down']);
        await this.vsctl([
          'add-port',
          bridge,
          link.exchangeEnd,
          '--',
          'set',
          'Interface',
          link.exchangeEnd,
          `external_ids:${EXTERNAL_IDS.interface}=${JSON.stringify(name)}`,
          `external_ids:${EXTERNAL_IDS.speed}=${JSON.stringify(String(speed))}`,
          `external_ids:${EXTERNAL_IDS.namespace}=${JSON.stringify(link.namespace)}`,
          `external_ids:${EXTERNAL_IDS.customerEnd}=${JSON.stringify(link.customerEnd)}`,
        ]);
      }
    }
  }

  /**
   * Starts again, as `up` starts them, the fabric's processes that were recorded running and died
   * (a fabric taken down records none, and stays down). Names the ones it started.
   */
  async restartDead(): Promise<Array<'ovsdb-server' | 'ovs-vswitchd'>> {
    const { pids } = await this.record();
    const dead = (
      [
        ['ovsdb-server', pids.ovsdbServer],
        ['ovs-vswitchd', pids.ovsVswitchd],
      ] as const
    )
      .filter(([, pid]) => pid !== null && !processRuns(pid))
      .map(([name]) => name);
    if (!dead.length) return dead;
    const record = await this.up();
    // A new ovs-vswitchd serves a bridge once its OpenFlow socket answers (a killed one leaves the
    // socket file behind); until then rules cannot go back.
    const answers = (bridge: string) =>
      this.ofctl(bridge, ['dump-aggregate', '{}']).then(
        () => true,
        () => false,
      );
    for (const { bridge } of record.devices)
      for (let waited = 0; waited < 10_000 && !(await answers(bridge)); waited += 100) await sleep(100);
    return dead;
  }

  /**
   * The processes, per device its bridge and links, the core bridges and their trunks, and the
   * route servers with their fabric VLAN and BIRD, as recorded and as they run.
   */
  async status(): Promise<{
    runDir: string;
    ovsdbServer: { pid: number | null; running: boolean };
    ovsVswitchd: { pid: number | null; running: boolean };
    devices: FabricRecord['devices'];
    cores: FabricCore[];
    routeServers: Array<
      FabricRouteServerLink & { vlan: number | null; bird: { pid: number | null; dir: string } }
    >;
  }> {
    const record = await this.record();
    const serving = processRuns(record.pids.ovsdbServer);
    const vlans = serving ? (await this.allocatedVlans()).all : new Map<string, number>();
    const routeServers = [];
    for (const server of record.routeServers ?? []) {
      const bird = this.birdOf(server);
      routeServers.push({
        ...server,
        vlan: vlans.get(server.segment) ?? null,
        bird: { pid: await bird.pid(), dir: bird.paths.dir },
      });
    }
    return {
      runDir: this.runDir,
      ovsdbServer: { pid: record.pids.ovsdbServer, running: serving },
      ovsVswitchd: { pid: record.pids.ovsVswitchd, running: processRuns(record.pids.ovsVswitchd) },
      devices: record.devices,
      cores: record.cores ?? [],
      routeServers,
    };
  }

  /** The BIRD of a route server the fabric placed (drivers/bird/driver.ts runs it in this directory). */
  private birdOf(server: FabricRouteServerLink): BirdProcess {
    return new BirdProcess(path.join(this.birdDir, deviceDirectory(server.feature)), server.namespace);
  }

  /**
   * Takes the fabric down: stops the route servers' BIRDs by their recorded pids, deletes the
   * bridges (the core bridges too), asks ovs-vswitchd (with its datapath) and ovsdb-server to exit,
   * ends them by recorded pid if they do not, and removes the veths and namespaces. Leaves the run
   * directory's database, logs and BIRD configurations unless `purge`.
   */
  async down({ purge = false }: { purge?: boolean } = {}): Promise<void> {
    const record = await this.record();
    const vswitchd = record.pids.ovsVswitchd;
    const server = record.pids.ovsdbServer;
    const routeServers = record.routeServers ?? [];
    for (const routeServer of routeServers) await this.birdOf(routeServer).stop();
    const bridges = [...record.devices, ...(record.cores ?? [])].map(({ bridge }) => bridge);
    if (processRuns(server) && processRuns(vswitchd)) {
      for (const bridge of bridges)
        await this.vsctl(['--if-exists', 'del-br', bridge]).catch(() => undefined);
    }
    if (processRuns(vswitchd))
      await runProgram(
        'ovs-appctl',
        ['-t', path.join(this.runDir, 'ovs-vswitchd.ctl'), 'exit', '--cleanup'],
        { env: this.env, timeoutMs: 10_000 },
      ).catch(() => undefined);
    await OvsFabric.stop(vswitchd);
    if (processRuns(server))
      await runProgram('ovs-appctl', ['-t', path.join(this.runDir, 'ovsdb-server.ctl'), 'exit'], {
        env: this.env,
        timeoutMs: 10_000,
      }).catch(() => undefined);
    await OvsFabric.stop(server);
    for (const { links } of record.devices) {
      for (const link of links) {
        if (existsSync(`/sys/class/net/${link.exchangeEnd}`))
          await runProgram('ip', ['link', 'del', link.exchangeEnd]).catch(() => undefined);
        if (existsSync(`/run/netns/${link.namespace}`))
          await runProgram('ip', ['netns', 'del', link.namespace]).catch(() => undefined);
      }
    }
    for (const { coreEnd, namespace } of routeServers) {
      if (existsSync(`/sys/class/net/${coreEnd}`))
        await runProgram('ip', ['link', 'del', coreEnd]).catch(() => undefined);
      if (existsSync(`/run/netns/${namespace}`))
        await runProgram('ip', ['netns', 'del', namespace]).catch(() => undefined);
    }
    // The netdev datapath's tap device of a bridge, where ovs-vswitchd left it.
    for (const bridge of bridges)
      if (existsSync(`/sys/class/net/${bridge}`))
        await runProgram('ip', ['link', 'del', bridge]).catch(() => undefined);
    record.pids = { ovsdbServer: null, ovsVswitchd: null };
    record.devices = [];
    record.cores = [];
    record.routeServers = [];
    if (purge) await rm(this.runDir, { recursive: true, force: true });
    else if (existsSync(this.runDir)) await this.save(record);
  }

  /** Ends a recorded process: given two seconds to exit on its own, then SIGTERM, then SIGKILL. */
  private static async stop(pid: number | null): Promise<void> {
    if (pid === null) return;
    for (let waited = 0; waited < 2000 && processRuns(pid); waited += 100) await sleep(100);
    await endProcess(pid, 5000);
  }
}
