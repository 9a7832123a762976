import { randomBytes } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import pino from 'pino';
import type { ApiService } from '../../api/server';
import { startApi } from '../../api/server';
import type { ResourceFamily } from '../../api/families';
import { startTrafficCollector } from '../../temporal/client';
import type { Config } from '../../config/config';
import { loadConfig } from '../../config/config';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import { dropDatabase } from '../../db/connection';
import type { DemoCredential } from '../../db/seed/demo';
import { activitiesFor, createWorker } from '../../worker/create-worker';
import type { MetricsListener } from '../../telemetry/metrics';
import { createMetricsRegistry, startMetricsListener } from '../../telemetry/metrics';
import type { WorkerMetrics } from '../../worker/metrics';
import { createWorkerMetrics } from '../../worker/metrics';
import {
  copyTemplate,
  installRuntime,
  namespaceName,
  registerNamespace,
  sharedStack,
  sharedWorkflowBundle,
  throwAwayDatabaseUrl,
} from './shared-stack';

export { throwAwayDatabaseUrl };

/**
 * The real stack the integration tests talk to: a throw-away MariaDB database (a copy of the run's
 * migrated and seeded template), a namespace of its own on the run's Temporal dev server, a worker,
 * and the API on a free port (see shared-stack.ts for what the files of a run share).
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

export function testEnvironment(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: throwAwayDatabaseUrl(),
    TOKEN_SIGNING_KEY: randomBytes(32).toString('base64'),
    // The template's API secrets are hashed with the run's key.
    API_SECRET_HASH_KEY: sharedStack().apiSecretHashKey,
    TEMPORAL_ADDRESS: sharedStack().temporalAddress,
    TEMPORAL_NAMESPACE: namespaceName(),
    TEMPORAL_TASK_QUEUE: `ixapi-test-${randomBytes(3).toString('hex')}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HEALTH_PROBE_TIMEOUT_MS: '1500',
    LAB_CROSS_CONNECT_DELAY_MS: '300',
    STATS_SAMPLE_INTERVAL_S: '1',
    // The suite sends thousands of requests from one address and a few accounts: no limit applies
    // (counting them would be half the database's statements); test/integration/rate-limits.test.ts
    // and metrics.test.ts start APIs of their own with limits, and reach them.
    RATE_LIMIT_AUTH_PER_ADDRESS: '0',
    RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '0',
    RATE_LIMIT_AUTH_FAILURES_PER_KEY: '0',
    RATE_LIMIT_PER_ACCOUNT: '0',
    RATE_LIMIT_PER_ADDRESS: '0',
    ...overrides,
  };
}

export async function startStack(): Promise<TestStack> {
  installRuntime();
  const env = testEnvironment();
  const config = loadConfig(env);
  const logger = pino({ level: config.logLevel });
  const temporal = await TestWorkflowEnvironment.createFromExistingServer({
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
  });
  await Promise.all([
    registerNamespace(temporal.connection, config.temporalNamespace),
    copyTemplate(config.databaseUrl),
  ]);
  const db = openDatabase({
    url: config.databaseUrl,
    apiSecretHashKey: config.apiSecretHashKey,
    quotas: config.quotas,
  });
  const credentials = sharedStack().credentials;
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
 * Starts the traffic collector on the stack, as the worker does in production. Only files about
 * statistics ask for it: sampling every port each second would keep the database and the Temporal
 * server busy under every other file for nothing.
 */
export async function collectTraffic(): Promise<void> {
  const { api, config } = stack();
  await startTrafficCollector(api.temporal.client, {
    taskQueue: config.temporalTaskQueue,
    intervalSeconds: config.statsSampleIntervalSeconds,
  });
}

async function newWorker(temporal: TestWorkflowEnvironment, config: Config, db: Database): Promise<Worker> {
  return createWorker({
    workflowBundle: sharedWorkflowBundle(),
    connection: temporal.nativeConnection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    activities: activitiesFor(db, config, workerSeries),
  });
}

/**
 * From now on the stack's workflows run on a worker whose activities have `settings` over the
 * stack's config (another device driver, say), or on none with `null`, until the next call; `{}`
 * gives the usual worker back. Workflows carry on from their histories on whichever runs.
 */
export function setWorker(settings: Partial<Config> | null): Promise<void> {
  return switchWorker(stack(), settings);
}

async function switchWorker(running: TestStack, settings: Partial<Config> | null): Promise<void> {
  if (workerRun) {
    running.worker.shutdown();
    await workerRun;
    workerRun = undefined;
  }
  if (settings === null) return;
  running.worker = await newWorker(running.temporal, { ...running.config, ...settings }, running.db);
  workerRun = running.worker.run();
}

/**
 * Another API process on the stack's database and Temporal server, configured by the stack's
 * environment with `overrides` (lower limits, other keys), on a free port; stop it when done.
 * `metricsPort: 0` turns its metrics listener on at a free port (`metricsUrl`).
 */
export async function startSecondApi(
  overrides: NodeJS.ProcessEnv,
  options: {
    metricsPort?: number | null;
    sending?: { withinMs?: number; pauseMs?: number };
    families?: readonly ResourceFamily[];
  } = {},
): Promise<ApiService> {
  const running = stack();
  const config = loadConfig({ ...running.env, ...overrides });
  return startApi({
    config,
    logger: running.logger,
    db: running.db,
    port: 0,
    metricsPort: options.metricsPort,
    sending: options.sending,
    families: options.families,
  });
}

/**
 * Takes the worker away while `meanwhile` runs, then starts a new one: workflows must carry on
 * from their histories, as after a worker crash.
 */
export async function withoutWorker(meanwhile: () => Promise<void>): Promise<void> {
  await setWorker(null);
  try {
    await meanwhile();
  } finally {
    await setWorker({});
  }
}

export async function stopStack(): Promise<void> {
  const running = current;
  current = undefined;
  if (!running) return;
  // Every step runs even when an earlier one fails, so no server or database outlives the run.
  const steps: Array<() => Promise<unknown>> = [
    () => running.api.stop(),
    () => switchWorker(running, null),
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
