import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  makeTelemetryFilterString,
} from '@temporalio/worker';
import { QueryTypes } from 'sequelize';
import { createLabStore } from '../drivers/lab/store';
import type { Database } from '../db';
import { openDatabase } from '../db';
import { dropDatabase, ensureDatabase } from '../db/connection';
import { migrate } from '../db/migrator';
import { provisioningWorkflowId } from '../db/repositories/connection-repository';
import { seedDemo } from '../db/seed';
import { createCeilingActivities, prepareCeilingTable } from './bench-ceiling/activities';
import { BenchError, prepareOrders } from './bench-orders';
import { BENCH_NAMESPACE, temporalAnswers, temporalDevServer } from './bench-temporal';
import { build } from './build';
import type { ceilingWorkflow } from './bench-ceiling/workflows';
import {
  activitiesUntilProduction,
  ms,
  percentile,
  tally,
  workerFigures,
} from './bench-provisioning/figures';
import type { Order } from './bench-provisioning/place-orders';
import { placeOrder, placeOrders, stillProvisioning } from './bench-provisioning/place-orders';
import { addSparePorts, offeringFacts } from './bench-provisioning/spare-ports';

/**
 * `npm run bench:provisioning`: how fast this machine takes connection orders from POST to
 * production, not a test. A throw-away database with the demo exchange and enough spare ports, a
 * Temporal dev server, the API and a worker in their own processes, as deployed (from a fresh build
 * in dist/); N standalone orders over HTTP at
 * once; then the ceiling: N trivial workflows with as many activities as one provisioning ran, each
 * writing one row, on the same Temporal server and database.
 */

const ROOT = path.resolve(__dirname, '..');
/** Orders of the small batches go this many at a time: nearly sequential, as one client orders. */
const BATCH_CONCURRENCY = 2;
/** How often the database is asked which orders reached production. */
const POLL_MS = 25;
/** Lines of each child's output echoed here; all of it goes to the log file. */
const ECHO_LINES = 10;
/** Orders placed, unmeasured, before the idle batch: the API's first requests pay for warming up. */
const WARM_UP_ORDERS = 2;

const say = (message: string) => process.stdout.write(`[bench] ${message}\n`);

function wholeNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min)
    throw new BenchError(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  return Number(raw);
}

function readSettings() {
  return {
    orders: wholeNumber('BENCH_ORDERS', 200, 1),
    batch: wholeNumber('BENCH_BATCH', 20, 1),
    deviceLatencyMs: wholeNumber('BENCH_DEVICE_LATENCY_MS', 0, 0),
    timeoutSeconds: wholeNumber('BENCH_TIMEOUT', 600, 1),
    offering: process.env.BENCH_OFFERING || 'po-connection-fra-10g',
    logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
  };
}

// ---------------------------------------------------------------------------------------------
// Everything that must go away at the end, whatever happens.

interface Child {
  name: string;
  process: ChildProcess;
  exited: Promise<void>;
}

const children: Child[] = [];
const suffix = randomBytes(3).toString('hex');
const logPath = path.join(os.tmpdir(), `ixapi-bench-provisioning-${suffix}.log`);
const logFile = createWriteStream(logPath);
let childLines = 0;
let stopping = false;
let databaseUrl: string | undefined;
let db: Database | undefined;
let temporalConnection: Connection | undefined;
let nativeConnection: NativeConnection | undefined;
let ceilingWorker: { worker: Worker; running: Promise<void> } | undefined;

let crash: (error: Error) => void = () => undefined;
/** Rejects when a child process dies on its own; every wait races it. */
const crashed = new Promise<never>((_, reject) => {
  crash = reject;
});
crashed.catch(() => undefined);
const guarded = <T>(work: Promise<T>): Promise<T> => Promise.race([work, crashed]);

function startChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Child {
  // Own process group: Ctrl-C reaches only this script, which stops the children itself.
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let echoed = 0;
  // Temporal's banner on stdout says nothing new; its errors (stderr) and the services' logs do.
  const echo = new Set([child.stderr, name === 'temporal' ? null : child.stdout]);
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      childLines += 1;
      logFile.write(`${name} | ${line}\n`);
      if (!echo.has(stream) || echoed >= ECHO_LINES) return;
      echoed += 1;
      process.stdout.write(`${name.padEnd(8)}| ${line}\n`);
      if (echoed === ECHO_LINES) say(`further output of ${name} goes to ${logPath} only`);
    });
  }
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      crash(new BenchError(`${name} could not start: ${error.message}`));
      resolve();
    });
    child.once('exit', (code, signal) => {
      if (!stopping)
        crash(new BenchError(`${name} exited unexpectedly (${signal ?? `code ${code}`}); see ${logPath}`));
      resolve();
    });
  });
  const entry = { name, process: child, exited };
  children.push(entry);
  return entry;
}

/** The most memory a child held at once (the kernel's high-water mark of its resident set), in MB. */
function peakRssMb(name: string): number | undefined {
  const child = children.find((entry) => entry.name === name)?.process;
  try {
    const status = readFileSync(`/proc/${child?.pid}/status`, 'utf8');
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined; // not Linux, or the process is gone
  }
}

/** The worker's memory the benchmark holds it to: a worker of 1,000 orders in flight fits in this. */
const WORKER_RSS_LIMIT_MB = 600;

async function stopChild({ process: child, exited }: Child): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill('SIGTERM');
  if ((await Promise.race([exited.then(() => true), sleep(15_000, false)])) === false) {
    child.kill('SIGKILL');
    await Promise.race([exited, sleep(5_000)]);
  }
}

let cleaning: Promise<void> | undefined;

/**
 * Stops the ceiling worker, the API, the worker and Temporal (in that order), drops the database,
 * and closes the Temporal connections last: calls still retrying on them may fail once the server is
 * gone, which no longer matters.
 */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    stopping = true;
    process.on('uncaughtException', (error) => say(`ignored while stopping: ${error.message}`));
    process.on('unhandledRejection', () => undefined);
    const steps: Array<[string, () => Promise<unknown>]> = [
      [
        'the ceiling worker',
        async () => {
          if (!ceilingWorker) return;
          if (ceilingWorker.worker.getState() === 'RUNNING') ceilingWorker.worker.shutdown();
          await Promise.race([ceilingWorker.running, sleep(15_000)]);
        },
      ],
      [
        'the API and the worker',
        () => Promise.all(children.filter((c) => c.name !== 'temporal').map(stopChild)),
      ],
      [
        'the Temporal server',
        () => Promise.all(children.filter((c) => c.name === 'temporal').map(stopChild)),
      ],
      ['the database connection', async () => db?.close()],
      ['the throw-away database', async () => databaseUrl && dropDatabase(databaseUrl)],
      [
        'the Temporal connections',
        async () => Promise.all([temporalConnection?.close(), nativeConnection?.close()]),
      ],
    ];
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (error) {
        say(`could not stop ${what}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    await new Promise<void>((resolve) => logFile.end(resolve));
  })();
  return cleaning;
}

// ---------------------------------------------------------------------------------------------
// Setting the stage.

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await guarded(check().catch(() => false))) return;
    await guarded(sleep(250));
  }
  throw new BenchError(`${what} did not become ready within ${Math.round(timeoutMs / 1000)} s`);
}

async function startTemporal(): Promise<string> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const server = temporalDevServer(port);
  say(`starting the Temporal dev server (${server.command}) on ${address}`);
  startChild('temporal', server.command, server.args, process.env);
  await waitFor('the Temporal server', () => temporalAnswers(address));
  return address;
}

/** Waits until a worker polls the task queue. */
function waitForPollers(client: Client, taskQueue: string, what: string): Promise<void> {
  return waitFor(what, async () => {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: BENCH_NAMESPACE,
      taskQueue: { name: taskQueue },
    });
    return (pollers?.length ?? 0) > 0;
  });
}

// ---------------------------------------------------------------------------------------------
// Talking to the API.

function reportRefusals(what: string, orders: readonly Order[]): void {
  const refused = orders.filter((o) => o.problem);
  if (!refused.length) return;
  say(`${refused.length} of ${orders.length} ${what} did not answer 201:`);
  const counts = new Map<string, number>();
  for (const o of refused) counts.set(o.problem!, (counts.get(o.problem!) ?? 0) + 1);
  for (const [problem, n] of [...counts].slice(0, 5)) say(`  ${n} × ${problem}`);
}

const STOPPED_STATES = ['error', 'operator', 'cancelled', 'decommissioned', 'archived'];

/**
 * Watches the database until every accepted order is in production (or stopped elsewhere), once
 * `allPlaced` says no more orders come. Returns false on time-out.
 */
async function watchProduction(
  database: Database,
  orders: readonly Order[],
  allPlaced: () => boolean,
  deadline: number,
): Promise<boolean> {
  for (;;) {
    const pending = orders.filter((o) => o.id && o.productionAt === undefined && !o.stuckIn);
    if (pending.length) {
      const rows = await database.sequelize.query<{ id: string; state: string; changed: number | string }>(
        `SELECT id, state, UNIX_TIMESTAMP(updated_at) * 1000 AS changed FROM connections
         WHERE id IN (:ids) AND state <> 'requested' AND state <> 'allocated' AND state <> 'testing'`,
        { replacements: { ids: pending.map((o) => o.id) }, type: QueryTypes.SELECT },
      );
      const seenAt = performance.now();
      const byId = new Map(pending.map((o) => [o.id, o]));
      for (const row of rows) {
        const order = byId.get(row.id)!;
        if (row.state === 'production') {
          order.productionAt = seenAt;
          order.productionEpochMs = Number(row.changed);
        } else if (STOPPED_STATES.includes(row.state)) order.stuckIn = row.state;
      }
    }
    if (allPlaced() && !orders.some((o) => o.id && o.productionAt === undefined && !o.stuckIn)) return true;
    if (performance.now() > deadline) return false;
    await guarded(sleep(POLL_MS));
  }
}

// ---------------------------------------------------------------------------------------------
// Figures.

async function runCeiling(
  address: string,
  client: Client,
  database: Database,
  count: number,
  steps: number,
): Promise<{ perSecond: number; seconds: number; completed: number }> {
  const taskQueue = `bench-ceiling-${suffix}`;
  const rowIds = Array.from({ length: count }, (_, i) => `ceiling-${suffix}-${i + 1}`);
  await prepareCeilingTable(database.sequelize, rowIds);
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } },
    // This script stops its worker itself, on Ctrl-C too.
    shutdownSignals: [],
  });
  nativeConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: BENCH_NAMESPACE,
    taskQueue,
    workflowsPath: require.resolve('./bench-ceiling/workflows'),
    activities: createCeilingActivities(database.sequelize),
  });
  ceilingWorker = { worker, running: worker.run() };
  ceilingWorker.running.catch((error: unknown) =>
    crash(
      new BenchError(`the ceiling worker failed: ${error instanceof Error ? error.message : String(error)}`),
    ),
  );
  await waitForPollers(client, taskQueue, 'the ceiling worker');
  say(`ceiling: ${count} workflows of ${steps} activities each, all at once`);
  const started = performance.now();
  const finished = await guarded(
    Promise.all(
      rowIds.map(async (rowId) => {
        const handle = await client.workflow.start<typeof ceilingWorkflow>('ceilingWorkflow', {
          taskQueue,
          workflowId: `bench:ceiling:${rowId}`,
          args: [{ rowId, steps }],
        });
        await handle.result();
        return performance.now();
      }),
    ),
  );
  const seconds = (Math.max(...finished) - started) / 1000;
  const [row] = await database.sequelize.query<{ n: number }>(
    'SELECT COUNT(*) AS n FROM bench_ceiling_state WHERE step = :steps',
    { replacements: { steps }, type: QueryTypes.SELECT },
  );
  worker.shutdown();
  await ceilingWorker.running;
  return { perSecond: count / seconds, seconds, completed: Number(row.n) };
}

async function main(): Promise<void> {
  const settings = readSettings();
  const server = new URL(process.env.DATABASE_URL || 'mysql://root@127.0.0.1:3306/ixapi');
  server.pathname = `/ixapi_bench_provisioning_${suffix}`;
  databaseUrl = server.toString();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TOKEN_SIGNING_KEY: randomBytes(32).toString('base64'),
    API_SECRET_HASH_KEY: randomBytes(32).toString('base64'),
    TEMPORAL_NAMESPACE: BENCH_NAMESPACE,
    TEMPORAL_TASK_QUEUE: `ixapi-bench-${suffix}`,
    LOG_LEVEL: settings.logLevel,
    HOST: '127.0.0.1',
    LAB_CROSS_CONNECT_DELAY_MS: '0',
    LAB_DEVICE_LATENCY_MS: String(settings.deviceLatencyMs),
    // One account orders and polls everything: its limit is counted, as in production, but never reached.
    RATE_LIMIT_PER_ACCOUNT: '1000000/1s',
    // One customer places every order: no quota may refuse them, nor serialise them.
    QUOTA_PORTS: '0',
    QUOTA_OPEN_ORDERS: '0',
  };
  const extraPorts = WARM_UP_ORDERS + settings.orders + 2 * settings.batch;

  say(`preparing ${server.pathname.slice(1)} (child output: ${logPath})`);
  await ensureDatabase(databaseUrl);
  db = openDatabase({ url: databaseUrl, apiSecretHashKey: Buffer.from(env.API_SECRET_HASH_KEY!, 'base64') });
  await migrate(db.sequelize);
  const credentials = await seedDemo(db);
  const credential = credentials.find((c) => c.role === 'customer');
  if (!credential) throw new BenchError('the demo exchange has no customer account');
  const facts = await offeringFacts(db, settings.offering);
  const devices = await addSparePorts(db, facts, extraPorts);
  await createLabStore(db.sequelize).syncFromCatalogue();
  say(`added ${extraPorts} spare ${facts.speed / 1000}G ports on ${devices.join(', ')}; lab fabric synced`);

  // The API and the worker run as deployed: compiled, the workflows bundled at build time.
  const dist = path.join(ROOT, 'dist');
  say('building dist/ (types are not checked)');
  await build(dist, { check: false });
  const address = await startTemporal();
  temporalConnection = await Connection.connect({ address });
  const client = new Client({ connection: temporalConnection, namespace: BENCH_NAMESPACE });
  const apiPort = await freePort();
  env.TEMPORAL_ADDRESS = address;
  env.PORT = String(apiPort);
  say(
    `starting the API on 127.0.0.1:${apiPort} and a worker (cross-connect delay 0 ms, device latency ${settings.deviceLatencyMs} ms)`,
  );
  // Both with their metrics on, as deployed; the worker's figures are read back at the end.
  const workerMetricsPort = await freePort();
  startChild('worker', process.execPath, [path.join(dist, 'worker/main.js')], {
    ...env,
    METRICS_PORT: String(workerMetricsPort),
    // BENCH_WORKER_NODE_OPTIONS prices Node settings of the worker alone (a heap limit, say).
    ...(process.env.BENCH_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : {}),
  });
  startChild('api', process.execPath, [path.join(dist, 'api/main.js')], {
    ...env,
    METRICS_PORT: String(await freePort()),
  });
  const base = `http://127.0.0.1:${apiPort}/api/v2`;
  await waitFor('the API', async () => {
    const response = await fetch(`${base}/health`);
    return ((await response.json()) as { status?: string }).status === 'pass';
  });
  await waitForPollers(client, env.TEMPORAL_TASK_QUEUE!, 'the worker');
  say('API healthy, worker polling');

  const { api, orderBody } = await prepareOrders(base, credential, settings.offering);
  const deadline = () => performance.now() + settings.timeoutSeconds * 1000;

  // An idle system: a small batch, nearly sequential, then let it come to rest.
  const warmUp = await placeOrders(api, orderBody, 'warm-up', WARM_UP_ORDERS, 1);
  reportRefusals('warm-up orders', warmUp);
  say(`idle batch: ${settings.batch} orders, ${BATCH_CONCURRENCY} at a time`);
  const idle = await placeOrders(api, orderBody, 'idle', settings.batch, BATCH_CONCURRENCY);
  reportRefusals('idle-batch orders', idle);
  if (!(await watchProduction(db, [...warmUp, ...idle], () => true, deadline())))
    say(`the idle batch did not all reach production within ${settings.timeoutSeconds} s; going on`);

  // The load: N orders at once, then a batch like the idle one while they are provisioned.
  say(`ordering ${settings.orders} connections at once`);
  const orders: Order[] = [];
  let allPlaced = false;
  const firstPost = performance.now();
  const placing = Promise.all(
    Array.from({ length: settings.orders }, async (_, i) => {
      const tag = `load-${i + 1}`;
      orders[i] = await placeOrder(api, orderBody(tag), tag);
    }),
  ).then(() => {
    allPlaced = true;
  });
  const watching = watchProduction(db, orders, () => allPlaced, deadline());
  await guarded(placing);
  const postsDone = performance.now();
  const accepted = orders.filter((o) => o.id).length;
  say(
    `${accepted} of ${settings.orders} orders accepted in ${((postsDone - firstPost) / 1000).toFixed(1)} s; ${stillProvisioning(orders)} still provisioning`,
  );
  reportRefusals('orders', orders);
  if (!accepted) throw new BenchError('the API accepted none of the orders');

  const inFlightBefore = stillProvisioning(orders);
  say(
    `loaded batch: ${settings.batch} orders, ${BATCH_CONCURRENCY} at a time, while ${inFlightBefore} provision`,
  );
  const loaded = await placeOrders(api, orderBody, 'loaded', settings.batch, BATCH_CONCURRENCY);
  const inFlightAfter = stillProvisioning(orders);
  reportRefusals('loaded-batch orders', loaded);
  say(`loaded batch done; ${inFlightAfter} of the ${accepted} still provisioning`);

  const complete = await watching;
  const live = orders.filter((o) => o.productionAt !== undefined);
  const lastProduction = Math.max(...live.map((o) => o.productionAt!));
  const stuck = orders.filter((o) => o.stuckIn);
  say(
    `${live.length} of ${accepted} in production after ${((lastProduction - firstPost) / 1000).toFixed(1)} s${
      stuck.length
        ? `; ${stuck.length} stopped in ${[...new Set(stuck.map((o) => o.stuckIn))].join(', ')}`
        : ''
    }${complete ? '' : `; gave up waiting after ${settings.timeoutSeconds} s`}`,
  );
  // The loaded batch's orders provision too; let them finish before the ceiling runs.
  await watchProduction(db, loaded, () => true, deadline());
  if (!live.length) throw new BenchError('no order reached production, so there is nothing to compare');

  const first = live.reduce((a, b) => (b.productionAt! < a.productionAt! ? b : a));
  const observedEpochMs = Date.now() - (performance.now() - first.productionAt!);
  const activities = await activitiesUntilProduction(client, first, observedEpochMs);
  say(
    `${provisioningWorkflowId(first.id!)} scheduled ${activities.count} activities until production: ${tally(activities.types)}${
      activities.inHistory > activities.count
        ? ` (${activities.inHistory - activities.count} more after it)`
        : ''
    }`,
  );
  if (!activities.count) throw new BenchError('the provisioning history shows no activity before production');

  const ceiling = await runCeiling(address, client, db, settings.orders, activities.count);
  if (ceiling.completed !== settings.orders)
    say(`only ${ceiling.completed} of ${settings.orders} ceiling rows hold their last step`);

  // The summary.
  const ordersPerSecond = live.length / ((lastProduction - firstPost) / 1000);
  const ratio = ordersPerSecond / ceiling.perSecond;
  const postMs = orders.filter((o) => o.id).map((o) => o.postMs);
  const toProduction = live.map((o) => o.productionAt! - o.startedAt);
  const idleMs = idle.filter((o) => o.id).map((o) => o.postMs);
  const loadedMs = loaded.filter((o) => o.id).map((o) => o.postMs);
  const rows: Array<[string, number[]]> = [
    [`POST /connections, ${settings.orders} at once`, postMs],
    [`POST to production, ${settings.orders} at once`, toProduction],
    [`POST /connections, idle system (${settings.batch}, ${BATCH_CONCURRENCY} at a time)`, idleMs],
    [
      `POST to production, idle system (${settings.batch}, ${BATCH_CONCURRENCY} at a time)`,
      idle.filter((o) => o.productionAt !== undefined).map((o) => o.productionAt! - o.startedAt),
    ],
    [`POST /connections, during provisioning (${settings.batch}, ${BATCH_CONCURRENCY} at a time)`, loadedMs],
  ];
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out();
  out(`${'measure'.padEnd(64)} ${'n'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
  for (const [name, values] of rows)
    out(
      `${name.padEnd(64)} ${String(values.length).padStart(5)} ${ms(percentile(values, 0.5)).padStart(8)} ${ms(percentile(values, 0.99)).padStart(8)}`,
    );
  out();
  out(
    `orders per second        ${ordersPerSecond.toFixed(1).padStart(8)}   (${live.length} orders, first POST to last production ${((lastProduction - firstPost) / 1000).toFixed(2)} s)`,
  );
  out(
    `ceiling per second       ${ceiling.perSecond.toFixed(1).padStart(8)}   (${settings.orders} workflows of ${activities.count} activities each writing one row, ${ceiling.seconds.toFixed(2)} s)`,
  );
  out(
    `share of the ceiling     ${ratio.toFixed(2).padStart(8)}   (aim: 0.8 or more: ${ratio >= 0.8 ? 'met' : 'NOT met'})`,
  );
  const [idleP99, loadedP99] = [percentile(idleMs, 0.99), percentile(loadedMs, 0.99)];
  out(
    `POST p99 idle / loaded   ${`${ms(idleP99)} / ${ms(loadedP99)} ms`.padStart(8)}   (${inFlightBefore} orders provisioning when the loaded batch started, ${inFlightAfter} when it ended; aim: loaded within 1.5 × idle: ${loadedP99 <= 1.5 * idleP99 ? 'met' : 'NOT met'})`,
  );
  const [workerRss, apiRss] = [peakRssMb('worker'), peakRssMb('api')];
  const mb = (value: number | undefined) => (value === undefined ? 'unknown' : `${value.toFixed(0)} MB`);
  out(
    `peak memory (RSS)        worker ${mb(workerRss)}, API ${mb(apiRss)}   (aim: worker under ${WORKER_RSS_LIMIT_MB} MB: ${workerRss === undefined ? 'unknown' : workerRss < WORKER_RSS_LIMIT_MB ? 'met' : 'NOT met'})`,
  );
  const problems = [
    orders.length - accepted && `${orders.length - accepted} orders refused`,
    accepted - live.length && `${accepted - live.length} accepted orders not in production`,
    idle.length - idleMs.length + loaded.length - loadedMs.length &&
      `${idle.length - idleMs.length + loaded.length - loadedMs.length} batch orders refused`,
  ].filter(Boolean);
  out(`problems                 ${problems.length ? problems.join('; ') : 'none'}`);
  out(`worker's metrics         ${await workerFigures(workerMetricsPort)}`);
  out(
    `settings                 BENCH_ORDERS=${settings.orders} BENCH_BATCH=${settings.batch} BENCH_DEVICE_LATENCY_MS=${settings.deviceLatencyMs} BENCH_OFFERING=${settings.offering}; production polled every ${POLL_MS} ms`,
  );
  out();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (cleaning) return;
    say(`${signal}: stopping everything and dropping the database`);
    void cleanUp().finally(() => {
      say('stopped');
      process.exit(130);
    });
  });
}

main()
  .then(async () => {
    await cleanUp();
    say(childLines ? `done; child output in ${logPath}` : 'done');
    process.exit(0);
  })
  .catch(async (error: unknown) => {
    process.stderr.write(
      `[bench] could not run: ${error instanceof BenchError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    await cleanUp();
    process.exit(1);
  });
