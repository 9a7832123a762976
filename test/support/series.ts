import { createMetricsRegistry } from '../../telemetry/metrics';

export type SeriesType = 'counter' | 'gauge' | 'histogram';

/**
 * The service's own series (beside Node's defaults) with their types: what docs/deployment.md,
 * "9. Metrics", lists for operators, what the alert rules and the dashboard may read, and what a
 * scrape of the API and the worker must declare (test/integration/metrics.test.ts).
 */
export const PROJECT_SERIES: Readonly<Record<string, SeriesType>> = {
  ixapi_http_request_duration_seconds: 'histogram',
  ixapi_http_problems_total: 'counter',
  ixapi_auth_tokens_total: 'counter',
  ixapi_rate_limit_refusals_total: 'counter',
  ixapi_outbox_undelivered_messages: 'gauge',
  ixapi_outbox_oldest_undelivered_age_seconds: 'gauge',
  ixapi_dependency_up: 'gauge',
  ixapi_db_pool_connections: 'gauge',
  ixapi_db_pool_waiting_requests: 'gauge',
  ixapi_db_pool_max_connections: 'gauge',
  ixapi_db_conflicts_retried_total: 'counter',
  ixapi_metrics_collection_failures_total: 'counter',
  ixapi_resources: 'gauge',
  ixapi_cross_connects_awaiting_subscriber: 'gauge',
  ixapi_provisioning_duration_seconds: 'histogram',
  ixapi_driver_call_duration_seconds: 'histogram',
  ixapi_driver_call_failures_total: 'counter',
};

/** The series only the primary of several API processes declares (API_PROCESSES, api/cluster.ts). */
export const PRIMARY_SERIES: Readonly<Record<string, SeriesType>> = {
  ixapi_api_processes: 'gauge',
  ixapi_api_process_restarts_total: 'counter',
};

/**
 * Gauges every replica reads from the same tables: each reports the same number, so queries combine
 * them with max, never add them up.
 */
export const SHARED_GAUGES = [
  'ixapi_resources',
  'ixapi_cross_connects_awaiting_subscriber',
  'ixapi_outbox_undelivered_messages',
  'ixapi_outbox_oldest_undelivered_age_seconds',
] as const;

/** Types of Node's default series, as the API and the worker register them (`ixapi_process_…`, …). */
export function nodeDefaultSeries(): Record<string, SeriesType> {
  return Object.fromEntries(
    createMetricsRegistry()
      .getMetricsAsArray()
      .map((metric) => [metric.name, String(metric.type) as SeriesType]),
  );
}

/** The names Prometheus stores a series under: a histogram's bucket, count and sum, else the name. */
export function storedNames(name: string, type: SeriesType): string[] {
  return type === 'histogram' ? ['_bucket', '_count', '_sum'].map((suffix) => `${name}${suffix}`) : [name];
}
