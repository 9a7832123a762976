import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Counter, Histogram } from 'prom-client';
import type { Sequelize } from 'sequelize';
import type { DriverCall } from '../activities/drivers/metered-driver';
import { addDatabasePoolMetrics, createCollectionFailures, METRICS_PREFIX } from '../api/metrics';

/** Device calls take from milliseconds (a read) to minutes (a commit on a slow device). */
const DRIVER_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * The worker's own series, beside Node's defaults: device-driver calls by driver and operation (a
 * histogram, whose `_count` counts them), their failures by error code, and the database pool.
 * Temporal's own series come from the SDK runtime's exporter (TEMPORAL_METRICS_PORT).
 */
export function createWorkerMetrics(deps: { registry: Registry; sequelize: Sequelize; logger: Logger }) {
  const { registry } = deps;
  addDatabasePoolMetrics(registry, deps.sequelize, createCollectionFailures(registry, deps.logger));
  const duration = new Histogram({
    name: `${METRICS_PREFIX}driver_call_duration_seconds`,
    help: 'Time of a device-driver call, by driver and operation, failed or not',
    labelNames: ['driver', 'operation'],
    buckets: DRIVER_BUCKETS,
    registers: [registry],
  });
  const failures = new Counter({
    name: `${METRICS_PREFIX}driver_call_failures_total`,
    help: 'Device-driver calls that failed, by driver, operation and driver error code',
    labelNames: ['driver', 'operation', 'code'],
    registers: [registry],
  });
  return {
    observeDriverCall: (call: DriverCall): void => {
      duration.observe({ driver: call.driver, operation: call.operation }, call.seconds);
      if (call.failure !== undefined) {
        failures.inc({ driver: call.driver, operation: call.operation, code: call.failure });
      }
    },
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
