import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { TRAFFIC_COLLECTOR_WORKFLOW_ID } from '../../domain/statistics';
import type { TrafficCollectorStatus } from '../../workflows/traffic-statistics';
import { settleConnections } from '../support/connections';
import { configOrder, FRA_LAN, reaches } from '../support/exchange-lan';
import { recordHistory } from '../support/histories';
import { login, request } from '../support/http';
import { collectTraffic, stack } from '../support/stack';
import { connectionFor, endsNow, serviceOrder } from '../support/virtual-circuits';
import { provisioningWorkflowId } from '../../db/repositories/connection-store';
import { eventually } from '../support/wait';

const SPREE = 'acc-spree-networks';
const WINDOWS = ['PT5M', 'PT1H', 'P1D', 'P7D', 'P30D', 'P1Y'];

/** How many samples each subject has, and the newest instant they all share. */
async function samplesOf(subjects: string[]): Promise<{ fewest: number; newest: Date | null }> {
  const rows = await stack().db.sequelize.query<{ subject_id: string; n: number; newest: Date }>(
    `SELECT subject_id, COUNT(*) AS n, MAX(sampled_at) AS newest FROM traffic_samples
      WHERE subject_id IN (:subjects) GROUP BY subject_id`,
    { replacements: { subjects }, type: QueryTypes.SELECT },
  );
  if (rows.length < subjects.length) return { fewest: 0, newest: null };
  return {
    fewest: Math.min(...rows.map((row) => Number(row.n))),
    newest: new Date(Math.min(...rows.map((row) => new Date(row.newest).getTime()))),
  };
}

/** The window of the last minute the subjects were all sampled in: from their latest first sample on. */
async function sharedWindow(subjects: string[]): Promise<{ start: string; end: string }> {
  const { newest } = await samplesOf(subjects);
  const [{ first }] = await stack().db.sequelize.query<{ first: Date }>(
    `SELECT MAX(first) AS first FROM (SELECT MIN(sampled_at) AS first FROM traffic_samples
       WHERE subject_id IN (:subjects) GROUP BY subject_id) firsts`,
    { replacements: { subjects }, type: QueryTypes.SELECT },
  );
  return {
    start: new Date(Math.max(newest!.getTime() - 60_000, new Date(first).getTime())).toISOString(),
    end: newest!.toISOString(),
  };
}

const propertyNames = (response: { body: { properties?: Array<{ name: string }> } }) =>
  (response.body.properties ?? []).map((p) => p.name);

describe('traffic statistics', function () {
  // Provisioning started here must not change collections under the tests that follow.
  after(() => settleConnections());
  this.timeout(90_000);
  let token: string;
  let other: string;
  let connection: { id: string; ports: string[] };

  before(async function () {
    this.timeout(90_000);
    await collectTraffic();
    token = (await login('customer', 0)).accessToken;
    other = (await login('customer', 1)).accessToken;
    const created = await request('POST', '/connections', {
      token,
      body: {
        managing_account: SPREE,
        consuming_account: SPREE,
        billing_account: SPREE,
        role_assignments: ['ra-spree-networks-implementation', 'ra-spree-networks-noc'],
        product_offering: 'po-connection-fra-10g',
        mode: 'lag_lacp',
        lacp_timeout: 'fast',
        port_quantity: 2,
        subscriber_side_demarcs: ['cage 9, panel 2, ports 1-2'],
        external_ref: 'statistics',
      },
    });
    assert.equal(created.status, 201, created.text);
    connection = await eventually(
      'the connection in production',
      async () => {
        const read = await request('GET', `/connections/${created.body.id}`, { token });
        return read.body.state === 'production' ? (read.body as typeof connection) : undefined;
      },
      60_000,
    );
    // The collector samples every second in the test stack: wait for a few rounds.
    await eventually(
      'samples of the connection and its ports',
      async () => ((await samplesOf([connection.id, ...connection.ports])).fewest >= 4 ? true : undefined),
      60_000,
      250,
    );
  });

  it('aggregates the traffic of a port and of a connection over every sliding window', async () => {
    for (const path of [
      `/connections/${connection.id}/statistics`,
      ...connection.ports.map((port) => `/ports/${port}/statistics`),
    ]) {
      const response = await request('GET', path, { token });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(Object.keys(response.body.aggregates), WINDOWS, path);
      for (const [key, aggregate] of Object.entries<any>(response.body.aggregates)) {
        assert.ok(aggregate.accuracy > 0 && aggregate.accuracy <= 1, `${path} ${key}: ${aggregate.accuracy}`);
        assert.ok(aggregate.average_ops_in > 0 && aggregate.average_ops_out > 0, `${path} ${key}`);
        assert.ok(aggregate.average_pps_in > 0 && aggregate.average_pps_out > 0, `${path} ${key}`);
        assert.ok(aggregate.maximum_ops_in >= aggregate.average_ops_in, `${path} ${key}`);
        assert.ok(Date.parse(aggregate.next_update_at) > Date.parse(aggregate.created_at));
        assert.equal(aggregate.end, aggregate.created_at);
      }
      if (path.startsWith('/ports/')) {
        assert.equal(response.body.light_levels_tx.length, 1, 'one channel');
        assert.equal(response.body.light_levels_rx.length, 1);
      } else {
        assert.equal(response.body.light_levels_tx, undefined);
      }
    }
  });

  it('shows a connection carrying what its ports carry, over a window the client names', async () => {
    const { newest } = await samplesOf([connection.id, ...connection.ports]);
    // The window begins once the connection carried traffic: its ports may have served an earlier
    // connection just before, whose traffic and quiet spell the connection never carried.
    const [{ first }] = await stack().db.sequelize.query<{ first: Date }>(
      'SELECT MIN(sampled_at) AS first FROM traffic_samples WHERE subject_id = :id',
      { replacements: { id: connection.id }, type: QueryTypes.SELECT },
    );
    const end = newest!.toISOString();
    const start = new Date(Math.max(newest!.getTime() - 60_000, new Date(first).getTime())).toISOString();
    const custom = async (path: string): Promise<Record<string, number | string>> => {
      const response = await request(
        'GET',
        `${path}/statistics?start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}`,
        { token },
      );
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(Object.keys(response.body.aggregates), ['custom']);
      const aggregate = response.body.aggregates.custom as Record<string, number | string>;
      assert.deepEqual([aggregate.start, aggregate.end], [start, end]);
      assert.ok(Number(aggregate.accuracy) > 0);
      return aggregate;
    };
    const whole = await custom(`/connections/${connection.id}`);
    const parts = await Promise.all(connection.ports.map((port) => custom(`/ports/${port}`)));
    for (const figure of ['average_ops_in', 'average_ops_out', 'average_pps_in', 'average_pps_out']) {
      const sum = parts.reduce((total, part) => total + Number(part[figure]), 0);
      assert.ok(Number(whole[figure]) > 0, figure);
      assert.ok(
        Math.abs(Number(whole[figure]) - sum) <= parts.length,
        `${figure}: the connection ${whole[figure]}, its ports ${sum}`,
      );
    }
  });

  it("shows a network service carrying what the caller's configs of it carry, and others none of it", async () => {
    const configs: string[] = [];
    for (const external_ref of ['statistics-1', 'statistics-2']) {
      const created = await request('POST', '/network-service-configs', {
        token,
        body: configOrder(connection.id, { listed: false, external_ref }),
      });
      assert.equal(created.status, 201, created.text);
      configs.push(created.body.id as string);
    }
    for (const id of configs) await reaches(token, `/network-service-configs/${id}`, 'production');
    await eventually(
      'samples of both configs',
      async () => ((await samplesOf(configs)).fewest >= 4 ? true : undefined),
      60_000,
      250,
    );
    const { start, end } = await sharedWindow(configs);
    const window = `start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}`;
    const custom = async (path: string, as = token): Promise<Record<string, number | string>> => {
      const response = await request('GET', `${path}/statistics?${window}`, { token: as });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(Object.keys(response.body.aggregates), ['custom']);
      return response.body.aggregates.custom as Record<string, number | string>;
    };
    const service = await custom(`/network-services/${FRA_LAN}`);
    const parts = await Promise.all(configs.map((id) => custom(`/network-service-configs/${id}`)));
    assert.deepEqual([service.start, service.end], [start, end]);
    assert.ok(Number(service.accuracy) > 0);
    for (const figure of ['average_ops_in', 'average_ops_out', 'average_pps_in', 'average_pps_out']) {
      const sum = parts.reduce((total, part) => total + Number(part[figure]), 0);
      assert.ok(
        parts.every((part) => Number(part[figure]) > 0),
        figure,
      );
      assert.ok(
        Math.abs(Number(service[figure]) - sum) <= parts.length,
        `${figure}: the service ${service[figure]}, its configs ${sum}`,
      );
    }
    // The largest rate of the two together is at least either's.
    for (const part of parts) assert.ok(Number(service.maximum_ops_in) >= Number(part.maximum_ops_in));
    // Every sliding window, too.
    const sliding = await request('GET', `/network-services/${FRA_LAN}/statistics`, { token });
    assert.equal(sliding.status, 200, sliding.text);
    assert.deepEqual(Object.keys(sliding.body.aggregates), WINDOWS);
    assert.ok(sliding.body.aggregates.PT5M.average_ops_in > 0);
    assert.equal(sliding.body.light_levels_tx, undefined);
    // The other customer sees the exchange LAN, but none of Spree's traffic on it.
    const theirs = await custom(`/network-services/${FRA_LAN}`, other);
    assert.equal(theirs.accuracy, 0);
    assert.equal(theirs.average_ops_in, 0);
    assert.equal(theirs.maximum_ops_in, null);
  });

  it('refuses malformed, lonely, inverted and over-long windows, naming the parameter', async () => {
    for (const path of [
      `/connections/${connection.id}/statistics`,
      `/network-services/${FRA_LAN}/statistics`,
    ])
      await refusesBadWindows(path);
  });

  async function refusesBadWindows(path: string) {
    const cases: Array<[string, string[]]> = [
      ['start=yesterday&end=2026-01-01T00:00:00Z', ['start']],
      ['start=2026-02-30T00:00:00Z&end=2026-03-01T00:00:00Z', ['start']],
      ['start=2026-01-01T00:00:00Z&end=2026-01-02', ['end']],
      ['start=2026-01-01T00:00:00Z', ['end']],
      ['end=2026-01-01T00:00:00Z', ['start']],
      ['start=2026-01-01T00:00:00Z&end=2026-01-01T00:00:00Z', ['end']],
      ['start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z', ['end']],
      ['start=2025-01-01T00:00:00Z&end=2026-01-02T00:00:00Z', ['end']],
    ];
    for (const [query, names] of cases) {
      const response = await request('GET', `${path}?${query}`, { token });
      assert.equal(response.status, 400, `${query}: ${response.text}`);
      assert.match(response.body.type, /validation-error/);
      assert.deepEqual(propertyNames(response), names, query);
    }
    const offset = await request(
      'GET',
      `${path}?start=2026-01-01T01:00:00%2B01:00&end=2026-01-01T01:00:00Z`,
      { token },
    );
    assert.equal(offset.status, 200, offset.text);
    assert.equal(offset.body.aggregates.custom.start, '2026-01-01T00:00:00.000Z');
  }

  it('is not found for anybody who may not read the port, connection or service', async () => {
    // A private multipoint service of the other customer's, which nobody else may join.
    const circuit = await request('POST', '/network-services', {
      token: other,
      body: serviceOrder('thames', 'mp2mp_vc', {
        product_offering: 'po-mp2mp-vc-fra',
        display_name: 'Thames private',
      }),
    });
    assert.equal(circuit.status, 201, circuit.text);
    const ofCircuit = `/network-services/${circuit.body.id}/statistics`;
    for (const path of [
      `/connections/${connection.id}/statistics`,
      `/ports/${connection.ports[0]}/statistics`,
      '/ports/no-such-port/statistics',
      '/connections/no-such-connection/statistics',
    ]) {
      const response = await request('GET', path, { token: other });
      assert.equal(response.status, 404, `${path}: ${response.text}`);
    }
    for (const path of [ofCircuit, '/network-services/no-such-service/statistics']) {
      const response = await request('GET', `${path}?start=yesterday`, { token });
      assert.equal(response.status, 404, `${path}: ${response.text}`);
      assert.match(response.body.type, /not-found/);
    }
    // Its owner reads it: it carries nothing yet.
    const own = await request('GET', ofCircuit, { token: other });
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.aggregates.PT1H.accuracy, 0);
  });

  it("shows a port's next holder none of the traffic it carried for the one before", async () => {
    // Spree's standalone connection carries traffic through its one port, then goes.
    const portOf = async (as: string, id: string) => {
      const read = await request('GET', `/connections/${id}`, { token: as });
      assert.equal(read.status, 200, read.text);
      return (read.body.ports as string[])[0];
    };
    const spreeConnection = await connectionFor(token, 'spree');
    const port = await portOf(token, spreeConnection);
    await eventually(
      "samples of Spree's port",
      async () => ((await samplesOf([port])).fewest >= 3 ? true : undefined),
      60_000,
      250,
    );
    const spreeWindow = await sharedWindow([port]);
    const mine = await request(
      'GET',
      `/ports/${port}/statistics?start=${encodeURIComponent(spreeWindow.start)}&end=${encodeURIComponent(spreeWindow.end)}`,
      { token },
    );
    assert.equal(mine.status, 200, mine.text);
    assert.ok(mine.body.aggregates.custom.average_ops_in > 0, mine.text);
    const gone = await request('DELETE', `/connections/${spreeConnection}`, { token });
    assert.equal(gone.status, 202, gone.text);
    await endsNow(token, `/connections/${spreeConnection}`, provisioningWorkflowId(spreeConnection));
    const spreeLast = (await samplesOf([port])).newest!;

    // The next order of the offering is given the same port: the lowest free one of the fullest device.
    const thamesConnection = await connectionFor(other, 'thames');
    assert.equal(await portOf(other, thamesConnection), port, 'Thames is given the port Spree gave back');
    await eventually(
      "samples of Thames's port",
      async () => {
        const [{ n }] = await stack().db.sequelize.query<{ n: number }>(
          'SELECT COUNT(*) AS n FROM traffic_samples WHERE subject_id = :port AND sampled_at > :spreeLast',
          { replacements: { port, spreeLast }, type: QueryTypes.SELECT },
        );
        return Number(n) >= 3 ? true : undefined;
      },
      60_000,
      250,
    );
    const statistics = async (query = '') => {
      const response = await request('GET', `/ports/${port}/statistics${query}`, { token: other });
      assert.equal(response.status, 200, response.text);
      return response.body.aggregates as Record<string, Record<string, number | string | null>>;
    };
    // Over Spree's time, Thames sees nothing; over every sliding window, its own traffic only.
    const earlier = (
      await statistics(
        `?start=${encodeURIComponent(spreeWindow.start)}&end=${encodeURIComponent(spreeLast.toISOString())}`,
      )
    ).custom;
    assert.equal(earlier.accuracy, 0, JSON.stringify(earlier));
    assert.equal(earlier.average_ops_in, 0);
    assert.equal(earlier.maximum_ops_in, null);
    for (const [key, aggregate] of Object.entries(await statistics())) {
      assert.ok(Number(aggregate.average_ops_in) > 0, `${key}: ${JSON.stringify(aggregate)}`);
      for (const at of ['maximum_in_at', 'maximum_out_at'])
        assert.ok(Date.parse(String(aggregate[at])) > spreeLast.getTime(), `${key} ${at}: ${aggregate[at]}`);
    }
    // And Spree, no longer holding it, sees nothing of the port at all.
    assert.equal((await request('GET', `/ports/${port}/statistics`, { token })).status, 404);
  });

  it('shows operators how sampling goes', async () => {
    const handle = stack().api.temporal.client.workflow.getHandle(TRAFFIC_COLLECTOR_WORKFLOW_ID);
    const status = await handle.query<TrafficCollectorStatus>('trafficCollectorStatus');
    assert.equal(status.intervalSeconds, 1);
    assert.ok(status.rounds > 0);
    assert.ok(status.lastRound && status.lastRound.sampled > 0, JSON.stringify(status));
    await recordHistory('collectTrafficStatistics', 'sampling', TRAFFIC_COLLECTOR_WORKFLOW_ID);
  });

  it('gives up a round that keeps failing, says why, and samples again in the next one', async () => {
    const handle = stack().api.temporal.client.workflow.getHandle(TRAFFIC_COLLECTOR_WORKFLOW_ID);
    const status = () => handle.query<TrafficCollectorStatus>('trafficCollectorStatus');
    const { sequelize } = stack().db;
    // Without the samples' table every try of a round fails.
    await sequelize.query('RENAME TABLE traffic_samples TO traffic_samples_away');
    let failed: TrafficCollectorStatus;
    try {
      failed = await eventually(
        'a round given up',
        async () => {
          const now = await status();
          return now.lastError ? now : undefined;
        },
        60_000,
        250,
      );
    } finally {
      await sequelize.query('RENAME TABLE traffic_samples_away TO traffic_samples');
    }
    assert.match(failed.lastError!, /traffic_samples/);
    await eventually(
      'a round that succeeds again',
      async () => {
        const now = await status();
        return now.lastError === null && now.rounds > failed.rounds ? true : undefined;
      },
      60_000,
      250,
    );
    await recordHistory('collectTrafficStatistics', 'error-retry', TRAFFIC_COLLECTOR_WORKFLOW_ID);
  });
});
