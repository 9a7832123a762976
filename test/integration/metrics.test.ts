import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { ApiService } from '../../api/server';
import { request } from '../support/http';
import type { Samples } from '../support/prometheus';
import { hasSeries, parseSamples, sampleOf } from '../support/prometheus';
import { PROJECT_SERIES } from '../support/series';
import { stack, startSecondApi } from '../support/stack';
import { eventually } from '../support/wait';

const SPREE = 'acc-spree-networks';
const DURATION = 'ixapi_http_request_duration_seconds';

/** A client address of a documentation network (TEST-NET-3), unknown to every other counter. */
const someAddress = () => `203.0.113.${1 + (randomBytes(1)[0] % 250)}`;

/**
 * An API replica with its metrics listener on a free port: the series it exports move with the
 * requests it answers, and the metrics are reachable only on that listener.
 */
describe('metrics', function () {
  this.timeout(120_000);
  let api: ApiService;
  before(async () => {
    api = await startSecondApi(
      { TRUST_PROXY: 'loopback', RATE_LIMIT_PER_ADDRESS: '3/1m' },
      { metricsPort: 0 },
    );
  });
  after(async () => {
    await api?.stop(1_000);
  });

  async function scrape(url = api.metricsUrl): Promise<Samples> {
    assert.ok(url, 'the metrics listener is on');
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parseSamples(await response.text());
  }

  const via = { baseUrl: '' };
  before(() => {
    via.baseUrl = api.url;
  });

  /** An access token of the first customer (Spree Networks), from this replica. */
  async function customerToken(): Promise<string> {
    const credential = stack().credentials.filter((c) => c.role === 'customer')[0];
    const login = await request('POST', '/auth/token', {
      ...via,
      body: { api_key: credential.apiKey, api_secret: credential.apiSecret },
    });
    return login.body.access_token as string;
  }

  /** A standalone 1-port connection of Spree's through this replica; `order` names the offering. */
  function orderConnection(token: string, order: Record<string, unknown>) {
    return request('POST', '/connections', {
      ...via,
      token,
      body: {
        managing_account: SPREE,
        consuming_account: SPREE,
        billing_account: SPREE,
        role_assignments: ['ra-spree-networks-implementation', 'ra-spree-networks-noc'],
        mode: 'standalone',
        port_quantity: 1,
        ...order,
      },
    });
  }

  it('exports Node defaults, the database pool and the outbox under the project prefix', async () => {
    const samples = await scrape();
    for (const name of [
      'ixapi_process_cpu_user_seconds_total',
      'ixapi_nodejs_eventloop_lag_seconds',
      'ixapi_nodejs_heap_size_used_bytes',
      'ixapi_db_pool_waiting_requests',
      'ixapi_db_pool_max_connections',
      'ixapi_outbox_undelivered_messages',
      'ixapi_outbox_oldest_undelivered_age_seconds',
    ]) {
      assert.ok(hasSeries(samples, name), name);
    }
    assert.ok(samples.has('ixapi_db_pool_connections{state="in_use"}'));
  });

  it('counts requests by operation id and status class, problems by type and tokens by outcome', async () => {
    const credential = stack().credentials.filter((c) => c.role === 'customer')[0];
    const before = await scrape();

    const issued = await request('POST', '/auth/token', {
      ...via,
      body: { api_key: credential.apiKey, api_secret: credential.apiSecret },
    });
    assert.equal(issued.status, 201, issued.text);
    const token = issued.body.access_token as string;
    const refused = await request('POST', '/auth/token', {
      ...via,
      body: { api_key: credential.apiKey, api_secret: 'x'.repeat(86) },
    });
    assert.equal(refused.status, 401, refused.text);
    const missing = await request('GET', '/connections/no-such-connection', { ...via, token });
    assert.equal(missing.status, 404, missing.text);
    const unrouted = await request('GET', '/no-such-collection', { ...via, token });
    assert.equal(unrouted.status, 404, unrouted.text);
    const list = await request('GET', '/connections', { ...via, token });
    assert.equal(list.status, 200, list.text);

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      sampleOf(after, name, labels) - sampleOf(before, name, labels);
    const issuedLabels = { operation: 'auth_token_create', outcome: 'issued' };
    assert.equal(moved('ixapi_auth_tokens_total', issuedLabels), 1);
    assert.equal(moved('ixapi_auth_tokens_total', { operation: 'auth_token_create', outcome: 'refused' }), 1);
    assert.equal(moved('ixapi_http_problems_total', { type: 'authentication-error' }), 1);
    assert.equal(moved('ixapi_http_problems_total', { type: 'not-found' }), 2);
    const count = (operation: string, status_class: string) =>
      moved(`${DURATION}_count`, { operation, status_class });
    assert.equal(count('auth_token_create', '2xx'), 1);
    assert.equal(count('auth_token_create', '4xx'), 1);
    assert.equal(count('connections_read', '4xx'), 1);
    assert.equal(count('connections_list', '2xx'), 1);
    assert.equal(count('unrouted', '4xx'), 1);
    assert.ok(moved(`${DURATION}_sum`, { operation: 'connections_list', status_class: '2xx' }) > 0);
    assert.equal(
      moved(`${DURATION}_bucket`, { operation: 'connections_list', status_class: '2xx', le: '+Inf' }),
      1,
    );
    // The raw path never becomes a label.
    assert.ok(![...after.keys()].some((key) => key.includes('no-such')), 'no path in any label');
  });

  it('counts an order, its device-driver calls in the worker, and the outbox back to zero', async () => {
    const token = await customerToken();
    const before = await scrape();
    const workerBefore = await scrape(stack().workerMetrics.url);
    const created = await orderConnection(token, {
      product_offering: 'po-connection-fra-10g',
      subscriber_side_demarcs: ['cage 9, panel 3, port 1'],
    });
    assert.equal(created.status, 201, created.text);
    const after = await scrape();
    const labels = { operation: 'connections_create', status_class: '2xx' };
    assert.equal(
      sampleOf(after, `${DURATION}_count`, labels) - sampleOf(before, `${DURATION}_count`, labels),
      1,
    );
    await eventually('the outbox relayed', async () => {
      const samples = await scrape();
      return sampleOf(samples, 'ixapi_outbox_undelivered_messages') === 0 &&
        sampleOf(samples, 'ixapi_outbox_oldest_undelivered_age_seconds') === 0
        ? true
        : undefined;
    });
    await eventually('the connection in production', async () =>
      (await request('GET', `/connections/${created.body.id}`, { ...via, token })).body.state === 'production'
        ? true
        : undefined,
    );
    const worker = await scrape(stack().workerMetrics.url);
    const calls = (operation: string) =>
      sampleOf(worker, 'ixapi_driver_call_duration_seconds_count', { driver: 'lab', operation }) -
      sampleOf(workerBefore, 'ixapi_driver_call_duration_seconds_count', { driver: 'lab', operation });
    for (const operation of ['load', 'commit', 'readOptics']) assert.ok(calls(operation) >= 1, operation);
    assert.ok(worker.has('ixapi_nodejs_eventloop_lag_seconds'));
    assert.ok(worker.has('ixapi_db_pool_connections{state="in_use"}'));
    const timed = (series: string) =>
      sampleOf(worker, series, { type: 'connection' }) -
      sampleOf(workerBefore, series, { type: 'connection' });
    assert.ok(timed('ixapi_provisioning_duration_seconds_count') >= 1, 'the way to production timed');
    assert.ok(timed('ixapi_provisioning_duration_seconds_sum') > 0);
  });

  /** The stored count of a kind of resource in a state, read the way an operator would check it. */
  async function stored(table: string, state: string): Promise<number> {
    const [row] = await stack().db.sequelize.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE state = :state`,
      { type: QueryTypes.SELECT, replacements: { state } },
    );
    return Number(row.n);
  }

  it('reports resources by type and state as the database holds them, and connections awaiting the customer', async () => {
    // Other tests' workflows may still move things: compare until a scrape and a count agree. The
    // earlier test put a connection in production; the seeded accounts are.
    for (const [type, table, state] of [
      ['connection', 'connections', 'production'],
      ['account', 'accounts', 'production'],
      ['connection', 'connections', 'decommissioned'],
    ] as const) {
      await eventually(`${type} in ${state} as stored`, async () => {
        const exported = sampleOf(await scrape(stack().workerMetrics.url), 'ixapi_resources', {
          type,
          state,
        });
        const count = await stored(table, state);
        return (state === 'production' ? exported > 0 : true) && exported === count ? true : undefined;
      });
    }

    const token = await customerToken();
    const awaiting = async () =>
      sampleOf(await scrape(stack().workerMetrics.url), 'ixapi_cross_connects_awaiting_subscriber');
    const before = await awaiting();
    // In Amsterdam the customer makes the cross-connect: the connection waits for its LOA.
    const created = await orderConnection(token, { product_offering: 'po-connection-ams-10g' });
    assert.equal(created.status, 201, created.text);
    await eventually('the connection counted as awaiting the customer', async () =>
      (await awaiting()) === before + 1 ? true : undefined,
    );
    const cancelled = await request('DELETE', `/connections/${created.body.id}`, { ...via, token });
    assert.equal(cancelled.status, 202, cancelled.text);
    await eventually('the cancelled connection no longer counted', async () =>
      (await awaiting()) === before ? true : undefined,
    );
  });

  it('declares in the API and the worker every series the guide, the alert rules and the dashboard name', async () => {
    const declared = new Map<string, string>();
    for (const url of [api.metricsUrl!, stack().workerMetrics.url]) {
      const text = await (await fetch(url)).text();
      for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) declared.set(name, type);
    }
    for (const [name, type] of Object.entries(PROJECT_SERIES)) {
      assert.equal(declared.get(name), type, `${name} is declared as a ${type}`);
    }
  });

  it('says whether the database and Temporal answer', async () => {
    const samples = await scrape();
    assert.equal(sampleOf(samples, 'ixapi_dependency_up', { dependency: 'database' }), 1);
    assert.equal(sampleOf(samples, 'ixapi_dependency_up', { dependency: 'temporal' }), 1);
  });

  it('counts rate-limit refusals by limit', async () => {
    const before = await scrape();
    const from = { baseUrl: api.url, headers: { 'x-forwarded-for': someAddress() } };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await request('GET', '/health', from)).status);
    assert.equal(statuses[3], 429, String(statuses));
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      sampleOf(after, name, labels) - sampleOf(before, name, labels);
    assert.equal(moved('ixapi_rate_limit_refusals_total', { limit: 'per_address' }), 1);
    assert.equal(moved('ixapi_http_problems_total', { type: 'too-many-requests' }), 1);
    assert.equal(moved(`${DURATION}_count`, { operation: 'api_health_read', status_class: '4xx' }), 1);
  });

  it('is not reachable through the API, and its listener answers nothing else', async () => {
    const through = await request('GET', '/metrics', { baseUrl: api.url });
    assert.equal(through.status, 404);
    assert.equal(through.body.type, 'https://errors.ix-api.net/v2/not-found.html');
    const root = await fetch(`${new URL(api.url).origin}/metrics`);
    assert.equal(root.status, 404);
    assert.match(root.headers.get('content-type') ?? '', /application\/(problem\+)?json/);
    const elsewhere = await fetch(api.metricsUrl!.replace(/\/metrics$/, '/api/v2/health'));
    assert.equal(elsewhere.status, 404);
    await elsewhere.text();
  });
});
