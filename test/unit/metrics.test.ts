import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { Sequelize } from 'sequelize';
import type { OutboxBacklog } from '../../api/metrics';
import { createApiMetrics, statusClassOf, UNROUTED } from '../../api/metrics';
import { createMetricsRegistry, startMetricsListener } from '../../telemetry/metrics';
import { parseSamples, sampleOf } from '../support/prometheus';
import { PRIMARY_SERIES, PROJECT_SERIES } from '../support/series';

/** A Sequelize as far as the pool gauges read it. */
const fakeSequelize = (pool: unknown) => ({ connectionManager: { pool } }) as unknown as Sequelize;

/** A logger that keeps what was warned. */
function recordingLogger() {
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  return { logger, warnings };
}

describe('metrics', () => {
  it("lists in the deployment guide every series of the service's own, with its type", () => {
    const guide = readFileSync(path.resolve(__dirname, '../../docs/deployment.md'), 'utf8');
    const listed = Object.fromEntries(
      [...guide.matchAll(/^\| `(ixapi_[a-z_]+)` +\| (counter|gauge|histogram) /gm)].map(([, name, type]) => [
        name,
        type,
      ]),
    );
    assert.deepEqual(listed, { ...PROJECT_SERIES, ...PRIMARY_SERIES });
  });

  it('labels statuses by class', () => {
    assert.equal(statusClassOf(200), '2xx');
    assert.equal(statusClassOf(201), '2xx');
    assert.equal(statusClassOf(404), '4xx');
    assert.equal(statusClassOf(429), '4xx');
    assert.equal(statusClassOf(503), '5xx');
    assert.equal(statusClassOf(0), 'other');
  });

  it('says at each scrape which dependencies answer their health probe', async () => {
    const registry = createMetricsRegistry();
    let temporalStatus = 'pass';
    createApiMetrics({
      registry,
      sequelize: fakeSequelize(undefined),
      outbox: { backlog: () => Promise.resolve({ undelivered: 0, oldest: null }) },
      health: () =>
        Promise.resolve({
          status: temporalStatus === 'pass' ? 'pass' : 'warn',
          version: '2',
          releaseId: 'test',
          serviceId: 'ixapi-provisioning',
          description: 'test',
          checks: {
            'database:responseTime': [{ status: 'pass' }],
            'temporal:responseTime': [{ status: temporalStatus }],
          },
        }),
      logger: pino({ level: 'silent' }),
    });
    const up = async (dependency: string) =>
      sampleOf(parseSamples(await registry.metrics()), 'ixapi_dependency_up', { dependency });
    assert.equal(await up('database'), 1);
    assert.equal(await up('temporal'), 1);
    temporalStatus = 'warn';
    assert.equal(await up('temporal'), 0);
    assert.equal(await up('database'), 1);
  });

  it('records requests by operation id, problems by type, tokens and refusals', async () => {
    const registry = createMetricsRegistry();
    const outbox: OutboxBacklog = { backlog: () => Promise.resolve({ undelivered: 0, oldest: null }) };
    const metrics = createApiMetrics({
      registry,
      sequelize: fakeSequelize(undefined),
      outbox,
      logger: pino({ level: 'silent' }),
    });
    metrics.observeRequest({
      operationId: 'connections_list',
      status: 200,
      seconds: 0.02,
      problemType: undefined,
    });
    metrics.observeRequest({ operationId: undefined, status: 404, seconds: 0.001, problemType: 'not-found' });
    metrics.observeRequest({
      operationId: 'connections_read',
      status: 404,
      seconds: 0.003,
      problemType: 'not-found',
    });
    metrics.countToken('auth_token_create', 'issued');
    metrics.countToken('auth_token_refresh', 'refused');
    metrics.countRateLimitRefusal('per_account');
    const samples = parseSamples(await registry.metrics());
    const count = 'ixapi_http_request_duration_seconds_count';
    assert.equal(sampleOf(samples, count, { operation: 'connections_list', status_class: '2xx' }), 1);
    assert.equal(sampleOf(samples, count, { operation: UNROUTED, status_class: '4xx' }), 1);
    assert.equal(sampleOf(samples, count, { operation: 'connections_read', status_class: '4xx' }), 1);
    assert.equal(
      sampleOf(samples, 'ixapi_http_request_duration_seconds_bucket', {
        operation: 'connections_list',
        status_class: '2xx',
        le: '0.025',
      }),
      1,
    );
    assert.equal(sampleOf(samples, 'ixapi_http_problems_total', { type: 'not-found' }), 2);
    assert.equal(
      sampleOf(samples, 'ixapi_auth_tokens_total', { operation: 'auth_token_create', outcome: 'issued' }),
      1,
    );
    assert.equal(
      sampleOf(samples, 'ixapi_auth_tokens_total', { operation: 'auth_token_refresh', outcome: 'refused' }),
      1,
    );
    assert.equal(sampleOf(samples, 'ixapi_rate_limit_refusals_total', { limit: 'per_account' }), 1);
    assert.ok(samples.has('ixapi_nodejs_eventloop_lag_seconds'));
  });

  it('reads the outbox backlog once per scrape, and its age from the oldest message', async () => {
    const registry = createMetricsRegistry();
    let reads = 0;
    const outbox: OutboxBacklog = {
      backlog: () => {
        reads += 1;
        return Promise.resolve({ undelivered: 3, oldest: new Date(1_000_000) });
      },
    };
    createApiMetrics({
      registry,
      sequelize: fakeSequelize({ size: 4, available: 1, using: 3, waiting: 2, maxSize: 10 }),
      outbox,
      logger: pino({ level: 'silent' }),
      now: () => 1_042_500,
    });
    const samples = parseSamples(await registry.metrics());
    assert.equal(reads, 1);
    assert.equal(sampleOf(samples, 'ixapi_outbox_undelivered_messages'), 3);
    assert.equal(sampleOf(samples, 'ixapi_outbox_oldest_undelivered_age_seconds'), 42.5);
    assert.equal(sampleOf(samples, 'ixapi_db_pool_connections', { state: 'in_use' }), 3);
    assert.equal(sampleOf(samples, 'ixapi_db_pool_connections', { state: 'idle' }), 1);
    assert.equal(sampleOf(samples, 'ixapi_db_pool_waiting_requests'), 2);
    assert.equal(sampleOf(samples, 'ixapi_db_pool_max_connections'), 10);
  });

  it('swallows failures to collect, counts them and warns once', async () => {
    const registry = createMetricsRegistry();
    const { logger, warnings } = recordingLogger();
    const outbox: OutboxBacklog = { backlog: () => Promise.reject(new Error('database gone')) };
    createApiMetrics({ registry, sequelize: fakeSequelize(undefined), outbox, logger });
    await registry.metrics();
    await registry.metrics();
    // Each scrape reads the backlog once, so each failed once; this third scrape shows the two before.
    const samples = parseSamples(await registry.metrics());
    assert.ok(sampleOf(samples, 'ixapi_metrics_collection_failures_total', { source: 'outbox' }) >= 2);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /database gone/);
  });

  it('serves GET /metrics on its own listener and nothing else', async () => {
    const registry = createMetricsRegistry();
    const listener = await startMetricsListener({
      registry,
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
    });
    try {
      const metrics = await fetch(listener.url);
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /^# HELP ixapi_/m);
      const other = await fetch(listener.url.replace(/\/metrics$/, '/'));
      assert.equal(other.status, 404);
      await other.text();
      const post = await fetch(listener.url, { method: 'POST' });
      assert.equal(post.status, 404);
      await post.text();
    } finally {
      await listener.close();
    }
  });
});
