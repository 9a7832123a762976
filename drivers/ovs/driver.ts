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
import { applyChanges, inverseOf, planChanges } from '../intent';
import type { ServiceTraffic } from './counters';
import { interfaceCounters, serviceTraffic, subInterfaceCounters } from './counters';
import type { OvsFabric } from './fabric';
import { EXTERNAL_IDS } from './topology';
import { failureOf } from './failure';
import { claim, committed, committedAnywhere, forgotten } from './journal';
import type { CommitRecord, InterfaceRow, ServiceRecord } from './records';
import { byName, COMMIT_PREFIX, IDS, KEY_PREFIX, mapOf, SERVICE_PREFIX } from './records';
import { installRules, render } from './render';
import { readLayout, readState } from './state';

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

  private async reading<T>(device: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw failureOf(device, error, 'unreachable');
    }
  }

  async load(intent: DeviceIntent): Promise<Candidate> {
    const { device } = intent;
    if (intent.bgpSessions?.length || intent.removeBgpSessions?.length)
      throw new DriverError(
        'invalid-config',
        `${device} is a switch of the ovs fabric: it holds no BGP sessions`,
      );
    const current = await this.reading(device, () => readState(this.fabric, device));
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

  async commit(candidateId: string, key: string): Promise<CommitResult> {
    const candidate = this.candidates.get(candidateId);
    if (!candidate) {
      const done = await this.reading('ovs fabric', () => committedAnywhere(this.fabric, key));
      if (done) return done;
      throw new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`);
    }
    const { device } = candidate;
    return this.exclusive(device, async () => {
      const current = await this.reading(device, () => readState(this.fabric, device));
      const done = committed(current.layout, key);
      if (done) return done;
      if (current.version !== candidate.baseVersion)
        throw new DriverError(
          'stale-candidate',
          `${device} changed since candidate ${candidateId} was loaded; load the intent again`,
        );
      if (!(await this.reading(device, () => claim(this.fabric, current))))
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
      await render(
        this.fabric,
        current,
        applyChanges(current.snapshot, candidate.changes),
        { [COMMIT_PREFIX + commitId]: JSON.stringify(record), [KEY_PREFIX + key]: commitId },
        { drop: forgotten(current.layout, this.options.keepCommits) },
      );
      this.candidates.delete(candidateId);
      return JSON.parse(JSON.stringify({ commitId, device, changes: candidate.changes })) as CommitResult;
    });
  }

  async rollback(device: string, commitId: string): Promise<void> {
    await this.exclusive(device, async () => {
      // Another process may change the device meanwhile: then read it again and undo from there.
      for (let attempt = 1; ; attempt += 1) {
        const current = await this.reading(device, () => readState(this.fabric, device));
        const raw = current.layout.ids.get(COMMIT_PREFIX + commitId);
        if (!raw) throw new DriverError('invalid-config', `${device} has no commit ${commitId}`);
        const record = JSON.parse(raw) as CommitRecord;
        if (record.rolledBack) return;
        if (!(await this.reading(device, () => claim(this.fabric, current)))) {
          if (attempt < 5) continue;
          throw new DriverError(
            'timeout',
            `${device} kept changing while commit ${commitId} was rolled back`,
          );
        }
        await render(this.fabric, current, applyChanges(current.snapshot, inverseOf(record.changes)), {
          [COMMIT_PREFIX + commitId]: JSON.stringify({ ...record, rolledBack: true }),
        });
        return;
      }
    });
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
          const current = await readState(this.fabric, device);
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
          const meters = await installRules(
            this.fabric,
            current.layout,
            { ...current.snapshot, services },
            current.serviceIds,
          );
          const flows = await this.flowCount(bridge);
          restored ||= meters > 0 || (services.size > 0 && before !== flows);
          const now = await readLayout(this.fabric, device);
          if (now.ids.get(IDS.version) === current.layout.ids.get(IDS.version) || attempt >= 5)
            return { device, restored, flows, meters };
        }
      } catch (error) {
        throw failureOf(device, error, 'rejected');
      }
    });
  }

  /** How many rules the bridge's flow table holds. */
  private async flowCount(bridge: string): Promise<number> {
    const { stdout } = await this.fabric.ofctl(bridge, ['dump-aggregate', '{}']);
    return Number(/flow_count=(\d+)/.exec(stdout)?.[1] ?? 0);
  }

  async readInterfaces(device: string, names?: readonly string[]): Promise<InterfaceState[]> {
    const { snapshot } = await this.reading(device, () => readState(this.fabric, device));
    return byName([...snapshot.interfaces.values()].filter((i) => !names || names.includes(i.name)));
  }

  async readLags(device: string, names?: readonly string[]): Promise<LagConfig[]> {
    const { snapshot } = await this.reading(device, () => readState(this.fabric, device));
    return byName([...snapshot.lags.values()].filter((lag) => !names || names.includes(lag.name)));
  }

  async readServices(device: string, names?: readonly string[]): Promise<ServiceAttachment[]> {
    const { snapshot } = await this.reading(device, () => readState(this.fabric, device));
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
      const layout = await readLayout(this.fabric, device);
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
        ? await serviceTraffic(this.fabric, layout.bridge)
        : new Map<number, ServiceTraffic>();
      const readAt = new Date().toISOString();
      return wanted.map(({ name, counters, sub }) => ({
        interface: name,
        readAt,
        ...(counters ?? subInterfaceCounters(services, traffic, sub)),
      }));
    });
  }
}
