// First: tracing instruments the modules loaded after it.
import { tracing } from './tracing';

import { NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createLogger } from '../telemetry/logger';
import {
  connectTemporal,
  connectWorkflowStarter,
  startFabricSupervisor,
  startTrafficCollector,
} from '../temporal/client';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { loadConfigOrExit, temporalAddressOf } from '../config/config';
import { TRAFFIC_COLLECTOR_WORKFLOW_ID } from '../domain/statistics';
import { FABRIC_SUPERVISOR_WORKFLOW_ID } from '../domain/supervision';
import { openDatabase } from '../db';
import type { MetricsListener } from '../telemetry/metrics';
import { createMetricsRegistry, startMetricsListener } from '../telemetry/metrics';
import { activitiesFor, createWorker } from './create-worker';
import type { WorkerMetrics } from './metrics';
import { createWorkerMetrics } from './metrics';
import { temporalLoggerFor } from './temporal-logger';

async function connectWithRetry(address: string, log: (message: string) => void): Promise<NativeConnection> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await NativeConnection.connect({ address });
    } catch (error) {
      if (attempt >= 30) throw error;
      log(`Temporal at ${address} not reachable yet (attempt ${attempt}); retrying in 2 s`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

/**
 * Makes sure the workflows of which one runs for the whole namespace run: the traffic collector,
 * and with DEVICE_DRIVER=ovs the fabric's supervisor. Whoever comes first starts them; a Temporal
 * that does not take the start now is tried again by the next worker to start.
 */
async function startSingletons(address: string, config: Config, logger: Logger): Promise<void> {
  const temporal = connectTemporal({ address, namespace: config.temporalNamespace });
  const singletons = [
    {
      what: 'traffic collector',
      workflowId: TRAFFIC_COLLECTOR_WORKFLOW_ID,
      intervalSeconds: config.statsSampleIntervalSeconds,
      start: startTrafficCollector,
    },
    ...(config.deviceDriver === 'ovs'
      ? [
          {
            what: 'fabric supervisor',
            workflowId: FABRIC_SUPERVISOR_WORKFLOW_ID,
            intervalSeconds: config.supervisionIntervalSeconds,
            start: startFabricSupervisor,
          },
        ]
      : []),
  ];
  try {
    for (const { what, workflowId, intervalSeconds, start } of singletons) {
      try {
        const started = await start(temporal.client, {
          taskQueue: config.temporalTaskQueue,
          intervalSeconds,
        });
        logger.info({ workflowId, intervalSeconds }, started ? `${what} started` : `${what} already running`);
      } catch (error) {
        logger.warn({ err: error instanceof Error ? error.message : String(error) }, `${what} not started`);
      }
    }
  } finally {
    await temporal.close();
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.logLevel, name: 'worker' });
  Runtime.install({
    // Workflow and activity log lines go into the worker's pino log with their workflow ids.
    logger: temporalLoggerFor(logger),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) },
      // The SDK's own series (task slots, poll and schedule-to-start latencies, sticky cache,
      // activity and workflow outcomes), named the Prometheus way.
      ...(config.temporalMetricsPort !== null && {
        metrics: {
          prometheus: {
            bindAddress: `${config.metricsHost}:${config.temporalMetricsPort}`,
            countersTotalSuffix: true,
            unitSuffix: true,
            useSecondsForDurations: true,
          },
        },
      }),
    },
  });
  const db = openDatabase({
    url: config.databaseUrl,
    poolMax: config.databasePoolMax,
    apiSecretHashKey: config.apiSecretHashKey,
  });
  let metrics: WorkerMetrics | undefined;
  let metricsListener: MetricsListener | undefined;
  if (config.metricsPort !== null) {
    const registry = createMetricsRegistry();
    metrics = createWorkerMetrics({ registry, sequelize: db.sequelize, logger });
    metricsListener = await startMetricsListener({
      registry,
      host: config.metricsHost,
      port: config.metricsPort,
      logger,
    });
    logger.info({ url: metricsListener.url }, 'worker metrics listening');
  }
  const address = temporalAddressOf(config);
  const connection = await connectWithRetry(address, (message) => logger.warn(message));
  const worker = await createWorker({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    activities: activitiesFor(db, config, metrics),
    shutdownGraceMs: config.shutdownTimeoutSeconds * 1000,
    cachedWorkflows: config.workerCachedWorkflows,
    tracing,
  });
  logger.info(
    {
      address,
      namespace: config.temporalNamespace,
      taskQueue: config.temporalTaskQueue,
      tracing: tracing.enabled,
    },
    'worker polling',
  );
  // The workflow messages its activities commit (a config telling its service, a rule its configs)
  // go out at once, as the API's do; what is left goes with an API's relay.
  const sending = connectWorkflowStarter({ config, outbox: db.outbox, logger });
  const stopSending = db.outbox.sendCommittedWith((message) => sending.starter.sendSoon(message));
  const collecting = startSingletons(address, config, logger);
  // The runtime's shutdown signals (SIGINT, SIGTERM) drain the worker: it takes no new tasks and lets
  // running activities finish within SHUTDOWN_TIMEOUT; run() resolves afterwards.
  await worker.run();
  stopSending();
  await sending.starter.settle();
  await sending.temporal.close();
  await collecting;
  await connection.close();
  await metricsListener?.close();
  await db.close();
  // Spans still buffered (the last activities', the workflows' through the sink) go out now.
  await tracing.shutdown().catch(() => undefined);
  logger.info('worker stopped');
}

main().catch((error: unknown) => {
  process.stderr.write(`worker failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
