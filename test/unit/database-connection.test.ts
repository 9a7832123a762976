import assert from 'node:assert/strict';
import type { AddressInfo, Socket } from 'node:net';
import { createServer } from 'node:net';
import { openConnection } from '../../db/connection';

/**
 * A TCP server that takes connections and answers nothing (a database too busy to greet), or closes
 * them at once; it counts the attempts.
 */
async function silentServer(): Promise<{ port: number; attempts: () => number; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    attempts: () => sockets.length,
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('opening a database connection', () => {
  it('tries again where the server does not answer in time, then gives up with its error', async () => {
    const server = await silentServer();
    try {
      await assert.rejects(
        openConnection(
          { host: '127.0.0.1', port: server.port, user: 'root', connectTimeout: 100 },
          { attempts: 3, delayMs: 5 },
        ),
        (error: { code?: string }) => error.code === 'ETIMEDOUT',
      );
      assert.equal(server.attempts(), 3);
    } finally {
      await server.close();
    }
  });

  it('tries again where nothing listens yet', async () => {
    const server = await silentServer();
    const { port } = server;
    await server.close();
    const started = Date.now();
    await assert.rejects(
      openConnection({ host: '127.0.0.1', port, user: 'root' }, { attempts: 3, delayMs: 20 }),
      (error: { code?: string }) => error.code === 'ECONNREFUSED',
    );
    // Two waits between three attempts: 20 ms, then 40 ms.
    assert.ok(Date.now() - started >= 60, 'it did not wait between its attempts');
  });

  it('does not try again on an error that does not pass (a malformed greeting)', async () => {
    const server = createServer((socket) => socket.end('this is no database\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    let accepted = 0;
    server.on('connection', () => (accepted += 1));
    try {
      await assert.rejects(
        openConnection(
          {
            host: '127.0.0.1',
            port: (server.address() as AddressInfo).port,
            user: 'root',
            connectTimeout: 1000,
          },
          { attempts: 3, delayMs: 5 },
        ),
      );
      assert.equal(accepted, 1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
