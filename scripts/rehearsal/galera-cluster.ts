import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { freePort } from './machine';

/** The path of the first of `names` found on PATH, or undefined. */
function onPath(...names: string[]): string | undefined {
  for (const name of names) {
    const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', name], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  }
  return undefined;
}

/**
 * A MariaDB Galera cluster of private `mariadbd` processes in a scratch folder, for the Galera
 * rehearsal and the tests of what the service does when its database is a cluster: node 1 is made with mariadb-install-db and
 * bootstraps the cluster, the others join it by state transfer (mariabackup), each on ports of its
 * own. Every process it starts is stopped by `stop()`, and killed if the process that started it exits first.
 */
export interface GaleraCluster {
  readonly size: number;
  /** A `mysql://` URL of node `index` (0-based) naming `database`. */
  url(index: number, database: string): string;
  /** Runs one statement on node `index` as root; answers its rows. */
  query<T = Record<string, unknown>>(index: number, sql: string): Promise<T[]>;
  /** Whether node `index` runs (it was not killed, or was started again). */
  running(index: number): boolean;
  /** Kills node `index` (SIGKILL): it leaves the cluster as after a crash. */
  kill(index: number): Promise<void>;
  /**
   * Starts a killed node again from its position and waits until it is synced; answers how it got
   * what it missed: `IST` (the writes alone, from another node's cache) or `SST` (a whole copy).
   */
  restart(index: number): Promise<'IST' | 'SST'>;
  /** Waits until every running node is Synced in a cluster of `size` nodes. */
  waitForSize(size?: number): Promise<void>;
  /** Stops every node (SIGTERM, SIGKILL after a while) and removes the folder (unless it was given). */
  stop(): Promise<void>;
}

/** The Galera provider library, where Debian's galera-4 puts it unless GALERA_PROVIDER says. */
const PROVIDERS = [
  '/usr/lib/galera/libgalera_smm.so',
  '/usr/lib/galera4/libgalera_smm.so',
  '/usr/lib64/galera-4/libgalera_smm.so',
];
/** How long a node may take to start, or to join and receive its state. */
const START_TIMEOUT_MS = 120_000;
/** How often a joiner that exited before it synced is started, in all. */
const JOIN_ATTEMPTS = 3;
const STOP_TIMEOUT_MS = 30_000;
const SST_USER = 'sst';
const SST_PASSWORD = 'sst-of-a-private-cluster';

interface Programs {
  mariadbd: string;
  installDb: string;
  provider: string;
}

/** The programs a cluster needs, or why it cannot be started here. */
export function galeraPrograms(): Programs | string {
  const mariadbd = onPath('mariadbd') ?? ['/usr/sbin/mariadbd'].find((file) => existsSync(file));
  const installDb = onPath('mariadb-install-db');
  const provider = [process.env.GALERA_PROVIDER ?? '', ...PROVIDERS].find((file) => file && existsSync(file));
  const missing = [
    !mariadbd && 'mariadbd (mariadb-server)',
    !installDb && 'mariadb-install-db (mariadb-server)',
    !provider && 'the Galera provider (galera-4)',
    !onPath('mariabackup', 'mariadb-backup') && 'mariabackup (mariadb-backup)',
    !onPath('socat') && 'socat',
  ].filter(Boolean);
  if (missing.length) return `a Galera cluster needs ${missing.join(', ')}`;
  return { mariadbd: mariadbd!, installDb: installDb!, provider: provider! };
}

/** Every node process started by any cluster of this process, killed should the process exit. */
const running = new Set<ChildProcess>();
let exitHookSet = false;
function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (exitHookSet) return;
  exitHookSet = true;
  process.once('exit', () => {
    for (const process of running) process.kill('SIGKILL');
  });
}

interface Node {
  index: number;
  folder: string;
  config: string;
  socket: string;
  errorLog: string;
  port: number;
  child?: ChildProcess;
  exited?: Promise<number | null>;
}

/** Free TCP ports on 127.0.0.1, distinct from one another. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

function tail(file: string, lines = 60): string {
  if (!existsSync(file)) return `(no ${file})`;
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Starts a cluster of `nodes` (2 or 3: with 2, a killed node leaves the other without quorum) and
 * waits until each node is Synced in a cluster of that size. Throws, with the error log's tail of
 * the node that failed, when one does not start.
 */
export async function startGaleraCluster({
  nodes: size = 3,
  folder: kept,
  settings: extra = [],
}: {
  nodes?: number;
  /** Where the nodes keep their data and logs, left in place by `stop()`; a scratch folder otherwise. */
  folder?: string;
  /** More server settings of every node (`wsrep_sync_wait=1`). */
  settings?: readonly string[];
} = {}): Promise<GaleraCluster> {
  const found = galeraPrograms();
  if (typeof found === 'string') throw new Error(found);
  const programs: Programs = found;
  if (kept) mkdirSync(kept, { recursive: true });
  const folder = kept ?? mkdtempSync(path.join(tmpdir(), 'ixapi-galera-'));
  const ports = await freePorts(size * 4);
  const gcomm = (i: number) => ports[size + i];
  const nodes: Node[] = Array.from({ length: size }, (_, index) => {
    const dir = path.join(folder, `node${index + 1}`);
    mkdirSync(path.join(dir, 'data'), { recursive: true });
    return {
      index,
      folder: dir,
      config: path.join(dir, 'my.cnf'),
      socket: path.join(dir, 'mariadbd.sock'),
      errorLog: path.join(dir, 'error.log'),
      port: ports[index],
    };
  });
  const clusterAddress = `gcomm://${nodes.map((node) => `127.0.0.1:${gcomm(node.index)}`).join(',')}`;
  for (const node of nodes) {
    const settings = [
      '[mariadbd]',
      `datadir=${path.join(node.folder, 'data')}`,
      `socket=${node.socket}`,
      `pid-file=${path.join(node.folder, 'mariadbd.pid')}`,
      `log-error=${node.errorLog}`,
      `port=${node.port}`,
      'bind-address=127.0.0.1',
      ...(process.getuid?.() === 0 ? ['user=root'] : []),
      'skip-name-resolve',
      'innodb_buffer_pool_size=64M',
      'innodb_log_file_size=32M',
      'innodb_flush_log_at_trx_commit=2',
      'performance_schema=OFF',
      'max_connections=300',
      'binlog_format=ROW',
      'innodb_autoinc_lock_mode=2',
      'log_bin_trust_function_creators=1',
      'character-set-server=utf8mb4',
      'collation-server=utf8mb4_unicode_ci',
      'wsrep_on=ON',
      `wsrep_provider=${programs.provider}`,
      'wsrep_cluster_name=ixapi-private',
      `wsrep_cluster_address=${clusterAddress}`,
      `wsrep_node_name=node${node.index + 1}`,
      `wsrep_node_address=127.0.0.1:${gcomm(node.index)}`,
      `wsrep_provider_options=gmcast.listen_addr=tcp://127.0.0.1:${gcomm(node.index)};ist.recv_addr=127.0.0.1:${ports[2 * size + node.index]};gcache.size=64M;evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S`,
      `wsrep_sst_receive_address=127.0.0.1:${ports[3 * size + node.index]}`,
      'wsrep_sst_method=mariabackup',
      `wsrep_sst_auth=${SST_USER}:${SST_PASSWORD}`,
      ...extra,
      '[sst]',
      'sst-log-archive=0',
    ];
    writeFileSync(node.config, `${settings.join('\n')}\n`);
  }

  const connect = (node: Node) =>
    mysql.createConnection({
      socketPath: node.socket,
      user: 'root',
      connectTimeout: 5000,
      multipleStatements: true,
    });

  const status = async (node: Node): Promise<Record<string, string>> => {
    const connection = await connect(node);
    try {
      const [rows] = await connection.query("SHOW GLOBAL STATUS LIKE 'wsrep_%'");
      return Object.fromEntries(
        (rows as Array<{ Variable_name: string; Value: string }>).map((row) => [
          row.Variable_name,
          row.Value,
        ]),
      );
    } finally {
      await connection.end();
    }
  };

  /** The error, with the end of the node's log and the errors the others logged (a donor's, say). */
  const failed = (node: Node, what: string) => {
    const others = nodes
      .filter((other) => other !== node && existsSync(other.errorLog))
      .map((other) => {
        const errors = readFileSync(other.errorLog, 'utf8')
          .split('\n')
          .filter((line) => line.includes('ERROR'));
        return errors.length ? `\nerrors in ${other.errorLog}:\n${errors.slice(-20).join('\n')}` : '';
      });
    return new Error(
      `galera node ${node.index + 1} ${what}; the end of ${node.errorLog}:\n${tail(node.errorLog)}${others.join('')}`,
    );
  };

  /** Waits until `node` is Synced in a cluster of `expected` nodes, or fails if it exits first. */
  async function synced(node: Node, expected: number): Promise<void> {
    let exitCode: number | null | undefined;
    void node.exited?.then((code) => (exitCode = code));
    let last = 'no answer';
    for (const deadline = Date.now() + START_TIMEOUT_MS; Date.now() < deadline; await sleep(200)) {
      if (exitCode !== undefined) throw failed(node, `exited (${exitCode}) before it was synced`);
      try {
        const wsrep = await status(node);
        last = `${wsrep.wsrep_local_state_comment}, cluster of ${wsrep.wsrep_cluster_size}`;
        if (
          wsrep.wsrep_ready === 'ON' &&
          wsrep.wsrep_local_state_comment === 'Synced' &&
          Number(wsrep.wsrep_cluster_size) === expected
        )
          return;
      } catch {
        // still starting
      }
    }
    throw failed(node, `was not synced in a cluster of ${expected} within ${START_TIMEOUT_MS} ms (${last})`);
  }

  function launch(node: Node, extra: string[]): void {
    const child = spawn(programs.mariadbd, [`--defaults-file=${node.config}`, ...extra], {
      stdio: 'ignore',
    });
    track(child);
    node.child = child;
    node.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Where a node that was killed left off: its recovered position, as galera_recovery finds it. */
  function recoveredPosition(node: Node): string {
    const log = path.join(node.folder, 'recover.log');
    rmSync(log, { force: true });
    const run = spawnSync(
      programs.mariadbd,
      [`--defaults-file=${node.config}`, '--wsrep-recover', `--log-error=${log}`],
      { encoding: 'utf8', timeout: START_TIMEOUT_MS },
    );
    const found = /WSREP: Recovered position: (\S+:-?\d+)/.exec(
      existsSync(log) ? readFileSync(log, 'utf8') : '',
    );
    if (run.status !== 0 || !found)
      throw new Error(
        `galera node ${node.index + 1}: no position recovered; the end of ${log}:\n${tail(log)}`,
      );
    return found[1];
  }

  async function stopNode(node: Node): Promise<void> {
    const { child, exited } = node;
    if (!child || !exited || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const stopped = await Promise.race([
      exited.then(() => true),
      sleep(STOP_TIMEOUT_MS, false, { ref: false }),
    ]);
    if (!stopped) {
      child.kill('SIGKILL');
      await exited;
    }
  }

  const alive = () =>
    nodes.filter((node) => node.child && node.child.exitCode === null && node.child.signalCode === null);

  async function stop(): Promise<void> {
    await Promise.all(nodes.map(stopNode));
    if (!kept) rmSync(folder, { recursive: true, force: true });
  }

  try {
    const [first, ...others] = nodes;
    const install = spawnSync(
      programs.installDb,
      [`--defaults-file=${first.config}`, '--auth-root-authentication-method=normal', '--skip-test-db'],
      { encoding: 'utf8', timeout: START_TIMEOUT_MS },
    );
    if (install.status !== 0)
      throw new Error(`mariadb-install-db failed (${install.status}):\n${install.stdout}\n${install.stderr}`);
    launch(first, ['--wsrep-new-cluster']);
    await synced(first, 1);
    // Root over TCP for the service and its checks, and the user the donor's mariabackup connects as; both reach the
    // joiners with the state transfer.
    const admin = await connect(first);
    try {
      await admin.query(
        [
          "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'",
          "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
          `CREATE USER '${SST_USER}'@'localhost' IDENTIFIED BY '${SST_PASSWORD}'`,
          `GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR, SLAVE MONITOR ON *.* TO '${SST_USER}'@'localhost'`,
        ].join(';\n'),
      );
    } finally {
      await admin.end();
    }
    // One joiner at a time: a node joining while another receives its state changes the view under
    // the donor's backup, which then fails.
    // A joiner whose group communication fails to start (Galera now and then aborts at once with
    // "Failed to set thread schedparams" on a loaded machine) is started again, twice at most.
    for (const node of others)
      for (let attempt = 1; ; attempt += 1) {
        launch(node, []);
        try {
          await synced(node, node.index + 1);
          break;
        } catch (error) {
          if (attempt >= JOIN_ATTEMPTS || node.child?.exitCode === null) throw error;
          process.stdout.write(
            `  (galera: node ${node.index + 1} exited while joining; starting it again)\n`,
          );
        }
      }
    await Promise.all(nodes.map((node) => synced(node, size)));
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    size,
    url: (index, database) => `mysql://root@127.0.0.1:${nodes[index].port}/${database}`,
    async query<T>(index: number, sql: string): Promise<T[]> {
      const connection = await connect(nodes[index]);
      try {
        const [rows] = await connection.query(sql);
        return rows as T[];
      } finally {
        await connection.end();
      }
    },
    running: (index) => alive().includes(nodes[index]),
    async kill(index) {
      const node = nodes[index];
      node.child?.kill('SIGKILL');
      await node.exited;
    },
    async restart(index) {
      const node = nodes[index];
      if (alive().includes(node)) throw new Error(`galera node ${index + 1} is running`);
      const position = recoveredPosition(node);
      const logged = existsSync(node.errorLog) ? readFileSync(node.errorLog, 'utf8').length : 0;
      launch(node, [`--wsrep-start-position=${position}`]);
      await synced(node, size);
      const since = readFileSync(node.errorLog, 'utf8').slice(logged);
      return /IST received/.test(since) ? 'IST' : 'SST';
    },
    async waitForSize(expected = size) {
      await Promise.all(alive().map((node) => synced(node, expected)));
    },
    stop,
  };
}
