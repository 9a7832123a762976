import { createHash } from 'node:crypto';
import { newId } from '../../domain/ids';
import type {
  BgpSession,
  Candidate,
  CommitResult,
  ConfigChange,
  CounterReading,
  DeviceDriver,
  DeviceIntent,
  InterfaceState,
  LagConfig,
  OpticsReading,
  ServiceAttachment,
} from '../contract';
import { DriverError } from '../contract';
import type { Counters } from '../counters';
import { addCounters, NO_TRAFFIC, subInterfaceOf, unknownCounterName } from '../counters';
import type { DeviceSnapshot } from '../intent';
import { applyChanges, inverseOf, planChanges } from '../intent';
import type { OvsFabric } from './fabric';
import { EXTERNAL_IDS, ProgramError, runProgram } from './fabric';

/*
 * How the contract maps onto Open vSwitch (docs/ovs-driver.md says more):
 *
 * - A device is a bridge (`datapath_type=netdev`, `fail_mode=secure`) whose `external_ids` name it
 *   (`ixapi-device`) and hold the driver's version counter, its services and its commits.
 * - An interface is a veth end, a port of the bridge; its `external_ids` hold the contract name,
 *   speed and description. Enabled is the link's administrative state (`ip link set up/down`),
 *   operUp its carrier: the customer side in its namespace answers.
 * - A LAG is a port of its members' interfaces (a bond from two members on): `bond_mode=balance-slb`,
 *   `lacp=active` and `other_config:lacp-time` for LACP, `lacp=off` for a static bundle.
 * - A service is OpenFlow rules, no VLAN configuration of the port: OVS's own VLAN modes allow one
 *   access VLAN per port and no per-VLAN MAC filters or rate limits, while several services of
 *   different segments share one interface here. Table 0 classifies what enters: (in_port, tag)
 *   for dot1q, in_port alone for a port service; for qinq it pops the outer tag into register 1 and
 *   table 1 matches (in_port, reg1, inner tag). A classifying rule exists per MAC of the service
 *   (`dl_src`) when it lists any, so that other senders fall to the table's drop rule; a service
 *   with `macFilter` and no MACs has none, so that all it sends falls there. A rule's cookie is the
 *   service's number, its first instruction the service's meter when it is rate-limited
 *   (OpenFlow meter of the same number, kbit/s, drop band). Its actions strip the service's tags
 *   and send a copy to every other service of the segment, tagged the way that service is (a dot1q
 *   tag, or an 802.1ad outer over an 802.1Q inner tag), out of its interface or, for a LAG, out of a
 *   live member (`bundle`, hashed on the source MAC). An isolated service sends to the services of
 *   its segment that are not isolated only. The segment is thus a hub: every service of it sees
 *   every frame, which suits a lab fabric (learning is left for later).
 * - A device the fabric trunked to its metro area network's core bridge (a patch port with
 *   `ixapi-network` in its `external_ids`) also sends every segment's frames out of the trunk,
 *   tagged with the segment's fabric VLAN (OvsFabric.segmentVlans; priority code point 1 from an
 *   isolated service), and hands what comes in on the trunk with that tag to the segment's services
 *   (those not isolated, for frames marked isolated), never back to the trunk.
 * - Reads come from the device: OVSDB (bridges, ports, interfaces, service records), the kernel
 *   (link state), and ovs-ofctl (MACs from the rules' `dl_src`, rate limits from the meters).
 */

const IDS = {
  version: 'ixapi-version',
  description: 'ixapi-description',
  lag: 'ixapi-lag',
} as const;
const SERVICE_PREFIX = 'ixapi-service:';
const COMMIT_PREFIX = 'ixapi-commit:';
const KEY_PREFIX = 'ixapi-key:';

/**
 * What OVSDB keeps of a service. Reads take its MACs and rate limit from the rules and meters, which
 * live in ovs-vswitchd only; the record keeps them too (records of older commits may lack them), so
 * that `restore` can install the rules again after ovs-vswitchd restarted.
 */
interface ServiceRecord {
  id: number;
  description: string;
  parent: string;
  vlanType: ServiceAttachment['vlanType'];
  outerVlan: number | null;
  innerVlan: number | null;
  segment: string;
  isolated: boolean;
  /**
   * Absent from records written before services said it: those let every source in while `macs`
   * is empty, as their rules were installed.
   */
  macFilter?: boolean;
  macs?: string[];
  rateLimit?: number | null;
}

interface CommitRecord {
  key: string;
  device: string;
  changes: ConfigChange[];
  rolledBack: boolean;
  /** When it was committed (ISO 8601): the oldest commits are forgotten first. */
  at: string;
}

interface InterfaceRow {
  uuid: string;
  name: string;
  ofport: number;
  error: string;
  linkSpeed: number;
  ids: Map<string, string>;
  /** OVS's counters of the interface (`rx_bytes`, `tx_packets`, …), as it last wrote them to OVSDB. */
  statistics: Map<string, string>;
}

interface PortRow {
  uuid: string;
  name: string;
  interfaces: InterfaceRow[];
  bondMode: string;
  lacp: string;
  otherConfig: Map<string, string>;
  ids: Map<string, string>;
}

/** The bridge of a device as OVSDB holds it. */
interface Layout {
  device: string;
  bridge: string;
  ids: Map<string, string>;
  ports: PortRow[];
  /** Interfaces by contract name. */
  interfaces: Map<string, InterfaceRow>;
  /** The patch port to the network's core bridge, where the fabric trunked the device. */
  trunk: InterfaceRow | null;
}

/** The device as the contract sees it, with what it takes to change it. */
interface DeviceState {
  layout: Layout;
  version: number;
  snapshot: DeviceSnapshot;
  /** Services' numbers (their rules' cookie and their meter). */
  serviceIds: Map<string, number>;
  /** The bridge's keys of commits and commit keys, which a failed change must not add to. */
  committed: Set<string>;
}

// RFC 7047's encodings of sets, maps and UUIDs.
type OvsdbValue = unknown;
const setOf = (value: OvsdbValue): OvsdbValue[] =>
  Array.isArray(value) && value[0] === 'set' ? (value[1] as OvsdbValue[]) : [value];
const uuidOf = (value: OvsdbValue): string => (value as [string, string])[1];
const mapOf = (value: OvsdbValue): Map<string, string> =>
  new Map(((value as [string, Array<[string, string]>])[1] ?? []).map(([k, v]) => [k, String(v)]));
/** A column of at most one atom (`ofport`, `error`), as text; empty where it holds none. */
const scalarOf = (value: OvsdbValue): string => {
  const atom = Array.isArray(value) ? setOf(value)[0] : value;
  return typeof atom === 'string' || typeof atom === 'number' ? String(atom) : '';
};

/** ovs-vsctl's syntax for a string: a quoted, escaped one, which JSON's is. */
const quoted = (text: string) => JSON.stringify(text);

const byName = <T extends { name: string }>(items: T[]): T[] =>
  [...items].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));

/** A LAG's port on the bridge; its contract name is kept in `external_ids` (names may hold `/`). */
const lagPortName = (lag: string) => `ixlag${createHash('sha256').update(lag).digest('hex').slice(0, 10)}`;

export interface OvsDriverOptions {
  /** The most candidates kept in memory; older ones are forgotten (a commit of one is stale). */
  maxCandidates?: number;
  /**
   * The most commits a device keeps (default 1000), with their keys: beyond it the oldest are
   * forgotten, and can then be neither rolled back nor found by their key.
   */
  keepCommits?: number;
}

/**
 * The `ovs` driver: each device a bridge of an Open vSwitch fabric (`drivers/ovs/fabric.ts`), each
 * interface a veth port of it, LAGs bonds, services OpenFlow rules and meters. Candidates live in
 * the driver's memory (load and commit happen in one activity); commits, their keys and the version
 * a candidate is checked against live in the bridge's `external_ids`, so that a retried activity on
 * another worker finds its commit. Changes of one device are applied one at a time per process.
 */
export class OvsDriver implements DeviceDriver {
  readonly kind = 'ovs';
  readonly capabilities = {
    lags: true,
    lacp: true,
    optics: false,
    rollback: true,
    services: true,
    counters: true,
    bgpSessions: false,
  };
  private readonly candidates = new Map<string, Candidate & { baseVersion: number }>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    readonly fabric: OvsFabric,
    private readonly options: OvsDriverOptions = {},
  ) {}

  /** Runs `work` after every change of `device` this process started before it. */
  private exclusive<T>(device: string, work: () => Promise<T>): Promise<T> {
    const before = this.queues.get(device) ?? Promise.resolve();
    const run = before.then(work, work);
    const settled = run.catch(() => undefined);
    this.queues.set(device, settled);
    void settled.then(() => {
      if (this.queues.get(device) === settled) this.queues.delete(device);
    });
    return run;
  }

  /** A program's failure as the contract's error: unreachable, timed out or refused by OVS. */
  private static failure(device: string, error: unknown, refusal: 'rejected' | 'unreachable'): DriverError {
    if (error instanceof DriverError) return error;
    if (error instanceof ProgramError) {
      if (error.timedOut) return new DriverError('timeout', `${device}: ${error.program} timed out`);
      if (error.missing)
        return new DriverError('unreachable', `${device}: ${error.program} is not installed`);
      if (
        /connection refused|No such file or directory|failed to connect|database connection failed/i.test(
          error.message,
        )
      )
        return new DriverError('unreachable', `${device}: ${error.message.trim()}`);
      return new DriverError(refusal, `${device}: ${error.message.trim()}`);
    }
    return new DriverError(refusal, `${device}: ${error instanceof Error ? error.message : String(error)}`);
  }

  private async reading<T>(device: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw OvsDriver.failure(device, error, 'unreachable');
    }
  }

  /** The device's bridge, ports and interfaces from OVSDB, in one transaction. */
  private async layout(device: string): Promise<Layout> {
    const [bridges, ports, interfaces] = await this.fabric.transact([
      {
        op: 'select',
        table: 'Bridge',
        where: [['external_ids', 'includes', ['map', [[EXTERNAL_IDS.device, device]]]]],
        columns: ['name', 'ports', 'external_ids'],
      },
      {
        op: 'select',
        table: 'Port',
        where: [],
        columns: ['_uuid', 'name', 'interfaces', 'bond_mode', 'lacp', 'other_config', 'external_ids'],
      },
      {
        op: 'select',
        table: 'Interface',
        where: [],
        columns: ['_uuid', 'name', 'ofport', 'error', 'link_speed', 'external_ids', 'statistics'],
      },
    ]);
    const [bridge] = bridges.rows ?? [];
    if (!bridge) throw new DriverError('invalid-config', `the ovs fabric has no device ${device}`);
    const interfaceRows = new Map<string, InterfaceRow>();
    for (const row of interfaces.rows ?? []) {
      const uuid = uuidOf(row._uuid);
      interfaceRows.set(uuid, {
        uuid,
        name: String(row.name),
        ofport: Number(scalarOf(row.ofport) || -1),
        error: scalarOf(row.error),
        linkSpeed: Number(scalarOf(row.link_speed) || 0),
        ids: mapOf(row.external_ids),
        statistics: mapOf(row.statistics),
      });
    }
    const portUuids = new Set(setOf(bridge.ports).map(uuidOf));
    const portRows: PortRow[] = [];
    const byContractName = new Map<string, InterfaceRow>();
    let trunk: InterfaceRow | null = null;
    for (const row of ports.rows ?? []) {
      const uuid = uuidOf(row._uuid);
      if (!portUuids.has(uuid)) continue;
      const members = setOf(row.interfaces)
        .map((value) => interfaceRows.get(uuidOf(value)))
        .filter((member): member is InterfaceRow => member !== undefined);
      portRows.push({
        uuid,
        name: String(row.name),
        interfaces: members,
        bondMode: scalarOf(row.bond_mode),
        lacp: scalarOf(row.lacp),
        otherConfig: mapOf(row.other_config),
        ids: mapOf(row.external_ids),
      });
      for (const member of members) {
        const name = member.ids.get(EXTERNAL_IDS.interface);
        if (name !== undefined) byContractName.set(name, member);
        if (member.ids.has(EXTERNAL_IDS.network)) trunk = member;
      }
    }
    return {
      device,
      bridge: String(bridge.name),
      ids: mapOf(bridge.external_ids),
      ports: portRows,
      interfaces: byContractName,
      trunk,
    };
  }

  /** The kernel's view of the exchange ends: administratively up, and carrier. */
  private static async links(): Promise<Map<string, { up: boolean; carrier: boolean }>> {
    const { stdout } = await runProgram('ip', ['-j', 'link', 'show']);
    const links = JSON.parse(stdout) as Array<{ ifname: string; flags: string[] }>;
    return new Map(
      links.map((link) => [
        link.ifname,
        {
          up: link.flags.includes('UP'),
          carrier: link.flags.includes('UP') && link.flags.includes('LOWER_UP'),
        },
      ]),
    );
  }

  /**
   * Per cookie, the source MACs its rules admit (none: any source), from the bridge's flow table. A
   * service that admits no source at all has no rules, and so no cookie here.
   */
  private async flowMacs(bridge: string): Promise<Map<number, Set<string>>> {
    const { stdout } = await this.fabric.ofctl(bridge, ['dump-flows', '{}', '--no-stats']);
    const macs = new Map<number, Set<string>>();
    for (const line of stdout.split('\n')) {
      const cookie = /cookie=0x([0-9a-f]+)/.exec(line);
      if (!cookie) continue;
      const id = Number.parseInt(cookie[1], 16);
      const seen = macs.get(id) ?? new Set<string>();
      const mac = /dl_src=([0-9a-f:]{17})/.exec(line);
      if (mac) seen.add(mac[1]);
      macs.set(id, seen);
    }
    return macs;
  }

  /** Meter rates in kbit/s by meter id. */
  private async meters(bridge: string): Promise<Map<number, number>> {
    const { stdout } = await this.fabric.ofctl(bridge, ['dump-meters', '{}']);
    const rates = new Map<number, number>();
    for (const match of stdout.matchAll(/meter=(\d+)[^\n]*\n\s*type=drop rate=(\d+)/g))
      rates.set(Number(match[1]), Number(match[2]));
    return rates;
  }

  private async state(device: string): Promise<DeviceState> {
    const layout = await this.layout(device);
    const [links, macs, meters] = await Promise.all([
      OvsDriver.links(),
      this.flowMacs(layout.bridge),
      this.meters(layout.bridge),
    ]);
    const lagOf = new Map<string, string>();
    const lags = new Map<string, LagConfig>();
    for (const port of layout.ports) {
      const lag = port.ids.get(IDS.lag);
      if (lag === undefined) continue;
      const members = port.interfaces
        .map((member) => member.ids.get(EXTERNAL_IDS.interface))
        .filter((name): name is string => name !== undefined)
        .sort();
      for (const member of members) lagOf.set(member, lag);
      const lacp = port.lacp === 'active';
      lags.set(lag, {
        name: lag,
        description: port.ids.get(IDS.description) ?? '',
        mode: lacp ? 'lacp' : 'static',
        lacpTimeout: lacp ? (port.otherConfig.get('lacp-time') === 'fast' ? 'fast' : 'slow') : null,
        members,
      });
    }
    const interfaces = new Map<string, InterfaceState>();
    for (const [name, row] of layout.interfaces) {
      const link = links.get(row.name);
      const speed = Number(row.ids.get(EXTERNAL_IDS.speed) ?? row.linkSpeed / 1_000_000);
      interfaces.set(name, {
        name,
        description: row.ids.get(IDS.description) ?? '',
        enabled: link?.up ?? false,
        speed,
        lag: lagOf.get(name) ?? null,
        operUp: link?.carrier ?? false,
      });
    }
    const services = new Map<string, ServiceAttachment>();
    const serviceIds = new Map<string, number>();
    for (const [key, value] of layout.ids) {
      if (!key.startsWith(SERVICE_PREFIX)) continue;
      const name = key.slice(SERVICE_PREFIX.length);
      const record = JSON.parse(value) as ServiceRecord;
      const rate = meters.get(record.id);
      serviceIds.set(name, record.id);
      services.set(name, {
        name,
        description: record.description,
        parent: record.parent,
        vlanType: record.vlanType,
        outerVlan: record.outerVlan,
        innerVlan: record.innerVlan,
        macs: [...(macs.get(record.id) ?? [])].sort(),
        macFilter: record.macFilter ?? false,
        rateLimit: rate === undefined ? null : Math.round(rate / 1000),
        segment: record.segment,
        isolated: record.isolated,
      });
    }
    return {
      layout,
      version: Number(layout.ids.get(IDS.version) ?? 0),
      snapshot: { interfaces, lags, services, bgpSessions: new Map() },
      serviceIds,
      committed: new Set(
        [...layout.ids.keys()].filter((key) => key.startsWith(COMMIT_PREFIX) || key.startsWith(KEY_PREFIX)),
      ),
    };
  }

  async load(intent: DeviceIntent): Promise<Candidate> {
    const { device } = intent;
    if (intent.bgpSessions?.length || intent.removeBgpSessions?.length)
      throw new DriverError(
        'invalid-config',
        `${device} is a switch of the ovs fabric: it holds no BGP sessions`,
      );
    const current = await this.reading(device, () => this.state(device));
    const changes = planChanges(current.snapshot, intent);
    const candidate = { id: newId('cand'), device, changes };
    this.candidates.set(candidate.id, { ...candidate, baseVersion: current.version });
    const max = this.options.maxCandidates ?? 1000;
    for (const id of this.candidates.keys()) {
      if (this.candidates.size <= max) break;
      this.candidates.delete(id);
    }
    return candidate;
  }

  diff(candidateId: string): Promise<ConfigChange[]> {
    const candidate = this.candidates.get(candidateId);
    if (!candidate)
      return Promise.reject(
        new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`),
      );
    return Promise.resolve(candidate.changes);
  }

  /** The commit made under `key` on `layout`'s bridge, as its commit answered. */
  private static committed(layout: Layout, key: string): CommitResult | undefined {
    const commitId = layout.ids.get(KEY_PREFIX + key);
    const raw = commitId && layout.ids.get(COMMIT_PREFIX + commitId);
    if (!commitId || !raw) return undefined;
    const record = JSON.parse(raw) as CommitRecord;
    return { commitId, device: record.device, changes: record.changes };
  }

  /** The commit under `key` on any device of the fabric, for a candidate this process forgot. */
  private async committedAnywhere(key: string): Promise<CommitResult | undefined> {
    const [bridges] = await this.fabric.transact([
      { op: 'select', table: 'Bridge', where: [], columns: ['external_ids'] },
    ]);
    for (const row of bridges.rows ?? []) {
      const ids = mapOf(row.external_ids);
      const device = ids.get(EXTERNAL_IDS.device);
      if (device === undefined) continue;
      const done = OvsDriver.committed(
        { device, bridge: '', ids, ports: [], interfaces: new Map(), trunk: null },
        key,
      );
      if (done) return done;
    }
    return undefined;
  }

  async commit(candidateId: string, key: string): Promise<CommitResult> {
    const candidate = this.candidates.get(candidateId);
    if (!candidate) {
      const done = await this.reading('ovs fabric', () => this.committedAnywhere(key));
      if (done) return done;
      throw new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`);
    }
    const { device } = candidate;
    return this.exclusive(device, async () => {
      const current = await this.reading(device, () => this.state(device));
      const done = OvsDriver.committed(current.layout, key);
      if (done) return done;
      if (current.version !== candidate.baseVersion)
        throw new DriverError(
          'stale-candidate',
          `${device} changed since candidate ${candidateId} was loaded; load the intent again`,
        );
      if (!(await this.reading(device, () => this.claim(current))))
        throw new DriverError(
          'stale-candidate',
          `${device} changed since candidate ${candidateId} was loaded; load the intent again`,
        );
      const commitId = newId('commit');
      const record: CommitRecord = {
        key,
        device,
        changes: candidate.changes,
        rolledBack: false,
        at: new Date().toISOString(),
      };
      await this.render(
        current,
        applyChanges(current.snapshot, candidate.changes),
        { [COMMIT_PREFIX + commitId]: JSON.stringify(record), [KEY_PREFIX + key]: commitId },
        { drop: this.forgotten(current.layout) },
      );
      this.candidates.delete(candidateId);
      return JSON.parse(JSON.stringify({ commitId, device, changes: candidate.changes })) as CommitResult;
    });
  }

  async rollback(device: string, commitId: string): Promise<void> {
    await this.exclusive(device, async () => {
      // Another process may change the device meanwhile: then read it again and undo from there.
      for (let attempt = 1; ; attempt += 1) {
        const current = await this.reading(device, () => this.state(device));
        const raw = current.layout.ids.get(COMMIT_PREFIX + commitId);
        if (!raw) throw new DriverError('invalid-config', `${device} has no commit ${commitId}`);
        const record = JSON.parse(raw) as CommitRecord;
        if (record.rolledBack) return;
        if (!(await this.reading(device, () => this.claim(current)))) {
          if (attempt < 5) continue;
          throw new DriverError(
            'timeout',
            `${device} kept changing while commit ${commitId} was rolled back`,
          );
        }
        await this.render(current, applyChanges(current.snapshot, inverseOf(record.changes)), {
          [COMMIT_PREFIX + commitId]: JSON.stringify({ ...record, rolledBack: true }),
        });
        return;
      }
    });
  }

  /** The bridge's keys of the oldest commits and their keys, that one more commit pushes out. */
  private forgotten(layout: Layout): string[] {
    const commits = [...layout.ids]
      .filter(([key]) => key.startsWith(COMMIT_PREFIX))
      .map(([key, value]) => ({ key, record: JSON.parse(value) as CommitRecord }))
      .sort((x, y) => (x.record.at < y.record.at ? -1 : x.record.at > y.record.at ? 1 : 0));
    const excess = commits.length + 1 - (this.options.keepCommits ?? 1000);
    return commits.slice(0, Math.max(0, excess)).flatMap(({ key, record }) => [key, KEY_PREFIX + record.key]);
  }

  /**
   * Takes the device's next version, in one OVSDB transaction that fails unless the device is
   * still at `current`'s: of two processes committing on one state, one wins. Says whether it did.
   */
  private async claim(current: DeviceState): Promise<boolean> {
    const bridge = [['name', '==', current.layout.bridge]];
    const version = (value: number) => ['map', [[IDS.version, String(value)]]];
    try {
      await this.fabric.transact([
        {
          op: 'wait',
          table: 'Bridge',
          timeout: 0,
          where: [...bridge, ['external_ids', 'includes', version(current.version)]],
          columns: ['name'],
          until: '==',
          rows: [{ name: current.layout.bridge }],
        },
        {
          op: 'mutate',
          table: 'Bridge',
          where: bridge,
          mutations: [
            ['external_ids', 'delete', ['set', [IDS.version]]],
            ['external_ids', 'insert', version(current.version + 1)],
          ],
        },
      ]);
      return true;
    } catch (error) {
      if (error instanceof ProgramError && /timed out/.test(error.message)) return false;
      throw error;
    }
  }

  /**
   * Makes the device hold `after`: one OVSDB transaction for ports, LAGs, descriptions, service
   * records, the version and `bridgeIds`; then the links' states, the meters and the flow table.
   * A change OVS refuses is a `rejected` DriverError with OVS's message; what it took of the
   * change is undone as far as OVS lets it (the device then holds `current` again).
   */
  private async render(
    current: DeviceState,
    after: DeviceSnapshot,
    bridgeIds: Record<string, string>,
    { restoring = false, drop = [] }: { restoring?: boolean; drop?: string[] } = {},
  ): Promise<void> {
    const { layout } = current;
    const { device, bridge } = layout;
    const commands: string[][] = [];
    const interfaceIds = (name: string): string[] => {
      const row = layout.interfaces.get(name)!;
      const ids = new Map(row.ids);
      ids.set(IDS.description, after.interfaces.get(name)!.description);
      return [...ids].map(([k, v]) => `external_ids:${quoted(k)}=${quoted(v)}`);
    };

    // Ports: a LAG's members in one port, every other interface in a port of its own.
    const wanted = new Map<string, { lag: LagConfig | null; members: string[] }>();
    for (const lag of after.lags.values())
      wanted.set(lagPortName(lag.name), { lag, members: [...lag.members].sort() });
    for (const state of after.interfaces.values())
      if (state.lag === null)
        wanted.set(layout.interfaces.get(state.name)!.name, { lag: null, members: [state.name] });
    const membersOf = (port: PortRow) =>
      port.interfaces.map((row) => row.ids.get(EXTERNAL_IDS.interface) ?? '').sort();
    const kept = new Set<string>();
    /** Interfaces whose port this change makes anew: OVS may fail to open them. */
    const recreated = new Set<string>();
    for (const port of layout.ports) {
      if (port.name === bridge || port.name === layout.trunk?.name) continue;
      const target = wanted.get(port.name);
      const same =
        target !== undefined &&
        JSON.stringify(target.members) === JSON.stringify(membersOf(port)) &&
        (target.lag !== null) === port.ids.has(IDS.lag);
      if (same) kept.add(port.name);
      else commands.push(['del-port', bridge, port.name]);
    }
    const lagSettings = (lag: LagConfig) => [
      'bond_mode=balance-slb',
      `lacp=${lag.mode === 'lacp' ? 'active' : 'off'}`,
      `external_ids:${quoted(IDS.lag)}=${quoted(lag.name)}`,
      `external_ids:${quoted(IDS.description)}=${quoted(lag.description)}`,
    ];
    for (const [portName, target] of wanted) {
      if (kept.has(portName)) {
        if (target.lag) {
          commands.push(['set', 'Port', portName, ...lagSettings(target.lag)]);
          if (target.lag.lacpTimeout)
            commands.push(['set', 'Port', portName, `other_config:lacp-time=${target.lag.lacpTimeout}`]);
          else commands.push(['remove', 'Port', portName, 'other_config', 'lacp-time']);
        }
        for (const member of target.members)
          if (
            current.snapshot.interfaces.get(member)!.description !== after.interfaces.get(member)!.description
          )
            commands.push(['set', 'Interface', layout.interfaces.get(member)!.name, ...interfaceIds(member)]);
        continue;
      }
      for (const member of target.members) recreated.add(member);
      if (!target.lag) {
        commands.push(['add-port', bridge, portName]);
        commands.push(['set', 'Interface', portName, ...interfaceIds(target.members[0])]);
        continue;
      }
      const refs = target.members.map((_, index) => `@i${index}`);
      target.members.forEach((member, index) =>
        commands.push([
          `--id=${refs[index]}`,
          'create',
          'Interface',
          `name=${layout.interfaces.get(member)!.name}`,
          ...interfaceIds(member),
        ]),
      );
      commands.push([
        '--id=@lag',
        'create',
        'Port',
        `name=${portName}`,
        `interfaces=${refs.join(',')}`,
        ...lagSettings(target.lag),
        ...(target.lag.lacpTimeout ? [`other_config:lacp-time=${target.lag.lacpTimeout}`] : []),
      ]);
      commands.push(['add', 'Bridge', bridge, 'ports', '@lag']);
    }

    // Service records, numbered for their rules and meters.
    const serviceIds = new Map<string, number>();
    const used = new Set<number>();
    for (const name of after.services.keys()) {
      const id = current.serviceIds.get(name);
      if (id !== undefined) {
        serviceIds.set(name, id);
        used.add(id);
      }
    }
    let next = 1;
    for (const name of after.services.keys()) {
      if (serviceIds.has(name)) continue;
      while (used.has(next)) next += 1;
      serviceIds.set(name, next);
      used.add(next);
    }
    const ids: Record<string, string> = { ...bridgeIds, [IDS.version]: String(current.version + 1) };
    const dropped = restoring
      ? [...layout.ids.keys()].filter(
          (key) =>
            (key.startsWith(COMMIT_PREFIX) || key.startsWith(KEY_PREFIX)) && !current.committed.has(key),
        )
      : drop.filter((key) => layout.ids.has(key));
    for (const key of dropped) commands.push(['remove', 'Bridge', bridge, 'external_ids', quoted(key)]);
    for (const [name, service] of after.services) {
      const record: ServiceRecord = {
        id: serviceIds.get(name)!,
        description: service.description,
        parent: service.parent,
        vlanType: service.vlanType,
        outerVlan: service.outerVlan,
        innerVlan: service.innerVlan,
        segment: service.segment,
        isolated: service.isolated,
        macFilter: service.macFilter,
        macs: service.macs,
        rateLimit: service.rateLimit,
      };
      ids[SERVICE_PREFIX + name] = JSON.stringify(record);
    }
    for (const name of current.snapshot.services.keys())
      if (!after.services.has(name))
        commands.push(['remove', 'Bridge', bridge, 'external_ids', quoted(SERVICE_PREFIX + name)]);
    commands.push([
      'set',
      'Bridge',
      bridge,
      ...Object.entries(ids).map(([k, v]) => `external_ids:${quoted(k)}=${quoted(v)}`),
    ]);

    let taken = false;
    try {
      const { stderr } = await this.fabric.vsctl(commands.flatMap((command) => ['--', ...command]));
      taken = true;
      if (/Error detected/.test(stderr))
        throw new ProgramError('ovs-vsctl', stderr.split('\n')[0], false, false);
      const refreshed = await this.layout(device);
      const broken = [...recreated]
        .map((name) => refreshed.interfaces.get(name))
        .find((row) => row && (row.error || row.ofport < 0));
      if (broken)
        throw new ProgramError(
          'ovs-vswitchd',
          `${broken.name}: ${broken.error || 'no OpenFlow port'}`,
          false,
          false,
        );

      // Links: up or down as the interfaces are enabled.
      const links = await OvsDriver.links();
      for (const state of after.interfaces.values()) {
        const link = refreshed.interfaces.get(state.name)!.name;
        if ((links.get(link)?.up ?? false) !== state.enabled)
          await runProgram('ip', ['link', 'set', 'dev', link, state.enabled ? 'up' : 'down']);
      }

      await this.installRules(refreshed, after, serviceIds);
    } catch (error) {
      const failure = OvsDriver.failure(device, error, 'rejected');
      if (taken && !restoring) {
        const previous = Object.fromEntries(
          [...Object.keys(bridgeIds), ...drop]
            .filter((key) => layout.ids.has(key))
            .map((key) => [key, layout.ids.get(key)!]),
        );
        const now = await this.state(device).catch(() => undefined);
        if (now)
          await this.render({ ...now, committed: current.committed }, current.snapshot, previous, {
            restoring: true,
          }).catch(() => undefined);
      }
      throw failure;
    }
  }

  /**
   * Makes the bridge's meters and flow table those of `snapshot`'s services; answers how many
   * meters it had to add or change. Meters go first, so that rules can use them; meters no rule
   * uses go last.
   */
  private async installRules(
    layout: Layout,
    snapshot: DeviceSnapshot,
    serviceIds: ReadonlyMap<string, number>,
  ): Promise<number> {
    const { bridge } = layout;
    const meters = await this.meters(bridge);
    const wantedMeters = new Map<number, number>();
    for (const [name, service] of snapshot.services)
      if (service.rateLimit !== null) wantedMeters.set(serviceIds.get(name)!, service.rateLimit * 1000);
    let installed = 0;
    for (const [id, kbps] of wantedMeters) {
      if (meters.get(id) === kbps) continue;
      const spec = `meter=${id},kbps,burst,band=type=drop,rate=${kbps},burst_size=${Math.max(1000, Math.round(kbps / 10))}`;
      await this.fabric.ofctl(bridge, [meters.has(id) ? 'mod-meter' : 'add-meter', '{}', spec]);
      installed += 1;
    }
    // A device trunked to its metro's core bridge sends every segment there on its fabric VLAN.
    const trunk = layout.trunk && {
      ofport: layout.trunk.ofport,
      vlans: await this.fabric.segmentVlans([...snapshot.services.values()].map((s) => s.segment)),
    };
    const flows = flowTable(snapshot, serviceIds, (name) => layout.interfaces.get(name)!.ofport, trunk);
    await this.fabric.ofctl(bridge, ['--bundle', 'replace-flows', '{}', '-'], `${flows.join('\n')}\n`);
    for (const id of meters.keys())
      if (!wantedMeters.has(id)) await this.fabric.ofctl(bridge, ['del-meter', '{}', `meter=${id}`]);
    return installed;
  }

  /** The devices of the fabric: every bridge that names one, in name order. */
  async devices(): Promise<string[]> {
    return this.reading('ovs fabric', async () => {
      const [bridges] = await this.fabric.transact([
        { op: 'select', table: 'Bridge', where: [], columns: ['external_ids'] },
      ]);
      return (bridges.rows ?? [])
        .map((row) => mapOf(row.external_ids).get(EXTERNAL_IDS.device))
        .filter((device): device is string => device !== undefined)
        .sort();
    });
  }

  /**
   * Installs the device's OpenFlow rules and meters again from the service records its commits
   * left in OVSDB, as the last commit installed them: ovs-vswitchd keeps rules and meters in its
   * memory only, so a restarted one forwards nothing until they are back. Rules already in place
   * stay (the flow table is replaced in one bundle, which changes only what differs). Answers
   * whether anything a service needs was missing: rules or meters. A device without services
   * forwards nothing with or without its default rules (its bridge is `fail_mode=secure`), so a
   * bridge just made by the fabric has nothing restored.
   */
  async restore(
    device: string,
  ): Promise<{ device: string; restored: boolean; flows: number; meters: number }> {
    return this.exclusive(device, async () => {
      try {
        // A commit of another process may change the device meanwhile: what was installed from the
        // records read before it would be stale, so it is installed again from the new ones.
        let restored = false;
        for (let attempt = 1; ; attempt += 1) {
          const current = await this.state(device);
          const services = new Map<string, ServiceAttachment>();
          for (const [name, service] of current.snapshot.services) {
            const record = JSON.parse(current.layout.ids.get(SERVICE_PREFIX + name)!) as ServiceRecord;
            services.set(name, {
              ...service,
              macs: record.macs ?? service.macs,
              rateLimit: record.rateLimit === undefined ? service.rateLimit : record.rateLimit,
            });
          }
          const { bridge } = current.layout;
          const before = await this.flowCount(bridge);
          const meters = await this.installRules(
            current.layout,
            { ...current.snapshot, services },
            current.serviceIds,
          );
          const flows = await this.flowCount(bridge);
          restored ||= meters > 0 || (services.size > 0 && before !== flows);
          const now = await this.layout(device);
          if (now.ids.get(IDS.version) === current.layout.ids.get(IDS.version) || attempt >= 5)
            return { device, restored, flows, meters };
        }
      } catch (error) {
        throw OvsDriver.failure(device, error, 'rejected');
      }
    });
  }

  /** How many rules the bridge's flow table holds. */
  private async flowCount(bridge: string): Promise<number> {
    const { stdout } = await this.fabric.ofctl(bridge, ['dump-aggregate', '{}']);
    return Number(/flow_count=(\d+)/.exec(stdout)?.[1] ?? 0);
  }

  async readInterfaces(device: string, names?: readonly string[]): Promise<InterfaceState[]> {
    const { snapshot } = await this.reading(device, () => this.state(device));
    return byName([...snapshot.interfaces.values()].filter((i) => !names || names.includes(i.name)));
  }

  async readLags(device: string, names?: readonly string[]): Promise<LagConfig[]> {
    const { snapshot } = await this.reading(device, () => this.state(device));
    return byName([...snapshot.lags.values()].filter((lag) => !names || names.includes(lag.name)));
  }

  async readServices(device: string, names?: readonly string[]): Promise<ServiceAttachment[]> {
    const { snapshot } = await this.reading(device, () => this.state(device));
    return byName([...snapshot.services.values()].filter((s) => !names || names.includes(s.name)));
  }

  readBgpSessions(): Promise<BgpSession[]> {
    return Promise.resolve([]);
  }

  readOptics(): Promise<OpticsReading[]> {
    return Promise.resolve([]);
  }

  /**
   * Counters of interfaces (their OVSDB statistics), LAGs (the sum of their members') and
   * sub-interfaces (what the services on that outer tag took in and what the segment sent them,
   * from the rules' and meters' statistics); docs/ovs-driver.md says what each number counts.
   */
  async readCounters(device: string, names: readonly string[]): Promise<CounterReading[]> {
    if (!names.length) return [];
    return this.reading(device, async () => {
      const layout = await this.layout(device);
      const lags = new Map<string, InterfaceRow[]>();
      for (const port of layout.ports) {
        const lag = port.ids.get(IDS.lag);
        if (lag !== undefined) lags.set(lag, port.interfaces);
      }
      const ofInterfaceOrLag = (name: string): Counters | undefined => {
        const row = layout.interfaces.get(name);
        if (row) return interfaceCounters(row);
        return lags
          .get(name)
          ?.reduce((total, member) => addCounters(total, interfaceCounters(member)), NO_TRAFFIC);
      };
      const wanted = names.map((name) => {
        const counters = ofInterfaceOrLag(name);
        if (counters) return { name, counters };
        const sub = subInterfaceOf(name);
        if (sub && ofInterfaceOrLag(sub.parent)) return { name, sub };
        throw unknownCounterName(device, name);
      });
      const services = [...layout.ids]
        .filter(([key]) => key.startsWith(SERVICE_PREFIX))
        .map(([key, value]) => ({
          ...(JSON.parse(value) as ServiceRecord),
          name: key.slice(SERVICE_PREFIX.length),
        }));
      const traffic = wanted.some((entry) => entry.sub)
        ? await this.serviceTraffic(layout.bridge)
        : new Map<number, ServiceTraffic>();
      const readAt = new Date().toISOString();
      return wanted.map(({ name, counters, sub }) => ({
        interface: name,
        readAt,
        ...(counters ?? subInterfaceCounters(services, traffic, sub)),
      }));
    });
  }

  /**
   * Per service number, what its classifying rules took in (the flow statistics of the rules with
   * its cookie; a qinq service's outer-tag rule carries none) and what its meter dropped of that.
   */
  private async serviceTraffic(bridge: string): Promise<Map<number, ServiceTraffic>> {
    const [flows, meters] = await Promise.all([
      this.fabric.ofctl(bridge, ['dump-flows', '{}']),
      this.fabric.ofctl(bridge, ['meter-stats', '{}']),
    ]);
    const traffic = new Map<number, ServiceTraffic>();
    const of = (id: number): ServiceTraffic => {
      const known = traffic.get(id) ?? { packets: 0n, octets: 0n, droppedPackets: 0n, droppedOctets: 0n };
      traffic.set(id, known);
      return known;
    };
    for (const line of flows.stdout.split('\n')) {
      const cookie = /cookie=0x([0-9a-f]+)/.exec(line);
      const packets = /\bn_packets=(\d+)/.exec(line);
      const octets = /\bn_bytes=(\d+)/.exec(line);
      if (!cookie || !packets || !octets || BigInt(`0x${cookie[1]}`) === 0n) continue;
      const service = of(Number.parseInt(cookie[1], 16));
      service.packets += BigInt(packets[1]);
      service.octets += BigInt(octets[1]);
    }
    // A service's meter has one band, which drops what passes the rate.
    for (const match of meters.stdout.matchAll(
      /meter:(\d+) [^\n]*\n\s*0: packet_count:(\d+) byte_count:(\d+)/g,
    )) {
      const service = of(Number(match[1]));
      service.droppedPackets += BigInt(match[2]);
      service.droppedOctets += BigInt(match[3]);
    }
    return traffic;
  }
}

/** What a service's rules took in and its meter dropped, since the rules and meter were made. */
interface ServiceTraffic {
  packets: bigint;
  octets: bigint;
  droppedPackets: bigint;
  droppedOctets: bigint;
}

/**
 * An interface's counters from OVS's statistics of it: the kernel's counters of the exchange end,
 * so "in" is what the customer side sent into the fabric. OVSDB carries them as JSON numbers,
 * exact up to 2^53 octets and rounded beyond.
 */
function interfaceCounters(row: InterfaceRow): Counters {
  const count = (key: string) => BigInt(row.statistics.get(key) ?? 0);
  return {
    octetsIn: count('rx_bytes'),
    octetsOut: count('tx_bytes'),
    packetsIn: count('rx_packets'),
    packetsOut: count('tx_packets'),
    errorsIn: count('rx_errors'),
    errorsOut: count('tx_errors'),
    discardsIn: count('rx_dropped'),
    discardsOut: count('tx_dropped'),
  };
}

/** The octets a service's tags take on the wire. */
const TAG_OCTETS: Record<ServiceAttachment['vlanType'], bigint> = { port: 0n, dot1q: 4n, qinq: 8n };

/** Whether frames a service takes in are copied to `to`: the rule of `flowTable`'s peers. */
const sendsTo = (from: ServiceRecord & { name: string }, to: ServiceRecord & { name: string }) =>
  from.name !== to.name && from.segment === to.segment && !(from.isolated && to.isolated);

/**
 * A sub-interface's counters: the services of `parent` on outer tag `vlan` together. In is what
 * their rules took in (tags included), discards in what their meters dropped of it. Out follows
 * from the hub a segment is: every frame a peer's rules took in and its meter let pass is sent to
 * each service it reaches, its tags swapped for that service's.
 */
function subInterfaceCounters(
  services: ReadonlyArray<ServiceRecord & { name: string }>,
  traffic: ReadonlyMap<number, ServiceTraffic>,
  { parent, vlan }: { parent: string; vlan: number },
): Counters {
  const none: ServiceTraffic = { packets: 0n, octets: 0n, droppedPackets: 0n, droppedOctets: 0n };
  const atLeastZero = (value: bigint) => (value > 0n ? value : 0n);
  let counters = NO_TRAFFIC;
  for (const own of services) {
    if (own.parent !== parent || own.vlanType === 'port' || own.outerVlan !== vlan) continue;
    const taken = traffic.get(own.id) ?? none;
    let packetsOut = 0n;
    let octetsOut = 0n;
    for (const peer of services) {
      if (!sendsTo(peer, own)) continue;
      const sent = traffic.get(peer.id) ?? none;
      const packets = atLeastZero(sent.packets - sent.droppedPackets);
      const bare = atLeastZero(sent.octets - sent.droppedOctets - packets * TAG_OCTETS[peer.vlanType]);
      packetsOut += packets;
      octetsOut += bare + packets * TAG_OCTETS[own.vlanType];
    }
    counters = addCounters(counters, {
      ...NO_TRAFFIC,
      octetsIn: taken.octets,
      packetsIn: taken.packets,
      discardsIn: taken.droppedPackets,
      octetsOut,
      packetsOut,
    });
  }
  return counters;
}

/** The OpenFlow actions that send a bare frame to `service`, tagged as it is. */
function egressActions(service: ServiceAttachment, ofports: number[]): string[] {
  const output =
    ofports.length === 1
      ? `output:${ofports[0]}`
      : `bundle(eth_src,0,hrw,ofport,members:${ofports.join(',')})`;
  const tag = (ethertype: string, vlan: number) => [
    `push_vlan:${ethertype}`,
    `set_field:${4096 + vlan}->vlan_vid`,
  ];
  if (service.vlanType === 'dot1q') return [...tag('0x8100', service.outerVlan!), output, 'pop_vlan'];
  if (service.vlanType === 'qinq')
    return [
      ...tag('0x8100', service.innerVlan!),
      ...tag('0x88a8', service.outerVlan!),
      output,
      'pop_vlan',
      'pop_vlan',
    ];
  return [output];
}

/** The device's trunk to its network's core bridge: its OpenFlow port and the segments' VLANs. */
export interface Trunk {
  ofport: number;
  vlans: ReadonlyMap<string, number>;
}

/** The priority code point a frame from an isolated service carries on the trunk. */
const ISOLATED_PCP = 1;

/**
 * The bridge's whole flow table for `snapshot`'s services (see the comment at the top): table 0
 * drops what no service admits, classifies dot1q and port services and pops qinq outer tags into
 * register 1; table 1 classifies qinq services by their inner tag. With a trunk, every frame of a
 * segment also leaves on the trunk tagged with the segment's fabric VLAN (priority code point 1
 * when its service is isolated), and what arrives on the trunk with that tag goes to the segment's
 * services here (to those that are not isolated when it came from an isolated one).
 */
export function flowTable(
  snapshot: DeviceSnapshot,
  serviceIds: ReadonlyMap<string, number>,
  ofportOf: (interfaceName: string) => number,
  trunk: Trunk | null = null,
): string[] {
  const portsOf = (parent: string) =>
    (snapshot.lags.get(parent)?.members ?? [parent]).map(ofportOf).sort((x, y) => x - y);
  const flows = ['table=0,priority=0,actions=drop', 'table=1,priority=0,actions=drop'];
  const outerPops = new Set<string>();
  const services = byName([...snapshot.services.values()]);
  const toTrunk = (service: ServiceAttachment): string[] => {
    const vlan = trunk?.vlans.get(service.segment);
    if (!trunk || vlan === undefined) return [];
    return [
      'push_vlan:0x8100',
      `set_field:${4096 + vlan}->vlan_vid`,
      ...(service.isolated ? [`set_field:${ISOLATED_PCP}->vlan_pcp`] : []),
      `output:${trunk.ofport}`,
      'pop_vlan',
    ];
  };
  for (const service of services) {
    const id = serviceIds.get(service.name)!;
    const peers = services.filter(
      (other) =>
        other.name !== service.name &&
        other.segment === service.segment &&
        !(service.isolated && other.isolated),
    );
    const actions = [
      ...(service.rateLimit !== null ? [`meter:${id}`] : []),
      ...(service.vlanType === 'port' ? [] : ['pop_vlan']),
      ...(peers.length ? ['load:0->NXM_OF_IN_PORT[]'] : []),
      ...peers.flatMap((peer) => egressActions(peer, portsOf(peer.parent))),
      ...toTrunk(service),
    ];
    // No source at all where the MACs filter and there are none: the table's default drops it all.
    const sources =
      service.macs.length || service.macFilter ? service.macs.map((mac) => `,dl_src=${mac}`) : [''];
    if (!sources.length) continue;
    for (const ofport of portsOf(service.parent)) {
      let match: string;
      if (service.vlanType === 'port') match = `table=0,priority=50,in_port=${ofport}`;
      else if (service.vlanType === 'dot1q')
        match = `table=0,priority=100,in_port=${ofport},dl_vlan=${service.outerVlan}`;
      else {
        const outer = `${ofport}/${service.outerVlan}`;
        if (!outerPops.has(outer)) {
          outerPops.add(outer);
          flows.push(
            `table=0,priority=100,in_port=${ofport},dl_vlan=${service.outerVlan},actions=pop_vlan,load:${service.outerVlan}->NXM_NX_REG1[0..11],resubmit(,1)`,
          );
        }
        match = `table=1,priority=100,in_port=${ofport},reg1=${service.outerVlan},dl_vlan=${service.innerVlan}`;
      }
      for (const source of sources)
        flows.push(
          `${match}${source},cookie=0x${id.toString(16)},actions=${actions.length ? actions.join(',') : 'drop'}`,
        );
    }
  }
  for (const [segment, vlan] of trunk?.vlans ?? []) {
    const members = services.filter((service) => service.segment === segment);
    if (!members.length) continue;
    const from = (sources: ServiceAttachment[]) =>
      ['pop_vlan', ...sources.flatMap((peer) => egressActions(peer, portsOf(peer.parent)))].join(',');
    flows.push(
      `table=0,priority=100,in_port=${trunk!.ofport},dl_vlan=${vlan},actions=${from(members)}`,
      `table=0,priority=110,in_port=${trunk!.ofport},dl_vlan=${vlan},dl_vlan_pcp=${ISOLATED_PCP},actions=${from(members.filter((m) => !m.isolated))}`,
    );
  }
  return flows;
}
