import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Connection } from '@temporalio/client';
import { isColorSupported, prettyFactory } from 'pino-pretty';
import type { Config, LogFormat } from '../config/config';
import { ConfigError, chooseLogFormat, loadConfig } from '../config/config';
import { MEMBER_EXPORT_PATH } from '../api/ixf-member-export';
import type { Database } from '../db';
import { openDatabase } from '../db';
import { ensureDatabase } from '../db/connection';
import { migrate } from '../db/migrator';
import { createLabStore } from '../drivers/lab/store';
import { fabricDevices, fabricRouteServers } from '../drivers/ovs/catalogue';
import { OvsFabric } from '../drivers/ovs/fabric';
import { seedDemo } from '../db/seed';
import { searchAttributeFlags } from '../domain/search-attributes';
import { DEMO_CREDENTIALS_FILE, readDemoCredentials, writeDemoCredentials } from './demo-credentials';
import { DATA_DIR, PROJECT_ROOT, ensureLocalSecrets } from './local-secrets';
import { buildDocs, docsAreStale } from './build-docs';
import { findTemporalCli } from './temporal-cli';

/**
 * `npm start`: the whole service on one machine. A Temporal dev server (unless TEMPORAL_ADDRESS is
 * set), the database and its migrations, the demo exchange, with DEVICE_DRIVER=ovs the ovs fabric
 * of the catalogue's devices, the API and a worker. Ctrl-C stops every child in order (the fabric
 * stays up); a second start reuses .data/.
 */

const TEMPORAL_PORT = 7233;
const TEMPORAL_UI_PORT = 8233;
/**
 * The demo serves metrics, as a deployment does: the API on METRICS_PORT (9464 unless set), the
 * worker on the next port and its Temporal SDK on the one after (each process needs its own).
 */
const DEFAULT_METRICS_PORT = 9464;
const children: Array<{ name: string; child: ChildProcess }> = [];
let shuttingDown = false;
/** What a child's line becomes on this terminal; lines that are not JSON logs pass as they are. */
let showLine = (line: string): string => line;

const say = (message: string) => process.stdout.write(`[start] ${message}\n`);

function fail(message: string): never {
  process.stderr.write(`[start] ${message}\n`);
  void shutdown(1);
  throw new Error(message);
}

function portAnswers(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The children always write JSON; in the pretty format each of their log lines is shown as
 * pino-pretty renders it (the prefix names the process, so the logger's name is left out).
 */
function useLogFormat(format: LogFormat): void {
  if (format === 'json') return;
  const pretty = prettyFactory({
    colorize: isColorSupported,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name',
  });
  showLine = (line) => pretty(line).trimEnd();
}

function prefixOutput(name: string, child: ChildProcess): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      const shown = showLine(line)
        .split('\n')
        .map((part) => `${name.padEnd(8)}| ${part}\n`);
      process.stdout.write(shown.join(''));
    });
  }
}

function startChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // Own process group: Ctrl-C reaches only this script, which stops the children in order.
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  prefixOutput(name, child);
  child.once('exit', (code, signal) => {
    if (!shuttingDown) {
      process.stderr.write(
        `[start] ${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping everything\n`,
      );
      void shutdown(1);
    }
  });
  children.push({ name, child });
  return child;
}

function stopChild({ name, child }: { name: string; child: ChildProcess }): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      say(`${name} did not stop in time; killing it`);
      child.kill('SIGKILL');
    }, 15000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function shutdown(code: number): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  say('stopping…');
  // API and worker first (they drain), Temporal last.
  const services = children.filter((c) => c.name !== 'temporal');
  await Promise.all(services.map(stopChild));
  await Promise.all(children.filter((c) => c.name === 'temporal').map(stopChild));
  say('stopped');
  process.exit(code);
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (shuttingDown) throw new Error('shutting down');
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  fail(`${what} did not become ready within ${Math.round(timeoutMs / 1000)} s`);
}

async function startTemporal(config: Config, env: NodeJS.ProcessEnv): Promise<string> {
  if (config.temporalAddress) {
    say(`using the Temporal server at ${config.temporalAddress}`);
    return config.temporalAddress;
  }
  let cli: string;
  try {
    cli = findTemporalCli();
  } catch {
    say('the Temporal CLI is missing; installing it (needs Go)…');
    const install = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts/install-temporal.sh')], {
      stdio: 'inherit',
    });
    if (install.status !== 0) fail('could not install the Temporal CLI; see the messages above');
    cli = findTemporalCli();
  }
  if (await portAnswers(TEMPORAL_PORT)) {
    fail(
      `port ${TEMPORAL_PORT} is already in use (another \`npm start\`?). Stop it, or set TEMPORAL_ADDRESS=127.0.0.1:${TEMPORAL_PORT} to use that server.`,
    );
  }
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(TEMPORAL_PORT),
    '--ui-port',
    String(TEMPORAL_UI_PORT),
    '--db-filename',
    path.join(DATA_DIR, 'temporal.db'),
    '--namespace',
    config.temporalNamespace,
    '--log-level',
    'error',
    ...searchAttributeFlags().flatMap((flag) => ['--search-attribute', flag]),
  ];
  say(`starting the Temporal dev server (${cli})`);
  startChild('temporal', cli, args, env);
  const address = `127.0.0.1:${TEMPORAL_PORT}`;
  await waitFor(
    'the Temporal server',
    async () => {
      try {
        const connection = await Connection.connect({ address, connectTimeout: 1000 });
        try {
          await connection.workflowService.describeNamespace({ namespace: config.temporalNamespace });
          return true;
        } finally {
          await connection.close();
        }
      } catch {
        return false;
      }
    },
    60000,
  );
  return address;
}

async function prepareDatabase(config: Config): Promise<void> {
  say(`preparing the database ${new URL(config.databaseUrl).pathname.slice(1)}`);
  try {
    await ensureDatabase(config.databaseUrl);
  } catch (error) {
    fail(
      `cannot reach the database at ${new URL(config.databaseUrl).host}: ${error instanceof Error ? error.message : String(error)}. Start MariaDB/MySQL or set DATABASE_URL.`,
    );
  }
  const db = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
  try {
    const applied = await migrate(db.sequelize);
    say(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
    const accounts = await seedDemo(db, readDemoCredentials());
    // The lab devices the provisioning worker drives mirror the catalogue's devices and ports.
    await createLabStore(db.sequelize).syncFromCatalogue();
    writeDemoCredentials({ baseUrl: config.publicBaseUrl, accounts });
    if (config.deviceDriver === 'ovs') await startFabric(config, db);
  } finally {
    await db.close();
  }
}

/**
 * DEVICE_DRIVER=ovs: the ovs fabric comes up before the worker, with a bridge per device of the
 * catalogue and a port per port, a core bridge per metro area network and a namespace per route
 * server (what runs already is kept). It outlives the stack, like the data:
 * `npm run fabric -- down` takes it down.
 */
async function startFabric(config: Config, db: Database): Promise<void> {
  if (process.getuid?.() !== 0)
    fail('DEVICE_DRIVER=ovs needs root: the ovs fabric makes bridges, veth pairs and network namespaces');
  const fabric = new OvsFabric(path.resolve(PROJECT_ROOT, config.ovsRunDir));
  const devices = await fabricDevices(db.fabricCatalogue);
  const routeServers = await fabricRouteServers(db.fabricCatalogue);
  say(
    `bringing the ovs fabric up under ${fabric.runDir} (${devices.length} devices, ${routeServers.length} route servers)…`,
  );
  try {
    await fabric.up(devices, routeServers);
  } catch (error) {
    fail(`the ovs fabric did not come up: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { ovsVswitchd } = await fabric.status();
  const ports = devices.reduce((sum, device) => sum + device.ports.length, 0);
  say(
    `the ovs fabric is up: ovs-vswitchd ${ovsVswitchd.pid}, ${devices.length} bridges, ${ports} ports; the worker supervises it every ${config.supervisionIntervalSeconds} s`,
  );
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  mkdirSync(DATA_DIR, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  ensureLocalSecrets(env);
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
    throw error;
  }
  useLogFormat(chooseLogFormat(config, process.stdout));

  if (docsAreStale()) {
    say('rendering the API docs');
    buildDocs();
  }
  await prepareDatabase(config);
  const temporalAddress = await startTemporal(config, env);
  const childEnv = { ...env, TEMPORAL_ADDRESS: temporalAddress };
  const metricsPort = config.metricsPort ?? DEFAULT_METRICS_PORT;
  const temporalMetricsPort = config.temporalMetricsPort ?? metricsPort + 2;
  const node = process.execPath;
  startChild('worker', node, ['--import', 'tsx', 'worker/main.ts'], {
    ...childEnv,
    METRICS_PORT: String(metricsPort + 1),
    TEMPORAL_METRICS_PORT: String(temporalMetricsPort),
  });
  startChild('api', node, ['--import', 'tsx', 'api/main.ts'], {
    ...childEnv,
    METRICS_PORT: String(metricsPort),
  });
  const healthUrl = `http://127.0.0.1:${config.port}/api/v2/health`;
  await waitFor(
    'the API',
    async () => {
      try {
        return (await fetch(healthUrl)).status < 500;
      } catch {
        return false;
      }
    },
    60000,
  );

  const accounts = readDemoCredentials();
  const lines = [
    '',
    'The IX-API provisioning service is running.',
    `  API            ${config.publicBaseUrl}`,
    `  Docs           ${config.publicBaseUrl}/docs`,
    `  OpenAPI        ${config.publicBaseUrl}/spec`,
    `  Health         ${config.publicBaseUrl}/health`,
    `  IX-F export    ${new URL(config.publicBaseUrl).origin}${MEMBER_EXPORT_PATH}`,
    config.temporalAddress
      ? `  Temporal       ${config.temporalAddress} (namespace ${config.temporalNamespace})`
      : `  Temporal UI    http://localhost:${TEMPORAL_UI_PORT}/namespaces/${config.temporalNamespace}/workflows`,
    `  Metrics        http://localhost:${metricsPort}/metrics (API), :${metricsPort + 1} (worker), :${temporalMetricsPort} (Temporal SDK)`,
    config.deviceDriver === 'ovs'
      ? `  Devices        the ovs fabric under ${path.resolve(PROJECT_ROOT, config.ovsRunDir)} (npm run fabric -- status | down)`
      : '  Devices        the lab (DEVICE_DRIVER=ovs for Open vSwitch bridges)',
    '',
    `Demo credentials (also in ${path.relative(PROJECT_ROOT, DEMO_CREDENTIALS_FILE)}):`,
    ...accounts.map(
      (a) =>
        `  ${a.role.padEnd(10)} ${a.name.padEnd(18)} ${a.accountId.padEnd(22)} api_key=${a.apiKey}  api_secret=${a.apiSecret}`,
    ),
    '',
    'Get a token:',
    `  curl -s -X POST ${config.publicBaseUrl}/auth/token -H 'Content-Type: application/json' \\`,
    `    -d '{"api_key":"${accounts[0]?.apiKey ?? ''}","api_secret":"<api_secret>"}'`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  if (!shuttingDown) {
    process.stderr.write(
      `[start] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    void shutdown(1);
  }
});
