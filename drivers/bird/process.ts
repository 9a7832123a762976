import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverError } from '../contract';
import { endProcess, processRuns } from '../processes';

/**
 * One BIRD 2 daemon of a route server: started inside the route server's network namespace, with
 * everything of it in one run directory (docs/route-servers.md). Every program runs from an
 * argument array (execFile), never through a shell.
 */

/** Where a BIRD instance keeps its files, all in its run directory. */
export interface BirdPaths {
  dir: string;
  /** The configuration BIRD runs: the last one it accepted. Operators read it here. */
  config: string;
  /** The configuration before the last one, kept to restore when BIRD refuses a new one. */
  previous: string;
  /** A new configuration while it is checked; renamed onto `config` once BIRD accepts it. */
  candidate: string;
  /** BIRD's control socket (birdc -s); a Unix socket path must stay under 108 bytes. */
  socket: string;
  pidFile: string;
  log: string;
}

export const birdPaths = (dir: string): BirdPaths => ({
  dir,
  config: path.join(dir, 'bird.conf'),
  previous: path.join(dir, 'bird.conf.previous'),
  candidate: path.join(dir, 'bird.conf.new'),
  socket: path.join(dir, 'bird.ctl'),
  pidFile: path.join(dir, 'bird.pid'),
  log: path.join(dir, 'bird.log'),
});

export interface BirdPrograms {
  /** The programs, by path or name on PATH (defaults: bird, birdc, ip). */
  bird?: string;
  birdc?: string;
  ip?: string;
  /** How long one program may run (default 10 s). */
  timeoutMs?: number;
}

/** A BIRD protocol as `show protocols all` tells it. */
export interface ProtocolState {
  /** BIRD's protocol name. */
  name: string;
  /** BGP, Device, Static... */
  proto: string;
  /** up, down, start, ... */
  state: string;
  /** For BGP: Idle, Connect, Active, OpenSent, OpenConfirm, Established; otherwise the info column. */
  info: string;
  description: string | null;
  /** Routes imported and exported by the protocol's channels, summed. */
  importedRoutes: number;
  exportedRoutes: number;
  /** The import limit of its channels, or null for none. */
  importLimit: number | null;
  /** Whether a member announced more than the import limit (BIRD marks it `[HIT]`). */
  importLimitHit: boolean;
  /** The last error BIRD reports, or null. */
  lastError: string | null;
}

interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

function run(file: string, args: readonly string[], timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        if (error.killed) reject(new DriverError('timeout', `${file} ${args.join(' ')} took too long`));
        else reject(new DriverError('unreachable', `${file} ${args.join(' ')}: ${error.message}`));
        return;
      }
      resolve({ stdout, stderr, code: error ? (error.code as unknown as number) : 0 });
    });
  });
}

const exists = async (file: string): Promise<boolean> =>
  readFile(file).then(
    () => true,
    () => false,
  );

/** Parses `birdc show protocols all` into one entry per protocol. */
export function parseProtocols(text: string): ProtocolState[] {
  const protocols: ProtocolState[] = [];
  let current: ProtocolState | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+$/, '');
    if (!line || line.startsWith('BIRD ') || line.startsWith('Name ')) continue;
    if (!/^\s/.test(line)) {
      // name proto table state since [info]: `since` is one word or a date and a time.
      const fields = line.split(/\s+/);
      if (fields.length < 4) continue;
      const [name, proto, , state, ...rest] = fields;
      const since = rest[1] && /^\d{1,2}:\d{2}/.test(rest[1]) ? 2 : 1;
      current = {
        name,
        proto,
        state,
        info: rest.slice(since).join(' '),
        description: null,
        importedRoutes: 0,
        exportedRoutes: 0,
        importLimit: null,
        importLimitHit: false,
        lastError: null,
      };
      protocols.push(current);
      continue;
    }
    if (!current) continue;
    const [key, ...valueParts] = line.trim().split(':');
    const value = valueParts.join(':').trim();
    switch (key) {
      case 'Description':
        current.description = value;
        break;
      case 'BGP state':
        current.info = value;
        break;
      case 'Last error':
        current.lastError = value;
        break;
      case 'Import limit':
        current.importLimit = Number.parseInt(value, 10);
        current.importLimitHit = value.includes('[HIT]');
        break;
      case 'Routes': {
        const imported = /(\d+) imported/.exec(value);
        const exported = /(\d+) exported/.exec(value);
        current.importedRoutes += imported ? Number(imported[1]) : 0;
        current.exportedRoutes += exported ? Number(exported[1]) : 0;
        break;
      }
    }
  }
  return protocols;
}

/**
 * BIRD's reply codes (birdc -v): a line starts with four digits and a space or a dash. Codes from
 * 8000 are errors; `configure` answers 0003 (reconfigured), 0004 (in progress), 0018 or 0019.
 */
const errorsOf = (reply: string): string[] =>
  reply
    .split('\n')
    .filter((line) => /^[89]\d{3}[ -]/.test(line))
    .map((line) => line.slice(5));

export class BirdProcess {
  readonly paths: BirdPaths;
  private readonly programs: Required<BirdPrograms>;

  constructor(
    dir: string,
    /** The network namespace BIRD runs in, or null for the service's own. */
    readonly namespace: string | null,
    programs: BirdPrograms = {},
  ) {
    this.paths = birdPaths(dir);
    this.programs = { bird: 'bird', birdc: 'birdc', ip: 'ip', timeoutMs: 10_000, ...programs };
  }

  /** Checks a configuration file as BIRD would read it; a refused one is `rejected`, with BIRD's message. */
  async check(file: string): Promise<void> {
    const { code, stdout, stderr } = await run(
      this.programs.bird,
      ['-p', '-c', file],
      this.programs.timeoutMs,
    );
    if (code !== 0)
      throw new DriverError('rejected', `BIRD refused the configuration: ${(stderr || stdout).trim()}`);
  }

  /** The recorded pid of a live BIRD, or null when none runs. */
  async pid(): Promise<number | null> {
    const text = await readFile(this.paths.pidFile, 'utf8').catch(() => '');
    const pid = Number.parseInt(text.trim(), 10);
    return Number.isInteger(pid) && pid > 0 && processRuns(pid, 'bird') ? pid : null;
  }

  /** Runs birdc on the socket; throws `unreachable` when BIRD does not answer. */
  async birdc(args: readonly string[]): Promise<string> {
    const { code, stdout, stderr } = await run(
      this.programs.birdc,
      ['-v', '-s', this.paths.socket, ...args],
      this.programs.timeoutMs,
    );
    if (code !== 0 || /^0{0,3}Unable to connect|^Unable to connect/m.test(stdout))
      throw new DriverError('unreachable', `birdc ${args.join(' ')}: ${(stderr || stdout).trim()}`);
    return stdout;
  }

  /** Starts BIRD with the configuration in place and waits until its socket answers. */
  async start(): Promise<void> {
    const bird = [
      this.programs.bird,
      '-c',
      this.paths.config,
      '-s',
      this.paths.socket,
      '-P',
      this.paths.pidFile,
    ];
    const [file, ...args] = this.namespace
      ? [this.programs.ip, 'netns', 'exec', this.namespace, ...bird]
      : bird;
    const { code, stdout, stderr } = await run(file, args, this.programs.timeoutMs);
    if (code !== 0)
      throw new DriverError('rejected', `BIRD did not start: ${(stderr || stdout).trim() || `exit ${code}`}`);
    const deadline = Date.now() + this.programs.timeoutMs;
    for (;;) {
      try {
        await this.birdc(['show', 'status']);
        if (await this.pid()) return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
      if (Date.now() > deadline) throw new DriverError('unreachable', 'BIRD started but wrote no pid file');
      await sleep(50);
    }
  }

  /**
   * Puts `config` in place: written beside the running one, checked by `bird -p`, renamed onto it
   * and loaded by `birdc configure` (or BIRD started with it when none runs). A configuration BIRD
   * refuses is `rejected` with BIRD's message, and the one in place, running, stays as it was.
   */
  async apply(config: string): Promise<void> {
    await mkdir(this.paths.dir, { recursive: true, mode: 0o750 });
    await writeFile(this.paths.candidate, config, { mode: 0o640 });
    try {
      await this.check(this.paths.candidate);
    } catch (error) {
      await rm(this.paths.candidate, { force: true });
      throw error;
    }
    const hadConfig = await exists(this.paths.config);
    if (hadConfig) await copyFile(this.paths.config, this.paths.previous);
    await rename(this.paths.candidate, this.paths.config);
    const restore = async () => {
      if (hadConfig) await rename(this.paths.previous, this.paths.config);
      else await rm(this.paths.config, { force: true });
    };
    try {
      if (!(await this.pid())) await this.start();
      else {
        const errors = errorsOf(await this.birdc(['configure']));
        if (errors.length)
          throw new DriverError('rejected', `BIRD refused the configuration: ${errors.join('; ')}`);
      }
    } catch (error) {
      await restore();
      // What runs, if anything, is the configuration restored: have BIRD read it again.
      if (await this.pid()) await this.birdc(['configure']).catch(() => undefined);
      throw error;
    }
  }

  /** Stops BIRD by its recorded pid, waiting until it is gone; nothing when none runs. */
  async stop(): Promise<void> {
    const pid = await this.pid();
    if (pid) await endProcess(pid, this.programs.timeoutMs, 'bird');
    await rm(this.paths.pidFile, { force: true });
  }

  /**
   * Starts BIRD again with the configuration in place (the last one it accepted) when it died.
   * Whether it had to: true when it was started.
   */
  async ensureRunning(): Promise<boolean> {
    if (await this.pid()) return false;
    if (!(await exists(this.paths.config))) return false;
    await this.start();
    return true;
  }

  /** The protocols of the running BIRD (`show protocols all`). */
  async protocols(): Promise<ProtocolState[]> {
    const reply = await this.birdc(['show', 'protocols', 'all']);
    // Strip the reply codes: `1002-name ...` starts a protocol, `1006-  detail` its details.
    const text = reply
      .split('\n')
      .map((line) => (/^\d{4}[ -]/.test(line) ? line.slice(5) : line.replace(/^ /, '')))
      .join('\n');
    return parseProtocols(text);
  }
}
