import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Sequelize } from 'sequelize';
import type { ProductionTimer } from '../activities/device-work';
import type { ResourceFigures } from '../db/resource-figures';
import { createResourceFigures } from '../db/resource-figures';
import type { DriverCall } from '../drivers/metered-driver';
import type { CollectionFailures } from '../telemetry/metrics';
import { addDatabasePoolMetrics, createCollectionFailures, METRICS_PREFIX } from '../telemetry/metrics';
import type { State } from '../domain/states';
import { conflictsRetried } from '../db/unit-of-work';

/** Device calls take from milliseconds (a read) to minutes (a commit on a slow device). */
const DRIVER_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * From an order to production: seconds for a config on a running connection, minutes for a
 * connection whose cross-connect the exchange makes, days to weeks for one waiting on the customer.
 */
const PRODUCTION_BUCKETS = [
  1,
  5,
  15,
  30,
  60,
  300,
  900,
  1800,
  3600,
  4 * 3600,
  86400,
  3 * 86400,
  7 * 86400,
  30 * 86400,
];

/**
 * Resources by kind and state, and connections waiting for the customer's cross-connect, read from
 * the database when Prometheus scrapes (one grouped query per table over their `state` index). Every
 * worker replica reports the same figures: aggregate them with `max`, never `sum`.
 */
function addResourceGauges(registry: Registry, figures: ResourceFigures, failed: CollectionFailures) {
  new Gauge({
    name: `${METRICS_PREFIX}resources`,
    help: 'Stateful resources by type and IX-API state, read from the database (the same on every worker)',
    labelNames: ['type', 'state'],
    registers: [registry],
    async collect() {
      try {
        const counts = await figures.countsByState();
        // A state no resource holds any more reads 0, not its last count.
        this.reset();
        for (const { kind, state, count } of counts) this.set({ type: kind, state }, count);
      } catch (error) {
        failed('resources', error);
      }
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}cross_connects_awaiting_subscriber`,
    help: "Connections waiting for the customer's side of the cross-connect (LOA or cross-connect not in yet)",
    registers: [registry],
    async collect() {
      try {
        this.set(await figures.crossConnectsAwaitingSubscriber());
      } catch (error) {
        failed('cross_connects', error);
      }
    },
  });
}

/**
 * Times each resource's first move to production: before a `go_live`, the resource's age and whether
 * it was ever billed (a resource back from trouble after production is not timed again) are read;
 * after it, the age is observed if it arrived. A failing read never stops the move.
 */
function productionTimer(
  figures: ResourceFigures,
  histogram: Histogram<'type'>,
  failed: CollectionFailures,
): ProductionTimer {
  return async (kind, id, event, move) => {
    if (event !== 'go_live') return move();
    let before: { age: number; billed: boolean } | undefined;
    try {
      before = await figures.ageAndBilling(kind, id);
    } catch (error) {
      failed('provisioning_duration', error);
    }
    const started = process.hrtime.bigint();
    const state: State = await move();
    if (before && !before.billed && state === 'production') {
      histogram.observe({ type: kind }, before.age + Number(process.hrtime.bigint() - started) / 1e9);
    }
    return state;
  };
}

/**
 * The worker's own series, beside Node's defaults: device-driver calls by driver and operation (a
 * histogram, whose `_count` counts them), their failures by error code and device, the time from
 * order to production, resources by kind and state, and the database pool. Temporal's own series
 * come from the SDK runtime's exporter (TEMPORAL_METRICS_PORT).
 */
export function createWorkerMetrics(deps: { registry: Registry; sequelize: Sequelize; logger: Logger }) {
  const { registry } = deps;
  const failed = createCollectionFailures(registry, deps.logger);
  addDatabasePoolMetrics(registry, deps.sequelize, failed, conflictsRetried);
  const figures = createResourceFigures(deps.sequelize);
  addResourceGauges(registry, figures, failed);
  const production = new Histogram({
    name: `${METRICS_PREFIX}provisioning_duration_seconds`,
    help: 'Time from the order of a resource to its first move to production, by type',
    labelNames: ['type'],
    buckets: PRODUCTION_BUCKETS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${METRICS_PREFIX}driver_call_duration_seconds`,
    help: 'Time of a device-driver call, by driver and operation, failed or not',
    labelNames: ['driver', 'operation'],
    buckets: DRIVER_BUCKETS,
    registers: [registry],
  });
  const failures = new Counter({
    name: `${METRICS_PREFIX}driver_call_failures_total`,
    help: 'Device-driver calls that failed, by driver, operation, driver error code and device',
    labelNames: ['driver', 'operation', 'code', 'device'],
    registers: [registry],
  });
  return {
    observeDriverCall: (call: DriverCall): void => {
      duration.observe({ driver: call.driver, operation: call.operation }, call.seconds);
      if (call.failure !== undefined) {
        failures.inc({
          driver: call.driver,
          operation: call.operation,
          code: call.failure,
          device: call.device ?? 'unknown',
        });
      }
    },
    timeProduction: productionTimer(figures, production, failed),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
