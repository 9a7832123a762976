import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startApi } from '../../api/server';
import { loadConfig } from '../../config/config';
import { openDatabase } from '../../db';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');

/** A process started from dist/, its log lines (pino JSON) and its exit. */
function startBuilt(script: string, env: NodeJS.ProcessEnv) {
  const file = path.join(ROOT, 'dist', script);
  assert.ok(existsSync(file), `${file} is missing: run \`npm run build\` first (npm test does)`);
  const child: ChildProcess = spawn(process.execPath, [file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => lines.push(line));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logged = (message: string) =>
    eventually(
      `${script} logging "${message}"`,
      () => Promise.resolve(lines.some((line) => line.includes(`"msg":"${message}"`)) ? true : undefined),
      60_000,
    );
  return { child, lines, exited, logged };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('the production processes', function () {
  this.timeout(120_000);

  it('provision an order from the compiled API and worker, and stop cleanly on SIGTERM', async () => {
    const port = await freePort();
    const env = {
      ...process.env,
      ...stack().env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}/api/v2`,
      // A queue of their own: what this API starts, this worker runs.
      TEMPORAL_TASK_QUEUE: `ixapi-dist-${randomBytes(3).toString('hex')}`,
    };
    const worker = startBuilt('worker/main.js', env);
    const api = startBuilt('api/main.js', env);
    try {
      await Promise.all([worker.logged('worker polling'), api.logged('API listening')]);
      const baseUrl = `http://127.0.0.1:${port}/api/v2`;
      const token = (await login('customer', 0)).accessToken;
      const created = await request('POST', '/connections', {
        baseUrl,
        token,
        body: {
          managing_account: 'acc-spree-networks',
          consuming_account: 'acc-spree-networks',
          billing_account: 'acc-spree-networks',
          role_assignments: ['ra-spree-networks-implementation', 'ra-spree-networks-noc'],
          product_offering: 'po-connection-ham-10g',
          mode: 'standalone',
          port_quantity: 1,
          subscriber_side_demarcs: ['cage 4, panel 1, port 7'],
        },
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      const stateOf = async () =>
        (await request('GET', `/connections/${id}`, { baseUrl, token })).body.state as string;
      await eventually('the connection in production', async () =>
        (await stateOf()) === 'production' ? true : undefined,
      );
      // 10G ports are given back at once: the workflow takes it down today.
      const gone = await request('DELETE', `/connections/${id}`, { baseUrl, token });
      assert.equal(gone.status, 202, gone.text);
      await eventually('the connection decommissioned', async () =>
        (await stateOf()) === 'decommissioned' ? true : undefined,
      );
    } finally {
      worker.child.kill('SIGTERM');
      api.child.kill('SIGTERM');
    }
    assert.equal(await api.exited, 0, api.lines.slice(-5).join('\n'));
    assert.equal(await worker.exited, 0, worker.lines.slice(-5).join('\n'));
    await api.logged('API stopped');
    await worker.logged('worker stopped');
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

function connectionsOf(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}
