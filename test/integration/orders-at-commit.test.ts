import assert from 'node:assert/strict';
import net from 'node:net';
import { QueryTypes } from 'sequelize';
import type { ApiService } from '../../api/server';
import { orderConnection } from '../support/exchange-lan';
import { login, request } from '../support/http';
import { stack, startSecondApi } from '../support/stack';
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

interface OutboxRow {
  attempts: number;
  delivered: number;
  held: number;
  last_error: string | null;
}

const outboxRowOf = async (workflowId: string): Promise<OutboxRow> => {
  const [row] = await stack().db.sequelize.query<OutboxRow>(
    `SELECT attempts, delivered_at IS NOT NULL AS delivered, claimed_until IS NOT NULL AS held, last_error
       FROM workflow_outbox WHERE workflow_id = :workflowId AND signal_name IS NULL`,
    { replacements: { workflowId }, type: QueryTypes.SELECT },
  );
  assert.ok(row, `an outbox row starts ${workflowId}`);
  return { ...row, attempts: Number(row.attempts), delivered: Number(row.delivered), held: Number(row.held) };
};

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
    api = await startSecondApi({ TEMPORAL_ADDRESS: temporal.address });
  });
  after(async () => {
    await api?.stop();
    await temporal.close();
  });

  it('answers orders while Temporal hangs, tries the first start afterwards, and leaves the rest to the relay', async () => {
    const { accessToken: token } = await login('customer', 0);
    const id = await orderConnection(token, {}, api!.url);
    const workflowId = `ixapi:connection:${id}`;
    // The answer came before any attempt to start the workflow had ended.
    const answered = await outboxRowOf(workflowId);
    assert.deepEqual([answered.attempts, answered.delivered], [0, 0]);

    // The background send gives up on the silent Temporal and lets the row go, for the relay.
    const left = await eventually('the send to give up', async () => {
      const row = await outboxRowOf(workflowId);
      return row.attempts === 1 ? row : undefined;
    });
    assert.deepEqual([left.delivered, left.held], [0, 0]);
    assert.ok(left.last_error, 'the failed send says why');

    // Sends pause after a failure: the next order is answered and its start left to the relay
    // untried, rather than given seconds of retries of its own.
    const next = await orderConnection(token, {}, api!.url);
    await api!.stop();
    api = undefined;
    const untried = await outboxRowOf(`ixapi:connection:${next}`);
    assert.deepEqual([untried.attempts, untried.delivered, untried.held], [0, 0, 0]);

    // The relay of the API that reaches Temporal sends it, and the order is provisioned.
    await eventually('the relay to start both workflows', async () =>
      (await outboxRowOf(workflowId)).delivered && (await outboxRowOf(`ixapi:connection:${next}`)).delivered
        ? true
        : undefined,
    );
    await eventually('the connection to leave requested', async () => {
      const { body } = await request('GET', `/connections/${id}`, { token });
      return body.state !== 'requested' ? true : undefined;
    });
  });
});
