import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Sequelize } from 'sequelize';
import { addDatabasePoolMetrics, createCollectionFailures, METRICS_PREFIX } from '../telemetry/metrics';
import type { HealthReport } from './health';
import { conflictsRetried } from '../db/unit-of-work';

/** The operation label of a request no IX-API operation took (unknown paths, methods, the docs). */
export const UNROUTED = 'unrouted';

/** Request durations in seconds, from a cached read to a slow write. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `2xx`, `4xx`, `5xx`: the status as a label of five values at most. */
export function statusClassOf(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

/** One finished request, as the API's request metrics take it. */
export interface ObservedRequest {
  /** The IX-API operation id that took the request; undefined when none did. */
  operationId: string | undefined;
  status: number;
  seconds: number;
  /** The problem type name of a problem answer (`not-found`), undefined for other answers. */
  problemType: string | undefined;
}

/** What the API counts as it goes: nothing here reads the database. */
export interface RequestMetrics {
  observeRequest: (request: ObservedRequest) => void;
  countToken: (operationId: string, outcome: 'issued' | 'refused') => void;
  countRateLimitRefusal: (limit: string) => void;
}

/** Where the outbox backlog is read from at scrape time. */
export interface OutboxBacklog {
  backlog(): Promise<{ undelivered: number; oldest: Date | null }>;
}

/**
 * The API's series: requests by operation and status class, problems by type, tokens, rate-limit
 * refusals, and at scrape time the outbox backlog (one indexed query), the database pool and
 * whether each dependency answers (the health check's probes). Every recording swallows its own
 * errors: a metric never breaks a request.
 */
export function createApiMetrics(deps: {
  registry: Registry;
  sequelize: Sequelize;
  outbox: OutboxBacklog;
  /** The health check of `GET /health`, whose probes say which dependencies answer. */
  health?: () => Promise<HealthReport>;
  logger: Logger;
  now?: () => number;
}): RequestMetrics {
  const { registry } = deps;
  const now = deps.now ?? Date.now;
  const failed = createCollectionFailures(registry, deps.logger);
  addDatabasePoolMetrics(registry, deps.sequelize, failed, conflictsRetried);
  const duration = new Histogram({
    name: `${METRICS_PREFIX}http_request_duration_seconds`,
    help: `Time to answer a request, by IX-API operation id ("${UNROUTED}" for none) and status class`,
    labelNames: ['operation', 'status_class'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const problems = new Counter({
    name: `${METRICS_PREFIX}http_problems_total`,
    help: 'Problem answers, by problem type name (not-found, validation-error, ...)',
    labelNames: ['type'],
    registers: [registry],
  });
  const tokens = new Counter({
    name: `${METRICS_PREFIX}auth_tokens_total`,
    help: 'Token pairs issued, and requests for one refused for their credentials or refresh token',
    labelNames: ['operation', 'outcome'],
    registers: [registry],
  });
  const refusals = new Counter({
    name: `${METRICS_PREFIX}rate_limit_refusals_total`,
    help: 'Requests refused by a rate limit, by limit',
    labelNames: ['limit'],
    registers: [registry],
  });

  // Both outbox gauges are collected in the same scrape: they share one query (and one failure).
  let reading: Promise<{ undelivered: number; oldest: Date | null } | undefined> | undefined;
  const readBacklog = () => {
    reading ??= deps.outbox
      .backlog()
      .catch((error: unknown) => {
        failed('outbox', error);
        return undefined;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  new Gauge({
    name: `${METRICS_PREFIX}outbox_undelivered_messages`,
    help: 'Workflow starts and signals written to the outbox and not delivered to Temporal yet',
    registers: [registry],
    // Every API process reads the same table: several processes' series are not summed (api/cluster.ts).
    aggregator: 'max',
    async collect() {
      const backlog = await readBacklog();
      if (backlog) this.set(backlog.undelivered);
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}outbox_oldest_undelivered_age_seconds`,
    help: 'Age of the oldest undelivered outbox message (0 when none waits)',
    registers: [registry],
    // Every API process reads the same table: several processes' series are not summed (api/cluster.ts).
    aggregator: 'max',
    async collect() {
      const backlog = await readBacklog();
      if (backlog) this.set(backlog.oldest ? Math.max(0, (now() - backlog.oldest.getTime()) / 1000) : 0);
    },
  });

  const { health } = deps;
  if (health)
    new Gauge({
      name: `${METRICS_PREFIX}dependency_up`,
      help: 'Whether a dependency (database, temporal) answered its health probe at scrape time: 1 or 0',
      labelNames: ['dependency'],
      registers: [registry],
      // Up only where every API process reaches it (api/cluster.ts).
      aggregator: 'min',
      async collect() {
        try {
          const report = await health();
          for (const [key, [check]] of Object.entries(report.checks)) {
            this.set({ dependency: key.split(':')[0] }, check?.status === 'pass' ? 1 : 0);
          }
        } catch (error) {
          failed('dependencies', error);
        }
      },
    });

  const guarded =
    <A extends unknown[]>(source: string, record: (...args: A) => void) =>
    (...args: A) => {
      try {
        record(...args);
      } catch (error) {
        failed(source, error);
      }
    };
  return {
    observeRequest: guarded('http', (request: ObservedRequest) => {
      const operation = request.operationId ?? UNROUTED;
      duration.observe({ operation, status_class: statusClassOf(request.status) }, request.seconds);
      if (request.problemType !== undefined) problems.inc({ type: request.problemType });
    }),
    countToken: guarded('tokens', (operation: string, outcome: 'issued' | 'refused') => {
      tokens.inc({ operation, outcome });
    }),
    countRateLimitRefusal: guarded('rate_limits', (limit: string) => {
      refusals.inc({ limit });
    }),
  };
}

/** What the request measurement reads from `res.locals`, set where operations and problems are known. */
export interface MeasuredLocals {
  operationId?: string;
  problemType?: string;
}

/** Observes every request once its answer is sent: duration, operation id, status, problem type. */
export function measureRequests(metrics: RequestMetrics): RequestHandler {
  return (_req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const locals = res.locals as MeasuredLocals;
      metrics.observeRequest({
        operationId: locals.operationId,
        status: res.statusCode,
        seconds: Number(process.hrtime.bigint() - start) / 1e9,
        problemType: locals.problemType,
      });
    });
    next();
  };
}
