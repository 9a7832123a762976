import { randomBytes } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import pino from 'pino';
import { QueryTypes } from 'sequelize';
import { createLabStore } from '../../drivers/lab-store';
import type { ApiService } from '../../api/server';
import { startApi } from '../../api/server';
import { startTrafficCollector } from '../../temporal/client';
import type { Config } from '../../config/config';
import { loadConfig } from '../../config/config';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import { dropDatabase, ensureDatabase } from '../../db/connection';
import { migrate } from '../../db/migrator';
import type { DemoCredential } from '../../db/seed/demo';
import { seedDemo } from '../../db/seed';
import { sparePort } from '../../db/seed/catalogue';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes';
import { buildDocs, docsAreStale } from '../../scripts/build-docs';
import { findTemporalCli } from '../../scripts/temporal-cli';
import { activitiesFor, bundleWorkflows, createWorker } from '../../worker/create-worker';
import type { MetricsListener } from '../../telemetry/metrics';
import { createMetricsRegistry, startMetricsListener } from '../../telemetry/metrics';
import type { WorkerMetrics } from '../../worker/metrics';
import { createWorkerMetrics } from '../../worker/metrics';

/**
 * The real stack the integration tests talk to: a throw-away MariaDB database, a Temporal dev
 * server started from the installed CLI, a worker, and the API on a free port.
 */
export interface TestStack {
  config: Config;
  env: NodeJS.ProcessEnv;
  db: Database;
  api: ApiService;
  baseUrl: string;
  temporal: TestWorkflowEnvironment;
  worker: Worker;
  credentials: DemoCredential[];
  logger: pino.Logger;
  /** The worker's metrics listener (on a free port), as METRICS_PORT turns it on in a worker. */
  workerMetrics: MetricsListener;
}

let current: TestStack | undefined;
let workerRun: Promise<void> | undefined;
/** The series of the stack's workers (one after another, see withoutWorker). */
let workerSeries: WorkerMetrics | undefined;

export function stack(): TestStack {
  if (!current) throw new Error('the integration stack is not running');
  return current;
}

/** A database URL on the same server as the configured one, with a fresh, unique database name. */
export function throwAwayDatabaseUrl(): string {
  const base = new URL(
    process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/ixapi',
  );
  base.pathname = `/ixapi_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  return base.toString();
}

export function testEnvironment(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: throwAwayDatabaseUrl(),
    TOKEN_SIGNING_KEY: randomBytes(32).toString('base64'),
    API_SECRET_HASH_KEY: randomBytes(32).toString('base64'),
    TEMPORAL_NAMESPACE: 'ixapi',
    TEMPORAL_TASK_QUEUE: `ixapi-test-${randomBytes(3).toString('hex')}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HEALTH_PROBE_TIMEOUT_MS: '1500',
    LAB_CROSS_CONNECT_DELAY_MS: '300',
    STATS_SAMPLE_INTERVAL_S: '1',
    // The suite sends thousands of requests from one address and a few accounts: limits are counted
    // (the code path runs) but not reached; test/integration/rate-limits.test.ts reaches them.
    RATE_LIMIT_AUTH_PER_ADDRESS: '1000000/1s',
    RATE_LIMIT_AUTH_PER_KEY: '1000000/1s',
    RATE_LIMIT_PER_ACCOUNT: '1000000/1s',
    RATE_LIMIT_PER_ADDRESS: '1000000/1s',
    ...overrides,
  };
}

/** Once per process: mocha's parallel workers start a stack for each file they run. */
let runtimeInstalled = false;
let bundled: Promise<{ code: string }> | undefined;

/** The workflows bundled once per process, as the build bundles them. */
function workflowBundle(): Promise<{ code: string }> {
  bundled ??= bundleWorkflows().then(({ code }) => ({ code }));
  return bundled;
}

export async function startStack(): Promise<TestStack> {
  if (docsAreStale()) buildDocs();
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: findTemporalCli() },
      namespace: 'ixapi',
      searchAttributes: [...SEARCH_ATTRIBUTES],
      log: { format: 'pretty', level: 'error' },
    },
  });
  const env = testEnvironment({ TEMPORAL_ADDRESS: temporal.address });
  const config = loadConfig(env);
  const logger = pino({ level: config.logLevel });
  await ensureDatabase(config.databaseUrl);
  const db = openDatabase({
    url: config.databaseUrl,
    apiSecretHashKey: config.apiSecretHashKey,
    quotas: config.quotas,
  });
  await migrate(db.sequelize);
  const credentials = await seedDemo(db);
  await addTestPorts(db);
  await createLabStore(db.sequelize).syncFromCatalogue();
  const workerRegistry = createMetricsRegistry();
  workerSeries = createWorkerMetrics({ registry: workerRegistry, sequelize: db.sequelize, logger });
  const workerMetrics = await startMetricsListener({
    registry: workerRegistry,
    host: '127.0.0.1',
    port: 0,
    logger,
  });
  const worker = await newWorker(temporal, config, db);
  workerRun = worker.run();
  const api = await startApi({
    config,
    logger,
    db,
    port: 0,
    relayIntervalMs: 300,
    relayGraceMs: 300,
  });
  await startTrafficCollector(api.temporal.client, {
    taskQueue: config.temporalTaskQueue,
    intervalSeconds: config.statsSampleIntervalSeconds,
  });
  current = {
    config,
    env,
    db,
    api,
    baseUrl: api.url,
    temporal,
    worker,
    credentials,
    logger,
    workerMetrics,
  };
  return current;
}

/**
 * The demo exchange has 24 ports of 10G on each edge device (Hamburg has one); the suite orders more
 * than that over its run, so every edge device of the test exchange gets as many again.
 */
async function addTestPorts(db: Database): Promise<void> {
  const edges = await db.sequelize.query<{ id: string; pop: string }>(
    "SELECT id, pop FROM devices WHERE id LIKE '%-edge' ORDER BY id",
    { type: QueryTypes.SELECT },
  );
  const now = new Date();
  const rows = edges.flatMap((device) =>
    Array.from({ length: 24 }, (_, i) => ({
      ...sparePort({
        id: `port-test-${device.id.replace(/^dev-/, '')}-${String(i + 1).padStart(2, '0')}`,
        device: device.id,
        pop: device.pop,
        name: `et-0/1/${i}`,
        media_type: '10GBASE-LR',
        speed: 10_000,
      }),
      created_at: now,
      updated_at: now,
    })),
  );
  if (!rows.length) throw new Error('the demo exchange has no edge devices to add test ports to');
  await db.sequelize.getQueryInterface().bulkInsert('ports', rows);
}

async function newWorker(temporal: TestWorkflowEnvironment, config: Config, db: Database): Promise<Worker> {
  return createWorker({
    workflowBundle: await workflowBundle(),
    connection: temporal.nativeConnection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    activities: activitiesFor(db, config, workerSeries),
  });
}

/**
 * Another API process on the stack's database and Temporal server, configured by the stack's
 * environment with `overrides` (lower limits, other keys), on a free port; stop it when done.
 * `metricsPort: 0` turns its metrics listener on at a free port (`metricsUrl`).
 */
export async function startSecondApi(
  overrides: NodeJS.ProcessEnv,
  options: { metricsPort?: number | null } = {},
): Promise<ApiService> {
  const running = stack();
  const config = loadConfig({ ...running.env, ...overrides });
  return startApi({
    config,
    logger: running.logger,
    db: running.db,
    port: 0,
    metricsPort: options.metricsPort,
  });
}

/**
 * Takes the worker away while `meanwhile` runs, then starts a new one: workflows must carry on
 * from their histories, as after a worker crash.
 */
export async function withoutWorker(meanwhile: () => Promise<void>): Promise<void> {
  const running = stack();
  running.worker.shutdown();
  await workerRun;
  try {
    await meanwhile();
  } finally {
    running.worker = await newWorker(running.temporal, running.config, running.db);
    workerRun = running.worker.run();
  }
}

export async function stopStack(): Promise<void> {
  const running = current;
  current = undefined;
  if (!running) return;
  // Every step runs even when an earlier one fails, so no server or database outlives the run.
  const steps: Array<() => Promise<unknown>> = [
    () => running.api.stop(),
    async () => {
      running.worker.shutdown();
      await workerRun;
    },
    () => running.workerMetrics.close(),
    () => running.db.close(),
    () => dropDatabase(running.config.databaseUrl),
    () => running.temporal.teardown(),
  ];
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length) throw failures[0];
}
