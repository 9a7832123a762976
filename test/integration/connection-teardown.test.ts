import assert from 'node:assert/strict';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { settleConnections } from '../support/connections';
import { liveConfig, liveConnection, orderConnection, reaches } from '../support/exchange-lan';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';
import { endsNow } from '../support/virtual-circuits';

/**
 * A client that destroys a whole configuration deletes a connection's port reservations and the
 * configs on the connection at the same time (both depend only on the connection), and sends no
 * DELETE for the connection itself. Whatever order the DELETEs arrive in, the connection goes once,
 * with its last port, no earlier than its configs, and never from under a live config.
 */
describe('a connection torn down with its configs, its last port given back at any moment', function () {
  this.timeout(120_000);
  after(() => settleConnections());
  let token: string;

  before(async () => {
    token = (await login('customer', 0)).accessToken;
  });

  const read = async (at: string) => (await request('GET', at, { token })).body as Record<string, unknown>;
  const accepted = (response: HttpResponse, what: string) => {
    assert.equal(response.status, 202, `${what}: ${response.text}`);
    assert.equal(response.body.state, 'decommission_requested', `${what}: ${response.text}`);
  };

  /** A connection with one port and a live config on it: the connection, its reservation, the config. */
  async function carrying() {
    const connection = await liveConnection(token);
    const config = await liveConfig(token, connection);
    const [reservation] = (await read(`/connections/${connection}`)).port_reservations as string[];
    return { connection, reservation, config };
  }

  /** The connection goes once, with its port, no earlier than the config; then it ends. */
  async function goesOnce({ connection, reservation, config }: Awaited<ReturnType<typeof carrying>>) {
    const going = await read(`/connections/${connection}`);
    assert.equal(going.state, 'decommission_requested', JSON.stringify(going));
    const configDay = (await read(`/network-service-configs/${config}`)).decommission_at as string;
    assert.ok(String(going.decommission_at) >= configDay, JSON.stringify(going));
    const port = await read(`/port-reservations/${reservation}`);
    assert.equal(port.state, 'decommission_requested');
    assert.equal(port.decommission_at, going.decommission_at, 'the port goes with the connection');
    const asked = (
      await readEvents<{ payload: { id?: string; to?: string } }>(token, '?type=connection.state_changed')
    ).filter((event) => event.payload.id === connection && event.payload.to === 'decommission_requested');
    assert.equal(asked.length, 1, 'the connection is asked to go once');
    await endsNow(token, `/network-service-configs/${config}`, configWorkflowId(config));
    await endsNow(token, `/connections/${connection}`, provisioningWorkflowId(connection));
  }

  it('keeps the connection while the config stands, and lets it go with the config', async () => {
    const held = await carrying();
    accepted(
      await request('DELETE', `/port-reservations/${held.reservation}`, { token, body: null }),
      'the last port',
    );
    const kept = await read(`/connections/${held.connection}`);
    assert.equal(kept.state, 'production', 'the config still stands on it');
    assert.deepEqual((kept.ports as string[]).length, 1, 'its port stays');
    // Given back, the port is already going; its connection's own DELETE is still refused.
    const refused = await request('DELETE', `/connections/${held.connection}`, { token });
    assert.equal(refused.status, 400, refused.text);
    accepted(
      await request('DELETE', `/network-service-configs/${held.config}`, { token, body: null }),
      'the config',
    );
    await goesOnce(held);
  });

  it('lets the connection go with its last port when the configs went first', async () => {
    const held = await carrying();
    accepted(
      await request('DELETE', `/network-service-configs/${held.config}`, { token, body: null }),
      'the config',
    );
    accepted(
      await request('DELETE', `/port-reservations/${held.reservation}`, { token, body: null }),
      'the last port',
    );
    await goesOnce(held);
  });

  it('lets a bundle go once when both its ports and its config are deleted at the same moment', async () => {
    const bundle = await orderConnection(token, {
      mode: 'lag_lacp',
      lacp_timeout: 'slow',
      port_quantity: 2,
      subscriber_side_demarcs: ['cage 9, panel 2, port 1', 'cage 9, panel 2, port 2'],
    });
    await reaches(token, `/connections/${bundle}`, 'production');
    const config = await liveConfig(token, bundle);
    const reservations = (await read(`/connections/${bundle}`)).port_reservations as string[];
    assert.equal(reservations.length, 2);
    const answers = await Promise.all([
      ...reservations.map((reservation) =>
        request('DELETE', `/port-reservations/${reservation}`, { token, body: null }),
      ),
      request('DELETE', `/network-service-configs/${config}`, { token, body: null }),
    ]);
    answers.forEach((answer, index) => accepted(answer, `DELETE ${index}`));
    const going = await read(`/connections/${bundle}`);
    assert.equal(going.state, 'decommission_requested', JSON.stringify(going));
    for (const reservation of reservations)
      assert.equal((await read(`/port-reservations/${reservation}`)).decommission_at, going.decommission_at);
    await goesOnce({ connection: bundle, reservation: reservations[1], config });
  });

  it('lets each connection go once when its port and its config are deleted at the same moment', async () => {
    const all = await Promise.all([carrying(), carrying(), carrying()]);
    const answers = await Promise.all(
      all.flatMap((held) => [
        request('DELETE', `/port-reservations/${held.reservation}`, { token, body: null }),
        request('DELETE', `/network-service-configs/${held.config}`, { token, body: null }),
      ]),
    );
    answers.forEach((answer, index) => accepted(answer, `DELETE ${index}`));
    for (const held of all) await goesOnce(held);
  });
});
