import assert from 'node:assert/strict';
import net from 'node:net';
import type { ApiService } from '../../api/server';
import { orderConnection } from '../support/exchange-lan';
import { login, request } from '../support/http';
import { outboxRowOf, startDelivered } from '../support/outbox';
import { startSecondApi } from '../support/stack';
import { eventually } from '../support/wait';

/** A Temporal frontend that takes connections and never answers: Temporal far away or hung. */
async function silentTemporal() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * An order is answered once it has committed: the workflow start it decided goes out after the
 * answer, from the outbox, and a Temporal that does not answer holds up no client.
 */
describe('orders answered at commit', function () {
  this.timeout(120_000);
  let temporal: Awaited<ReturnType<typeof silentTemporal>>;
  let api: ApiService | undefined;

  before(async () => {
    temporal = await silentTemporal();
    // The background send waits for the silent Temporal far longer than answering takes.
    api = await startSecondApi({ TEMPORAL_ADDRESS: temporal.address }, { sending: { withinMs: 8_000 } });
  });
  after(async () => {
    await api?.stop();
    await temporal.close();
  });

  it('answers an order while Temporal hangs, tries its start afterwards, and leaves it to the relay', async () => {
    const { accessToken: token } = await login('customer', 0);
    const id = await orderConnection(token, {}, api!.url);
    const workflowId = `ixapi:connection:${id}`;
    // The answer came while the start was still untried (the attempt at the silent Temporal hangs).
    assert.equal((await outboxRowOf(workflowId)).attempts, 0);

    // Stopping lets the background send end; whoever sends the start (this API's relay or the
    // stack's), the order is provisioned.
    await api!.stop();
    api = undefined;
    await startDelivered(workflowId);
    await eventually('the connection to leave requested', async () => {
      const { body } = await request('GET', `/connections/${id}`, { token });
      return body.state !== 'requested' ? true : undefined;
    });
  });
});
