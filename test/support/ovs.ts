import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ServiceAttachment } from '../../drivers/contract';
import type { FabricDevice, FabricRecord, FabricRouteServer } from '../../drivers/ovs/topology';
import { OvsFabric } from '../../drivers/ovs/fabric';
import { runProgram } from '../../drivers/ovs/program';
import { linkOf } from '../../drivers/ovs/topology';
import { acquireHostLock } from './host-lock';
import { cannotRun, onPath } from './system-tools';

/** The Debian packages of the programs the fabric's tests may need beside Open vSwitch. */
const PACKAGES: Record<string, string> = { bird: 'bird2', birdc: 'bird2', stayrtr: 'stayrtr' };

/** Why Open vSwitch cannot run here (with `more` programs besides), or undefined where it can. */
export function whyOvsCannotRun(more: string[] = []): string | undefined {
  const missing = [
    'ovsdb-server',
    'ovs-vswitchd',
    'ovs-vsctl',
    'ovs-ofctl',
    'ovsdb-client',
    'ip',
    'ping',
    'ethtool',
    'perl',
    ...more,
  ].filter((program) => !onPath(program));
  const packages = [...new Set(more.map((program) => PACKAGES[program] ?? program))];
  if (missing.length)
    return `${missing.join(', ')} not installed (Debian: apt-get install openvswitch-switch iputils-ping iproute2 ethtool perl${packages.map((name) => ` ${name}`).join('')})`;
  if (process.getuid?.() !== 0) return 'not root: the fabric makes network namespaces and veth pairs';
  return undefined;
}

/** Processes, bridges, namespaces and links of `record` that the fabric left, for the check after `down`. */
export async function leftovers(fabric: OvsFabric, record: FabricRecord): Promise<string[]> {
  const found: string[] = [];
  const { ovsdbServer, ovsVswitchd } = await fabric.status();
  if (ovsdbServer.running) found.push(`ovsdb-server ${ovsdbServer.pid}`);
  if (ovsVswitchd.running) found.push(`ovs-vswitchd ${ovsVswitchd.pid}`);
  for (const pid of Object.values(record.pids))
    if (
      pid &&
      existsSync(`/proc/${pid}/cmdline`) &&
      !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
    )
      found.push(`process ${pid}`);
  for (const { bridge, links } of record.devices) {
    if (existsSync(`/sys/class/net/${bridge}`)) found.push(`bridge ${bridge}`);
    for (const link of links) {
      if (existsSync(`/sys/class/net/${link.exchangeEnd}`)) found.push(`veth ${link.exchangeEnd}`);
      if (existsSync(`/run/netns/${link.namespace}`)) found.push(`namespace ${link.namespace}`);
    }
  }
  for (const { bridge } of record.cores ?? [])
    if (existsSync(`/sys/class/net/${bridge}`)) found.push(`core bridge ${bridge}`);
  for (const { coreEnd, namespace } of record.routeServers ?? []) {
    if (existsSync(`/sys/class/net/${coreEnd}`)) found.push(`veth ${coreEnd}`);
    if (existsSync(`/run/netns/${namespace}`)) found.push(`namespace ${namespace}`);
  }
  return found;
}

/** How long a test file waits for the fabrics of other files to be taken down. */
const FABRIC_TURN_MS = 10 * 60_000;
const turns = new WeakMap<OvsFabric, () => void>();

/**
 * Runs `work` in a test or hook with `extraMs` more than its timeout, and leaves the runnable the
 * time `work` took on top of its own: mocha also fails a runnable whose whole duration exceeds the
 * timeout it has when it ends, so restoring the old one after a long wait would fail it.
 */
async function withTimeOfItsOwn<T>(
  context: Mocha.Context,
  extraMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const timeout = context.timeout();
  const started = Date.now();
  context.timeout(timeout + extraMs);
  try {
    return await work();
  } finally {
    context.timeout(timeout + (Date.now() - started));
  }
}

/**
 * Waits until no other test process runs a fabric on this host, and answers the function that lets
 * the next one: ovs-vswitchd's userspace datapath makes a tap device of the host (`ovs-netdev`)
 * that a second fabric's would collide with. The hook waiting gets the time it waits on top of its
 * own.
 */
export function fabricTurn(context: Mocha.Context): Promise<() => void> {
  return withTimeOfItsOwn(context, FABRIC_TURN_MS, () => acquireHostLock('ovs-fabric', FABRIC_TURN_MS));
}

/**
 * A fabric of its own for a test file (run directory `<prefix>…` in the temporary directory) with
 * `devices` and `routeServers`; where Open vSwitch (or BIRD, for route servers) cannot run,
 * `cannotRun`. It waits for its turn (`fabricTurn`), which `stopFabric` passes on.
 */
export async function startFabric(
  context: Mocha.Context,
  prefix: string,
  devices: FabricDevice[],
  routeServers: FabricRouteServer[] = [],
): Promise<OvsFabric> {
  const reason = whyOvsCannotRun(routeServers.length ? ['bird', 'birdc'] : []);
  if (reason) cannotRun(context, `Open vSwitch cannot run (${reason})`);
  const release = await fabricTurn(context);
  const started = Date.now();
  const fabric = new OvsFabric(mkdtempSync(path.join(tmpdir(), prefix)));
  try {
    turns.set(fabric, release);
    // Beside the integration tier the processes of Open vSwitch may get little CPU: bringing the
    // fabric up has a budget of its own, on top of the hook's.
    await withTimeOfItsOwn(context, FABRIC_UP_MS, () => fabric.up(devices, routeServers));
    const took = Date.now() - started;
    if (took > SLOW_UP_MS)
      process.stdout.write(
        `      the fabric took ${Math.round(took / 1000)} s to come up; ovs-vswitchd's log ends:\n${logTail(fabric)}\n`,
      );
    return fabric;
  } catch (error) {
    const log = logTail(fabric);
    // What did come up goes down again, so that the next file's fabric finds the host clear.
    await fabric.down({ purge: true }).catch(() => undefined);
    turns.delete(fabric);
    release();
    throw new Error(
      `the fabric did not come up in ${Math.round((Date.now() - started) / 1000)} s: ${(error as Error).message}; ovs-vswitchd's log ends:\n${log}`,
      { cause: error },
    );
  }
}

/** How long `startFabric` gives the fabric to come up, and beyond which it says how long it took. */
const FABRIC_UP_MS = 5 * 60_000;
const SLOW_UP_MS = 30_000;

/** The last lines of the ovs-vswitchd log of `fabric`, indented, for messages. */
function logTail(fabric: OvsFabric, lines = 15): string {
  const file = path.join(fabric.runDir, 'ovs-vswitchd.log');
  if (!existsSync(file)) return '        (no log)';
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((line) => `        ${line}`)
    .join('\n');
}

/**
 * Takes a fabric of `startFabric` down, checks that it recorded what it made and left nothing, and
 * gives the host to the next file's fabric.
 */
export async function stopFabric(fabric: OvsFabric): Promise<void> {
  try {
    const record = await fabric.record();
    assert.ok(record.devices.length > 0 && record.pids.ovsVswitchd, 'the fabric recorded what it made');
    await fabric.down({ purge: true });
    assert.deepEqual(await leftovers(fabric, record), [], 'the fabric left nothing running');
  } finally {
    turns.get(fabric)?.();
    turns.delete(fabric);
  }
}

/** Runs `args` in the network namespace of the customer side of `port` of `device`. */
export const inCustomerSide = (device: string, port: string, args: string[]) =>
  runProgram('ip', ['netns', 'exec', linkOf(device, port).namespace, ...args]);

/** The MAC address of the customer side of `port` of `device`. */
export async function customerMac(device: string, port: string): Promise<string> {
  const { namespace, customerEnd } = linkOf(device, port);
  const { stdout } = await runProgram('ip', ['-n', namespace, '-j', 'link', 'show', customerEnd]);
  return (JSON.parse(stdout) as Array<{ address: string }>)[0].address;
}

/**
 * Writes `count` copies of `frame` (hex) to `interface`, one every `gapSeconds`, through a packet
 * socket. The kernels the tests run on may lack 802.1Q (no VLAN interfaces, no tc vlan action), so
 * a customer side sends its tagged frames whole; Perl opens the socket without modules, and
 * perl-base is always there on Debian.
 */
const SEND_FRAMES = `
my ($interface, $count, $gap, $hex) = @ARGV;
open(my $index_file, '<', "/sys/class/net/$interface/ifindex") or die "$interface: $!";
my $index = <$index_file>;
chomp $index;
socket(my $socket, 17, 3, 0) or die "packet socket: $!";    # AF_PACKET, SOCK_RAW
my $to = pack('S n i S C C a8', 17, 0, $index, 0, 0, 0, '');   # struct sockaddr_ll
my $frame = pack('H*', $hex);
for (1 .. $count) {
  defined(send($socket, $frame, 0, $to)) or die "send: $!";
  select(undef, undef, undef, $gap) if $gap > 0;
}`;

/**
 * Sends `count` frames of `size` octets (without FCS) from the customer side of `port`: to `to`,
 * with `tags` (outermost first; 802.1ad outside 802.1Q when there are two), carrying IPv4's
 * ethertype and filler, a millisecond apart so that the userspace datapath takes each one off its
 * socket even on a busy machine.
 */
export async function sendTaggedFrames(
  device: string,
  port: string,
  { to, tags, size, count }: { to: string; tags: number[]; size: number; count: number },
): Promise<void> {
  const mac = (address: string) => address.replace(/:/g, '');
  const tpids = tags.length === 2 ? ['88a8', '8100'] : ['8100'];
  const header = [
    mac(to),
    mac(await customerMac(device, port)),
    ...tags.map((tag, index) => `${tpids[index]}${tag.toString(16).padStart(4, '0')}`),
    '0800',
  ].join('');
  const frame = header + '45'.repeat(size - header.length / 2);
  await inCustomerSide(device, port, [
    'perl',
    '-e',
    SEND_FRAMES,
    linkOf(device, port).customerEnd,
    String(count),
    '0.001',
    frame,
  ]);
}

/** A service of the driver contract on `parent`: untagged, open to every MAC, on segment `lan`. */
export const serviceAttachment = (
  name: string,
  parent: string,
  extra: Partial<ServiceAttachment> = {},
): ServiceAttachment => ({
  name,
  description: '',
  parent,
  vlanType: 'port',
  outerVlan: null,
  innerVlan: null,
  macs: [],
  macFilter: false,
  rateLimit: null,
  segment: 'lan',
  isolated: false,
  ...extra,
});
