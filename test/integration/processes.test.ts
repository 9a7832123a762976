import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startApi } from '../../api/server';
import { loadConfig } from '../../config/config';
import { openDatabase } from '../../db';
import { readdirSync, readFileSync } from 'node:fs';
import { login, request } from '../support/http';
import { freePort, orderAndTakeDown, startBuilt, startBuiltPair } from '../support/processes';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

describe('the production processes', function () {
  this.timeout(120_000);

  it('provision an order from the compiled API and worker, and stop cleanly on SIGTERM', async () => {
    const { worker, api, baseUrl } = await startBuiltPair();
    try {
      await orderAndTakeDown(baseUrl, 'cage 4, panel 1, port 7');
    } finally {
      worker.child.kill('SIGTERM');
      api.child.kill('SIGTERM');
    }
    assert.equal(await api.exited, 0, api.lines.slice(-5).join('\n'));
    assert.equal(await worker.exited, 0, worker.lines.slice(-5).join('\n'));
    await api.logged('API stopped');
    await worker.logged('worker stopped');
  });

  it('run as several API processes on one port: metrics together, one that ends started again, all stopped on SIGTERM', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const baseUrl = `http://127.0.0.1:${port}/api/v2`;
    const api = startBuilt('api/main.js', {
      ...process.env,
      ...stack().env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      METRICS_PORT: String(metricsPort),
      API_PROCESSES: '2',
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    let processes: number[] = [];
    try {
      await api.logged('API listening');
      processes = childrenOf(api.child.pid!);
      assert.equal(processes.length, 2, `the primary's children: ${processes.join(', ')}`);

      // Each request is answered by one of them; the primary's metrics add up what both counted.
      const token = (await login('customer', 0)).accessToken;
      for (let i = 0; i < 20; i++) {
        const read = await request('GET', '/facilities', { baseUrl, token });
        assert.equal(read.status, 200, read.text);
      }
      const series = await metricsOf(metricsUrl);
      assert.equal(series.get('ixapi_api_processes'), 2);
      assert.equal(
        series.get(
          'ixapi_http_request_duration_seconds_count{operation="facilities_list",status_class="2xx"}',
        ),
        20,
      );
      assert.equal(series.get('ixapi_db_pool_max_connections'), 20, 'two pools of DATABASE_POOL_MAX (10)');

      // One that ends unasked is started again; the other answers meanwhile.
      process.kill(processes[0], 'SIGKILL');
      const again = await eventually('another API process', () => {
        const now = childrenOf(api.child.pid!);
        return Promise.resolve(now.length === 2 && !now.includes(processes[0]) ? now : undefined);
      });
      processes = [...new Set([...processes, ...again])];
      await eventually('the new process listening', async () =>
        (await metricsOf(metricsUrl)).get('ixapi_api_processes') === 2 ? true : undefined,
      );
      assert.equal((await metricsOf(metricsUrl)).get('ixapi_api_process_restarts_total'), 1);
      for (let i = 0; i < 4; i++)
        assert.equal((await request('GET', '/facilities', { baseUrl, token })).status, 200);
    } finally {
      api.child.kill('SIGTERM');
    }
    assert.equal(await api.exited, 0, api.lines.slice(-5).join('\n'));
    await api.logged('API stopped');
    assert.equal(api.lines.filter((line) => line.includes('"msg":"API process stopped"')).length, 2);
    assert.deepEqual(processes.filter(alive), [], 'no API process outlives the primary');
  });

  describe('an API that stops', () => {
    async function runningApi() {
      const config = loadConfig(stack().env);
      const db = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
      const api = await startApi({ config, logger: stack().logger, db, port: 0 });
      const port = new URL(api.url).port;
      return { api, db, port: Number(port) };
    }

    /** A token request whose body arrives in two parts, so that it is under way while the API stops. */
    function slowRequest(port: number) {
      const body = JSON.stringify({ api_key: 'not-a-key', api_secret: 'not-a-secret' });
      const client = http.request({
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/api/v2/auth/token',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      const answer = new Promise<http.IncomingMessage>((resolve, reject) => {
        client.once('response', resolve);
        client.once('error', reject);
      });
      client.write(body.slice(0, 10));
      return { answer, finish: () => client.end(body.slice(10)) };
    }

    const refused = (port: number) =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect({ port, host: '127.0.0.1' });
        socket.once('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', () => resolve(true));
      });

    it('takes no new connections and finishes the requests under way', async () => {
      const { api, db, port } = await runningApi();
      try {
        const under = slowRequest(port);
        // The request has reached the server before it stops.
        await eventually(
          'the request under way',
          async () => (await connectionsOf(api.server)) > 0 || undefined,
        );
        const stopped = api.stop(30_000);
        await eventually('new connections refused', async () => (await refused(port)) || undefined);
        under.finish();
        const response = await under.answer;
        // The secret is wrong; what counts is that the request got its answer.
        assert.equal(response.statusCode, 400);
        assert.equal(response.headers.connection, 'close');
        response.resume();
        await stopped;
      } finally {
        await db.close();
      }
    });

    it('cuts off requests still running at its deadline', async () => {
      const { api, db, port } = await runningApi();
      try {
        const under = slowRequest(port);
        await eventually(
          'the request under way',
          async () => (await connectionsOf(api.server)) > 0 || undefined,
        );
        await api.stop(200);
        await assert.rejects(under.answer, /socket hang up|ECONNRESET/);
      } finally {
        await db.close();
      }
    });
  });
});

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The samples of a Prometheus text page by series (name and labels as printed). */
async function metricsOf(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(url)).text();
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

function connectionsOf(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}
