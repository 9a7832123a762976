import assert from 'node:assert/strict';
import net from 'node:net';
import type { ApiService } from '../../api/server';
import { connectionOrder, orderConnection } from '../support/exchange-lan';
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

  it('answers an order with the connection as a read shows it, and records the same in its event', async () => {
    const { accessToken: token } = await login('customer', 0);
    const created = await request('POST', '/connections', {
      token,
      body: connectionOrder({
        mode: 'lag_lacp',
        port_quantity: 2,
        subscriber_side_demarcs: ['cage 9, panel 2, port 1', 'cage 9, panel 2, port 2'],
        purchase_order: 'PO-7',
      }),
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    const read = await request('GET', `/connections/${id}`, { token });
    // The workflow may have moved it along meanwhile; everything else is as answered.
    const settled = (connection: Record<string, unknown>) => ({ ...connection, state: null, status: null });
    assert.deepEqual(settled(created.body), settled(read.body));
    assert.equal(created.body.ports.length, 2);
    const events = await request('GET', `/events?resource=${id}&type=connection.created`, { token });
    assert.deepEqual(events.body[0].payload.connection, created.body);
  });
});
