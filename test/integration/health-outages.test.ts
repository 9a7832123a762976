import assert from 'node:assert/strict';
import net from 'node:net';
import { startApi } from '../../api/server';
import { loadConfig } from '../../config/config';
import { openDatabase } from '../../db';
import { parseDatabaseUrl } from '../../db/connection';
import { request } from '../support/http';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

/** A TCP proxy to the database that can be cut and restored, to play a database outage. */
function databaseProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<number>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve(port);
      });
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server!.close(() => resolve());
    });
  return { open, cut };
}

async function apiWith(overrides: Record<string, string>) {
  const { env, logger } = stack();
  const config = loadConfig({ ...env, ...overrides });
  const db = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
  const api = await startApi({ config, logger, db, port: 0 });
  return {
    baseUrl: api.url,
    async stop() {
      await api.stop();
      await db.close();
    },
  };
}

describe('health during outages', () => {
  it('reports fail (503) while the database is unreachable and pass again once it is back, without a restart', async function () {
    this.timeout(60_000);
    const { config } = stack();
    const target = parseDatabaseUrl(config.databaseUrl);
    const proxy = databaseProxy({ host: target.host, port: target.port });
    const port = await proxy.open();
    const url = new URL(config.databaseUrl);
    url.host = `127.0.0.1:${port}`;
    const api = await apiWith({ DATABASE_URL: url.toString() });
    try {
      const healthy = await request('GET', '/health', { baseUrl: api.baseUrl });
      assert.equal(healthy.body.status, 'pass');

      await proxy.cut();
      const down = await eventually('health to report the outage', async () => {
        const response = await request('GET', '/health', { baseUrl: api.baseUrl });
        return response.body.status === 'fail' ? response : undefined;
      });
      assert.equal(down.status, 503);
      assert.equal(down.body.checks['database:responseTime'][0].status, 'fail');
      assert.equal(down.body.checks['temporal:responseTime'][0].status, 'pass');

      await proxy.open();
      const back = await eventually('health to recover', async () => {
        const response = await request('GET', '/health', { baseUrl: api.baseUrl });
        return response.body.status === 'pass' ? response : undefined;
      });
      assert.equal(back.status, 200);
    } finally {
      await api.stop();
      await proxy.cut().catch(() => undefined);
    }
  });

  it('reports warn (200) while Temporal is unreachable: reads still work', async () => {
    const api = await apiWith({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    try {
      const response = await request('GET', '/health', { baseUrl: api.baseUrl });
      assert.equal(response.status, 200);
      assert.equal(response.body.status, 'warn');
      assert.equal(response.body.checks['temporal:responseTime'][0].status, 'warn');
      assert.equal(response.body.checks['database:responseTime'][0].status, 'pass');
    } finally {
      await api.stop();
    }
  });
});
