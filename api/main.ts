// First: tracing instruments the modules loaded after it.
import { tracing } from './tracing';

import cluster from 'node:cluster';
import { loadConfigOrExit } from '../config/config';
import { openDatabase } from '../db';
import { createLogger } from '../telemetry/logger';
import { joinPrimary, runPrimary, STOP_MESSAGE } from './cluster';
import { startApi } from './server';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  // Several processes (API_PROCESSES): this one becomes their primary and serves no API itself.
  if (config.apiProcesses > 1 && cluster.isPrimary) {
    const code = await runPrimary(config, logger);
    await tracing.shutdown().catch(() => undefined);
    logger.info('API stopped');
    process.exit(code);
  }
  const ofPrimary = cluster.isWorker;
  const db = openDatabase({
    url: config.databaseUrl,
    poolMax: config.databasePoolMax,
    apiSecretHashKey: config.apiSecretHashKey,
    quotas: config.quotas,
  });
  const starting = startApi({ config, logger, db, metricsToPrimary: ofPrimary ? joinPrimary : undefined });

  // SIGTERM (a deploy, a scale-down), or the primary asking: stop taking connections, let requests
  // under way finish within SHUTDOWN_TIMEOUT, then close the database. A second signal ends the
  // process at once.
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) {
      if (reason === STOP_MESSAGE) return;
      logger.warn({ signal: reason }, 'API stopping at once');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal: reason, deadlineSeconds: config.shutdownTimeoutSeconds }, 'API stopping');
    await (await starting).stop();
    await db.close();
    // Spans still buffered go out before the process ends.
    await tracing.shutdown().catch(() => undefined);
    logger.info(ofPrimary ? 'API process stopped' : 'API stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  if (ofPrimary) {
    process.on('message', (message) => {
      if (message === STOP_MESSAGE) void stop(STOP_MESSAGE);
    });
    // A terminal's Ctrl-C reaches the primary too, which asks every process to stop.
    process.on('SIGINT', () => undefined);
  } else process.on('SIGINT', () => void stop('SIGINT'));

  const api = await starting;
  if (ofPrimary) logger.info({ url: api.url, pid: process.pid }, 'API process listening');
  else logger.info({ url: api.url, metrics: api.metricsUrl, tracing: tracing.enabled }, 'API listening');
}

main().catch((error: unknown) => {
  process.stderr.write(`API failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
