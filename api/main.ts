// First: tracing instruments the modules loaded after it.
import { tracing } from './tracing';

import { loadConfigOrExit } from '../config/config';
import { openDatabase } from '../db';
import { createLogger } from '../telemetry/logger';
import { startApi } from './server';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  const db = openDatabase({
    url: config.databaseUrl,
    poolMax: config.databasePoolMax,
    apiSecretHashKey: config.apiSecretHashKey,
    quotas: config.quotas,
  });
  const api = await startApi({ config, logger, db });
  logger.info({ url: api.url, metrics: api.metricsUrl, tracing: tracing.enabled }, 'API listening');

  // SIGTERM (a deploy, a scale-down): stop taking connections, let requests under way finish within
  // SHUTDOWN_TIMEOUT, then close the database. A second signal ends the process at once.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'API stopping at once');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, deadlineSeconds: config.shutdownTimeoutSeconds }, 'API stopping');
    await api.stop();
    await db.close();
    // Spans still buffered go out before the process ends.
    await tracing.shutdown().catch(() => undefined);
    logger.info('API stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`API failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
