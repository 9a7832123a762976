import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newId } from '../../domain/ids';
import type { MaxPrefixAction } from './config';
import { birdConfig, protocolName, sessionsOfConfig } from './config';
import type { BirdPrograms, ProtocolState } from './process';
import type { RpkiCache } from './rpki';
import { BirdProcess } from './process';
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
import type { DeviceSnapshot } from '../intent';
import { applyChanges, inverseOf, planChanges } from '../intent';

/**
 * Route servers run by BIRD 2, one daemon per route-server device, each in its network namespace
 * with a run directory of its own under `runDir` (docs/route-servers.md). The configuration BIRD
 * runs is the source of truth: sessions are read back from it, and every commit writes it whole.
 * A driver of switches (drivers/ovs/driver.ts) hands its route-server devices to this one.
 */

/** What a route-server device is to BIRD: where it runs and its own BGP settings. */
export interface RouteServerPlacement {
  /** The network namespace its BIRD runs in, or null for the service's own. */
  namespace: string | null;
  asn: number;
  /** BIRD's router id (IPv4); defaults to the IPv4 address. */
  routerId?: string;
  /** Its addresses on the exchange LAN; a session needs one of its peer's family. */
  ipv4: string | null;
  ipv6: string | null;
  maxPrefixAction?: MaxPrefixAction;
  rejectDocumentationPrefixes?: boolean;
}

/** The placement of a route-server device, or undefined for a device that is not one. */
export type RouteServerResolver = (
  device: string,
) => RouteServerPlacement | undefined | Promise<RouteServerPlacement | undefined>;

/** A session as the running BIRD tells it (`show protocols all`). */
export interface SessionState {
  /** The session's name (the contract's), and its BIRD protocol. */
  name: string;
  protocol: string;
  /** BIRD's protocol state: up, start, down. */
  state: string;
  /** The BGP state: Idle, Connect, Active, Passive, OpenSent, OpenConfirm, Established. */
  bgpState: string;
  importedRoutes: number;
  exportedRoutes: number;
  importLimit: number | null;
  importLimitHit: boolean;
  lastError: string | null;
}

interface StoredCommit {
  id: string;
  key: string;
  changes: ConfigChange[];
  rolledBack: boolean;
}

interface DeviceState {
  /** Grows with every commit and rollback; a candidate loaded at another version is stale. */
  version: number;
  commits: StoredCommit[];
}

interface StoredCandidate extends Candidate {
  baseVersion: number;
}

const EMPTY: DeviceState = { version: 0, commits: [] };

/** Writes a file whole or not at all: a temporary file renamed onto it. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: 0o640 });
  await rename(temporary, file);
}

const readJson = async <T>(file: string): Promise<T | undefined> => {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

/** A device name as a directory name: itself when plain, else made plain with a hash of it. */
export function deviceDirectory(device: string): string {
  const plain = device.replace(/[^A-Za-z0-9._-]/g, '_');
  if (plain === device && plain.length <= 64 && !plain.startsWith('.')) return plain;
  const hash = createHash('sha256').update(device, 'utf8').digest('hex').slice(0, 8);
  return `${plain.replace(/^\./, '_').slice(0, 55)}-${hash}`;
}

export class BirdRouteServers implements DeviceDriver {
  readonly kind = 'bird';
  readonly capabilities = {
    lags: false,
    lacp: false,
    optics: false,
    rollback: true,
    services: false,
    bgpSessions: true,
    counters: false,
  };
  /** One chain of operations per device, so that two never interleave. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    /** Holds a directory per route server, and the candidates; kept short (BIRD's socket is in it). */
    readonly runDir: string,
    private readonly resolve: RouteServerResolver,
    private readonly programs: BirdPrograms = {},
    /** The RPKI validator caches every route server checks its members' routes against (none: no RPKI). */
    private readonly rpkiCaches: readonly RpkiCache[] = [],
  ) {}

  /** Whether `device` is a route server this driver runs. */
  async handles(device: string): Promise<boolean> {
    return (await this.resolve(device)) !== undefined;
  }

  /** The run directory of a route server: its configuration, socket, pid file, log and state. */
  directoryOf(device: string): string {
    return path.join(this.runDir, deviceDirectory(device));
  }

  private async placementOf(device: string): Promise<RouteServerPlacement> {
    const placement = await this.resolve(device);
    if (!placement) throw new DriverError('invalid-config', `${device} is not a route server`);
    return placement;
  }

  private async bird(device: string): Promise<BirdProcess> {
    const { namespace } = await this.placementOf(device);
    return new BirdProcess(this.directoryOf(device), namespace, this.programs);
  }

  private serially<T>(device: string, work: () => Promise<T>): Promise<T> {
    const before = this.queues.get(device) ?? Promise.resolve();
    const done = before.then(work, work);
    this.queues.set(
      device,
      done.catch(() => undefined),
    );
    return done;
  }

  private statePath = (device: string) => path.join(this.directoryOf(device), 'state.json');
  private candidatePath = (id: string) => path.join(this.runDir, 'candidates', `${path.basename(id)}.json`);

  private async state(device: string): Promise<DeviceState> {
    return (await readJson<DeviceState>(this.statePath(device))) ?? EMPTY;
  }

  /** The sessions in the configuration in place: what BIRD runs. */
  private async sessions(device: string): Promise<BgpSession[]> {
    const config = await readFile(path.join(this.directoryOf(device), 'bird.conf'), 'utf8').catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return '';
        throw error;
      },
    );
    return sessionsOfConfig(config);
  }

  private async snapshot(device: string): Promise<DeviceSnapshot> {
    const sessions = await this.sessions(device);
    return {
      interfaces: new Map(),
      lags: new Map(),
      services: new Map(),
      bgpSessions: new Map(sessions.map((session) => [session.name, session])),
    };
  }

  /** Writes the configuration of `sessions` and has BIRD run it (started when none runs). */
  private async configure(device: string, sessions: Iterable<BgpSession>): Promise<void> {
    const placement = await this.placementOf(device);
    const bird = new BirdProcess(this.directoryOf(device), placement.namespace, this.programs);
    const routerId = placement.routerId ?? placement.ipv4;
    if (!routerId)
      throw new DriverError(
        'invalid-config',
        `route server ${device} has neither a router id nor an IPv4 address`,
      );
    const config = birdConfig(
      {
        name: device,
        asn: placement.asn,
        routerId,
        ipv4: placement.ipv4,
        ipv6: placement.ipv6,
        maxPrefixAction: placement.maxPrefixAction,
        rejectDocumentationPrefixes: placement.rejectDocumentationPrefixes,
        rpkiCaches: this.rpkiCaches,
        logFile: bird.paths.log,
      },
      [...sessions],
    );
    await bird.apply(config);
  }

  async load(intent: DeviceIntent): Promise<Candidate> {
    const { device } = intent;
    await this.placementOf(device);
    if (intent.interfaces?.length || intent.lags?.length || intent.services?.length)
      throw new DriverError('invalid-config', `${device} is a route server: it carries BGP sessions only`);
    if (intent.removeLags?.length || intent.removeServices?.length)
      throw new DriverError('invalid-config', `${device} is a route server: it has no LAGs or services`);
    return this.serially(device, async () => {
      const changes = planChanges(await this.snapshot(device), intent);
      const candidate: StoredCandidate = {
        id: newId('cand'),
        device,
        changes,
        baseVersion: (await this.state(device)).version,
      };
      await mkdir(path.join(this.runDir, 'candidates'), { recursive: true, mode: 0o750 });
      await writeAtomically(this.candidatePath(candidate.id), JSON.stringify(candidate));
      return { id: candidate.id, device, changes };
    });
  }

  async diff(candidateId: string): Promise<ConfigChange[]> {
    const candidate = await readJson<StoredCandidate>(this.candidatePath(candidateId));
    if (!candidate)
      throw new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`);
    return candidate.changes;
  }

  /** The commit made under `key` on any route server, if one was. */
  private async committed(key: string): Promise<CommitResult | undefined> {
    const entries = await readdir(this.runDir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name === 'candidates') continue;
      const state = await readJson<DeviceState & { device?: string }>(
        path.join(this.runDir, entry.name, 'state.json'),
      );
      const found = state?.commits.find((commit) => commit.key === key);
      if (found && state?.device) return { commitId: found.id, device: state.device, changes: found.changes };
    }
    return undefined;
  }

  async commit(candidateId: string, key: string): Promise<CommitResult> {
    const done = await this.committed(key);
    if (done) return done;
    const candidate = await readJson<StoredCandidate>(this.candidatePath(candidateId));
    if (!candidate)
      throw new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`);
    const { device } = candidate;
    return this.serially(device, async () => {
      const again = await this.committed(key);
      if (again) return again;
      const state = await this.state(device);
      if (state.version !== candidate.baseVersion)
        throw new DriverError(
          'stale-candidate',
          `${device} changed since candidate ${candidateId} was loaded`,
        );
      const after = applyChanges(await this.snapshot(device), candidate.changes);
      await this.configure(device, after.bgpSessions.values());
      await this.clearLimitedSessions(device, candidate.changes);
      const commitId = newId('commit');
      await this.saveState(device, {
        version: state.version + 1,
        commits: [...state.commits, { id: commitId, key, changes: candidate.changes, rolledBack: false }],
      });
      await rm(this.candidatePath(candidateId), { force: true });
      return { commitId, device, changes: candidate.changes };
    });
  }

  /**
   * Sessions whose max prefix changed and that BIRD shut down for exceeding the old one are
   * restarted at once (`birdc restart`), rather than after BIRD's error wait time, as an operator
   * clears a session after raising its limit.
   */
  private async clearLimitedSessions(device: string, changes: readonly ConfigChange[]): Promise<void> {
    const raised = changes
      .filter((change) => change.kind === 'bgp_session' && change.action === 'update')
      .filter((change) => (change.before as BgpSession).maxPrefix !== (change.after as BgpSession).maxPrefix)
      .map((change) => protocolName(change.name));
    if (!raised.length) return;
    const bird = await this.bird(device);
    for (const protocol of await bird.protocols())
      if (
        raised.includes(protocol.name) &&
        protocol.state !== 'up' &&
        /limit/i.test(protocol.lastError ?? '')
      )
        await bird.birdc(['restart', protocol.name]);
  }

  private async saveState(device: string, state: DeviceState): Promise<void> {
    await mkdir(this.directoryOf(device), { recursive: true, mode: 0o750 });
    await writeAtomically(this.statePath(device), `${JSON.stringify({ device, ...state }, null, 2)}\n`);
  }

  async rollback(device: string, commitId: string): Promise<void> {
    await this.placementOf(device);
    await this.serially(device, async () => {
      const state = await this.state(device);
      const commit = state.commits.find((one) => one.id === commitId);
      if (!commit) throw new DriverError('invalid-config', `${device} has no commit ${commitId}`);
      if (commit.rolledBack) return;
      const after = applyChanges(await this.snapshot(device), inverseOf(commit.changes));
      await this.configure(device, after.bgpSessions.values());
      await this.saveState(device, {
        version: state.version + 1,
        commits: state.commits.map((one) => (one.id === commitId ? { ...one, rolledBack: true } : one)),
      });
    });
  }

  async readBgpSessions(device: string, names?: readonly string[]): Promise<BgpSession[]> {
    await this.placementOf(device);
    const sessions = await this.sessions(device);
    return names ? sessions.filter((session) => names.includes(session.name)) : sessions;
  }

  /**
   * Starts a route server's BIRD again, with the configuration in place (the last one it
   * accepted), when it died. Whether it had to.
   */
  async restartIfDead(device: string): Promise<boolean> {
    const bird = await this.bird(device);
    return this.serially(device, () => bird.ensureRunning());
  }

  /** The route server's BIRD's process id, or null when none runs. */
  async pid(device: string): Promise<number | null> {
    return (await this.bird(device)).pid();
  }

  /** Stops a route server's BIRD; its configuration and state stay for the next start. */
  async stop(device: string): Promise<void> {
    const bird = await this.bird(device);
    await this.serially(device, () => bird.stop());
  }

  /**
   * The sessions as the running BIRD tells them, in name order: its BGP state and routes. A BIRD
   * that died is started again first, with the last configuration it accepted.
   */
  async readSessionStates(device: string, names?: readonly string[]): Promise<SessionState[]> {
    const sessions = await this.readBgpSessions(device, names);
    if (!sessions.length) return [];
    await this.restartIfDead(device);
    const protocols = new Map<string, ProtocolState>(
      (await (await this.bird(device)).protocols()).map((protocol) => [protocol.name, protocol]),
    );
    return sessions.map((session) => {
      const protocol = protocolName(session.name);
      const found = protocols.get(protocol);
      return {
        name: session.name,
        protocol,
        state: found?.state ?? 'missing',
        bgpState: found?.info ?? 'missing',
        importedRoutes: found?.importedRoutes ?? 0,
        exportedRoutes: found?.exportedRoutes ?? 0,
        importLimit: found?.importLimit ?? null,
        importLimitHit: found?.importLimitHit ?? false,
        lastError: found?.lastError ?? null,
      };
    });
  }

  /** Route servers have no interfaces: naming one is an error. */
  private async none<T>(device: string, names: readonly string[] | undefined, what: string): Promise<T[]> {
    await this.placementOf(device);
    if (names?.length)
      throw new DriverError('invalid-config', `route server ${device} has no ${what} ${names.join(', ')}`);
    return [];
  }

  readInterfaces(device: string, names?: readonly string[]): Promise<InterfaceState[]> {
    return this.none(device, names, 'interface');
  }

  readLags(device: string, names?: readonly string[]): Promise<LagConfig[]> {
    return this.none(device, names, 'LAG');
  }

  readServices(device: string, names?: readonly string[]): Promise<ServiceAttachment[]> {
    return this.none(device, names, 'service');
  }

  readOptics(device: string, names: readonly string[]): Promise<OpticsReading[]> {
    return this.none(device, names, 'interface');
  }

  readCounters(device: string, names: readonly string[]): Promise<CounterReading[]> {
    return this.none(device, names, 'interface');
  }
}
