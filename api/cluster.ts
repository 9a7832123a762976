import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import type { Config } from '../config/config';
import type { MetricsListener } from '../telemetry/metrics';
import { METRICS_PREFIX, startMetricsListener } from '../telemetry/metrics';

/**
 * Several API processes on one host (API_PROCESSES), with node:cluster: the primary process runs
 * no API of its own. It starts the API processes, which share PORT (the primary hands their
 * connections out in turn), restarts one that ends unasked, serves their metrics together on
 * METRICS_PORT, and on SIGTERM or SIGINT asks each to stop as a lone API does (requests under way
 * finish within SHUTDOWN_TIMEOUT) and ends once all have.
 */

/** The message the primary sends an API process to stop it gracefully. */
export const STOP_MESSAGE = 'ixapi:stop';

/** Restarts within RESTART_WINDOW_MS beyond which the primary gives up: a crash loop is a fault to show. */
const RESTARTS_PER_WINDOW = 5;
const RESTART_WINDOW_MS = 60_000;

/**
 * In an API process the primary started: its metrics registry answers the primary's requests for
 * them (the library answers once an aggregator exists in the process).
 */
export function joinPrimary(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry();
}

/** Runs the primary until its API processes have stopped; resolves with the exit code to end with. */
export async function runPrimary(config: Config, logger: Logger): Promise<number> {
  const count = config.apiProcesses;
  const own = new Registry();
  const running = new Gauge({
    name: `${METRICS_PREFIX}api_processes`,
    help: 'API processes on this host that are listening (API_PROCESSES asks for how many)',
    registers: [own],
  });
  const restarts = new Counter({
    name: `${METRICS_PREFIX}api_process_restarts_total`,
    help: 'API processes the primary started again after one ended unasked',
    registers: [own],
  });
  const aggregator = new AggregatorRegistry();
  const listening = new Set<number>();
  const recentRestarts: number[] = [];
  let port = 0;
  let stopping = false;
  let exitCode = 0;
  let settle: (code: number) => void = () => undefined;
  const stopped = new Promise<number>((resolve) => (settle = resolve));
  let allListening: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (allListening = resolve));
  const alive = () => Object.values(cluster.workers ?? {}).filter((worker) => worker && !worker.isDead());

  const stopAll = (reason: string, code: number) => {
    if (stopping) {
      logger.warn({ reason }, 'API processes stopping at once');
      for (const worker of alive()) worker?.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    exitCode = code;
    logger.info({ reason, deadlineSeconds: config.shutdownTimeoutSeconds }, 'API processes stopping');
    for (const worker of alive()) {
      if (worker?.isConnected()) worker.send(STOP_MESSAGE);
      else worker?.process.kill('SIGTERM');
    }
    if (!alive().length) settle(exitCode);
  };

  const start = () => {
    const worker = cluster.fork();
    worker.once('listening', (address) => {
      port = address.port;
      listening.add(worker.id);
      running.set(listening.size);
      logger.debug({ pid: worker.process.pid, port }, 'API process listening');
      if (listening.size >= count) allListening();
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    const wasListening = listening.delete(worker.id);
    running.set(listening.size);
    const pid = worker.process.pid;
    if (stopping) {
      if (code !== 0) exitCode = 1;
      logger.info({ pid, code, signal }, 'API process ended');
      if (!alive().length) settle(exitCode);
      return;
    }
    if (!wasListening) {
      // One that never listened would fail the same way again: the configuration or a dependency.
      logger.error({ pid, code, signal }, 'an API process ended before it listened');
      stopAll('start-up failure', 1);
      return;
    }
    const now = Date.now();
    while (recentRestarts.length && recentRestarts[0] < now - RESTART_WINDOW_MS) recentRestarts.shift();
    if (recentRestarts.length >= RESTARTS_PER_WINDOW) {
      logger.error(
        { pid, code, signal, restarts: recentRestarts.length },
        `API processes keep ending (${RESTARTS_PER_WINDOW} restarts within ${RESTART_WINDOW_MS / 1000} s): giving up`,
      );
      stopAll('crash loop', 1);
      return;
    }
    recentRestarts.push(now);
    restarts.inc();
    logger.error({ pid, code, signal }, 'an API process ended unasked; starting another');
    start();
  });

  process.on('SIGINT', () => stopAll('SIGINT', 0));
  process.on('SIGTERM', () => stopAll('SIGTERM', 0));

  for (let i = 0; i < count; i++) start();
  await Promise.race([ready, stopped]);
  let metrics: MetricsListener | undefined;
  if (!stopping && config.metricsPort !== null) {
    try {
      metrics = await startMetricsListener({
        registry: {
          contentType: aggregator.contentType,
          metrics: async () => `${await aggregator.clusterMetrics()}\n${await own.metrics()}`,
        },
        host: config.metricsHost,
        port: config.metricsPort,
        logger,
      });
    } catch (error) {
      logger.error({ err: error }, 'the metrics listener could not start');
      stopAll('start-up failure', 1);
    }
  }
  if (!stopping)
    logger.info(
      { url: `http://127.0.0.1:${port}/api/v2`, metrics: metrics?.url, processes: count },
      'API listening',
    );
  const code = await stopped;
  await metrics?.close();
  return code;
}
