import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Sequelize } from 'sequelize';

/** Every series of this project starts so (Prometheus naming: one prefix per application). */
export const METRICS_PREFIX = 'ixapi_';
/** The only path the metrics listener answers. */
export const METRICS_PATH = '/metrics';

/**
 * A registry of its own per process part (so that tests may run an API and a worker in one process),
 * with Node's default metrics: CPU, memory, heap, event-loop lag, GC, handles.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRICS_PREFIX });
  return registry;
}

/**
 * Reports a failure to collect a metric: logged once per source (a scrape every few seconds would
 * flood the log otherwise) and counted every time, so that a gauge gone stale is seen.
 */
export function createCollectionFailures(registry: Registry, logger: Logger) {
  const failures = new Counter({
    name: `${METRICS_PREFIX}metrics_collection_failures_total`,
    help: 'Failures to collect a metric, by what was being collected',
    labelNames: ['source'],
    registers: [registry],
  });
  const logged = new Set<string>();
  return (source: string, error: unknown) => {
    failures.inc({ source });
    if (logged.has(source)) return;
    logged.add(source);
    logger.warn(
      { err: error instanceof Error ? error.message : String(error), source },
      'a metric could not be collected (logged once)',
    );
  };
}

export type CollectionFailures = ReturnType<typeof createCollectionFailures>;

interface PoolCounts {
  size: number;
  available: number;
  using: number;
  waiting: number;
  maxSize: number;
}

/** The connection pool of Sequelize (sequelize-pool), when it has one of that shape. */
function poolOf(sequelize: Sequelize): PoolCounts | undefined {
  const pool = (sequelize.connectionManager as unknown as { pool?: Partial<PoolCounts> }).pool;
  return pool && typeof pool.using === 'number' && typeof pool.waiting === 'number'
    ? (pool as PoolCounts)
    : undefined;
}

/**
 * The database pool's connections in use and idle, requests waiting for one, and its size limit;
 * and the transactions run again after a conflict (`conflictsRetried`: the process's count so far).
 */
export function addDatabasePoolMetrics(
  registry: Registry,
  sequelize: Sequelize,
  failed: CollectionFailures,
  conflictsRetried: () => number,
) {
  let counted = 0;
  new Counter({
    name: `${METRICS_PREFIX}db_conflicts_retried_total`,
    help: 'Transactions the database refused for a conflict (a deadlock, or a Galera certification failure) and that were run again',
    registers: [registry],
    collect() {
      const now = conflictsRetried();
      this.inc(now - counted);
      counted = now;
    },
  });
  const read = (use: (pool: PoolCounts) => void) => {
    try {
      const pool = poolOf(sequelize);
      if (pool) use(pool);
    } catch (error) {
      failed('db_pool', error);
    }
  };
  new Gauge({
    name: `${METRICS_PREFIX}db_pool_connections`,
    help: 'Database connections of the pool, by state (in_use, idle)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      read((pool) => {
        this.set({ state: 'in_use' }, pool.using);
        this.set({ state: 'idle' }, pool.available);
      });
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}db_pool_waiting_requests`,
    help: 'Requests waiting for a database connection of the pool',
    registers: [registry],
    collect() {
      read((pool) => this.set(pool.waiting));
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}db_pool_max_connections`,
    help: 'Database connections the pool opens at most (DATABASE_POOL_MAX)',
    registers: [registry],
    collect() {
      read((pool) => this.set(pool.maxSize));
    },
  });
}

export interface MetricsListener {
  server: Server;
  /** Where Prometheus scrapes it, `http://127.0.0.1:<port>/metrics` (for tests and logs). */
  url: string;
  close(): Promise<void>;
}

/**
 * The process's metrics on a listener of its own, never on the API's: `GET /metrics` in the
 * Prometheus text format, 404 for anything else.
 */
export async function startMetricsListener(options: {
  /** What the listener renders: a registry, or anything that renders like one (the API's primary). */
  registry: { metrics(): Promise<string>; contentType: string };
  host: string;
  port: number;
  logger: Logger;
}): Promise<MetricsListener> {
  const { registry, logger } = options;
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'metrics could not be rendered');
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    server,
    url: `http://127.0.0.1:${port}${METRICS_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
