import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startApi } from '../../api/server';
import { loadConfig } from '../../config/config';
import { openDatabase } from '../../db';
import { orderAndTakeDown, startBuiltPair } from '../support/processes';
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
