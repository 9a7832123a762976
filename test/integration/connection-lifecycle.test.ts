import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { LabDriver } from '../../drivers/lab/driver';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { addPeriod, dayOf } from '../../domain/cancellation';
import { settleConnections } from '../support/connections';
import { recordHistory } from '../support/histories';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const SPREE = 'acc-spree-networks';
const ROLES = ['ra-spree-networks-implementation', 'ra-spree-networks-noc'];

const order = (extra: Record<string, unknown> = {}) => ({
  managing_account: SPREE,
  consuming_account: SPREE,
  billing_account: SPREE,
  role_assignments: ROLES,
  product_offering: 'po-connection-fra-10g',
  mode: 'lag_lacp',
  lacp_timeout: 'slow',
  port_quantity: 2,
  subscriber_side_demarcs: ['cage 9, panel 2, ports 1-2'],
  ...extra,
});

interface ConnectionBody {
  id: string;
  state: string;
  mode: string;
  ports: string[];
  port_reservations: string[];
  port_quantity: number;
  speed: number;
  decommission_at: string | null;
  charged_until: string | null;
  current_billing_start_date: string | null;
  status: Array<{ tag: string }>;
}

describe('connection lifecycle over HTTP', function () {
  after(() => settleConnections());
  this.timeout(60_000);
  let token: string;
  let other: string;
  const lab = () => new LabDriver(stack().db.sequelize);
  const today = () => dayOf(new Date());

  before(async () => {
    token = (await login('customer', 0)).accessToken;
    other = (await login('customer', 1)).accessToken;
  });

  const read = async (id: string) =>
    (await request('GET', `/connections/${id}`, { token })).body as ConnectionBody;
  const reaches = (id: string, state: string) =>
    eventually(`${id} reaching ${state}`, async () => {
      const connection = await read(id);
      return connection.state === state ? connection : undefined;
    });
  async function live(extra: Record<string, unknown> = {}): Promise<ConnectionBody> {
    const created = await request('POST', '/connections', { token, body: order(extra) });
    assert.equal(created.status, 201, created.text);
    return reaches((created.body as ConnectionBody).id, 'production');
  }
  const spare = async (ports: string[]) =>
    stack().db.sequelize.query<{ id: string; connection: string | null; managing_account: string }>(
      'SELECT id, connection, managing_account FROM ports WHERE id IN (:ports) ORDER BY id',
      { replacements: { ports }, type: QueryTypes.SELECT },
    );
  const storyOf = async (id: string) => {
    const listed = await readEvents<{
      type: string;
      payload: { id?: string; to?: string; connection?: { id: string } };
    }>(token);
    return listed
      .filter((e) => e.payload.id === id || e.payload.connection?.id === id)
      .map((e) => (e.type === 'connection.state_changed' ? e.payload.to : e.type));
  };

  it('changes the bundle of a connection in production on the device, by way of production_change_pending', async () => {
    const connection = await live();
    const placement = (await stack().db.connections.placement(connection.id))!;
    const patched = await request('PATCH', `/connections/${connection.id}`, {
      token,
      body: { mode: 'lag_static', lacp_timeout: null, external_ref: 'now static' },
    });
    assert.equal(patched.status, 202, patched.text);
    assert.equal(patched.body.state, 'production_change_pending');
    assert.equal(patched.body.mode, 'lag_static');
    await reaches(connection.id, 'production');
    const [lag] = await lab().readLags(placement.device, [placement.lag_name!]);
    assert.deepEqual([lag.mode, lag.lacpTimeout, lag.members.length], ['static', null, 2]);
    // References change at once, without the device.
    const renamed = await request('PATCH', `/connections/${connection.id}`, {
      token,
      body: { purchase_order: 'PO-77' },
    });
    assert.equal(renamed.status, 202);
    assert.equal(renamed.body.state, 'production');
    assert.equal(renamed.body.purchase_order, 'PO-77');
    await recordHistory('provisionConnection', 'change', provisioningWorkflowId(connection.id));
    // The consuming side of someone else's connection cannot even see it.
    const foreign = await request('PATCH', `/connections/${connection.id}`, {
      token: other,
      body: { purchase_order: 'x' },
    });
    assert.equal(foreign.status, 404);
  });

  it('refuses a change of the bundle while provisioning, and a change to an offering needing other ports', async () => {
    const created = await request('POST', '/connections', {
      token,
      body: order({ product_offering: 'po-connection-ams-10g', subscriber_side_demarcs: [] }),
    });
    assert.equal(created.status, 201, created.text);
    const { id } = created.body as ConnectionBody;
    const early = await request('PATCH', `/connections/${id}`, {
      token,
      body: { mode: 'lag_static', lacp_timeout: null },
    });
    assert.equal(early.status, 400);
    assert.match(early.body.type, /unable-to-fulfill/);
    const bigger = await request('PATCH', `/connections/${id}`, {
      token,
      body: { product_offering: 'po-connection-ams-100g' },
    });
    assert.equal(bigger.status, 400);
    assert.deepEqual(
      (bigger.body.properties as Array<{ name: string }>).map((p) => p.name),
      ['product_offering'],
    );
    const unchanged = await read(id);
    assert.equal(unchanged.mode, 'lag_lacp');
    await eventually('the cross-connect awaited', async () => {
      const now = await read(id);
      return now.status.some((s) => s.tag === 'cross_connect_pending') ? now : undefined;
    });
    // Cancelled while waiting for the subscriber's cross-connect: everything goes back.
    const cancelled = await request('DELETE', `/connections/${id}`, { token });
    assert.equal(cancelled.status, 202, cancelled.text);
    const gone = await reaches(id, 'cancelled');
    await recordHistory('provisionConnection', 'cancel-before-production', provisioningWorkflowId(id));
    const ports = await spare(created.body.ports as string[]);
    assert.ok(ports.every((port) => port.connection === null && port.managing_account !== SPREE));
    assert.deepEqual(gone.ports, []);
    const archived = await request('DELETE', `/connections/${id}`, { token });
    assert.equal(archived.status, 202);
    assert.equal(archived.body.state, 'archived');
    assert.deepEqual(await storyOf(id), [
      'connection.created',
      'allocated',
      'connection.cancellation_requested',
      'cancelled',
      'archived',
    ]);
  });

  it('decommissions at once where the offering needs no notice, then archives, and the events tell it all', async () => {
    const connection = await live({ mode: 'standalone', lacp_timeout: null, port_quantity: 1 });
    assert.equal(connection.current_billing_start_date, today());
    const policy = await request('GET', `/connections/${connection.id}/cancellation-policy`, { token });
    assert.equal(policy.status, 200);
    assert.equal(policy.body.decommission_at, today());
    const deleted = await request('DELETE', `/connections/${connection.id}`, { token });
    assert.equal(deleted.status, 202, deleted.text);
    assert.equal(deleted.body.state, 'decommission_requested');
    assert.equal(deleted.body.decommission_at, today());
    const done = await reaches(connection.id, 'decommissioned');
    assert.deepEqual(done.ports, []);
    const [port] = await spare(connection.ports);
    assert.equal(port.connection, null);
    const placementPort = (
      await stack().db.sequelize.query<{ device: string; name: string }>(
        'SELECT device, name FROM ports WHERE id = :id',
        { replacements: { id: connection.ports[0] }, type: QueryTypes.SELECT },
      )
    )[0];
    const [iface] = await lab().readInterfaces(placementPort.device, [placementPort.name]);
    assert.equal(iface.enabled, false);
    const archived = await request('DELETE', `/connections/${connection.id}`, { token });
    assert.equal(archived.body.state, 'archived');
    assert.deepEqual(await storyOf(connection.id), [
      'connection.created',
      'allocated',
      'testing',
      'production',
      'decommission_requested',
      'decommissioned',
      'archived',
    ]);
    const handle = stack().temporal.client.workflow.getHandle(provisioningWorkflowId(connection.id));
    assert.equal(await handle.result(), 'decommissioned');
    await recordHistory('provisionConnection', 'decommission', provisioningWorkflowId(connection.id));
  });

  it('holds to the notice period, waits for the decommission day, and lets an operator bring it forward', async () => {
    const connection = await live({ product_offering: 'po-connection-fra-100g' });
    const earliest = addPeriod(today(), 'P1M');
    const early = await request('DELETE', `/connections/${connection.id}`, {
      token,
      body: { decommission_at: today() },
    });
    assert.equal(early.status, 400);
    assert.match(early.body.type, /cancellation-policy-error/);
    assert.equal(early.body.decommission_at, earliest);
    assert.equal((await read(connection.id)).state, 'production');
    const bad = await request('DELETE', `/connections/${connection.id}`, {
      token,
      body: { decommission_at: '2027-02-30' },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.type, /validation-error/);
    const deleted = await request('DELETE', `/connections/${connection.id}`, { token });
    assert.equal(deleted.status, 202);
    assert.equal(deleted.body.decommission_at, earliest);
    assert.ok(deleted.body.charged_until >= earliest);
    const again = await request('DELETE', `/connections/${connection.id}`, { token });
    assert.equal(again.body.state, 'decommission_requested');
    const handle = stack().temporal.client.workflow.getHandle(provisioningWorkflowId(connection.id));
    await eventually('the workflow waiting for the day', async () =>
      (await handle.query('provisioningStep')) === `decommissioning on ${earliest}` ? true : undefined,
    );
    assert.equal((await read(connection.id)).state, 'decommission_requested');
    const signalledOn = today();
    await handle.signal('decommissionNow');
    const ended = await reaches(connection.id, 'decommissioned');
    // It shows the day it went, not the day it would have gone on; so do its port reservations.
    const wentOn = [signalledOn, today()];
    assert.ok(wentOn.includes(String(ended.decommission_at)), `decommission_at ${ended.decommission_at}`);
    for (const reservation of ended.port_reservations) {
      const read = await request('GET', `/port-reservations/${reservation}`, { token });
      assert.equal(read.body.state, 'decommissioned');
      assert.ok(wentOn.includes(read.body.decommission_at), `${reservation}: ${read.text}`);
    }
  });

  it('adds a port to a bundle with a reservation and gives it back, the last one with the connection', async () => {
    const connection = await live();
    assert.equal(connection.port_reservations.length, 2);
    const added = await request('POST', '/port-reservations', {
      token,
      body: { connection: connection.id, subscriber_side_demarc: 'cage 9, panel 2, ports 1-2' },
    });
    assert.equal(added.status, 201, added.text);
    assert.equal(added.body.state, 'requested');
    const grown = await reaches(connection.id, 'production');
    assert.equal(grown.port_quantity, 3);
    assert.equal(grown.ports.length, 3);
    assert.equal(grown.speed, 30_000);
    const reservation = (await request('GET', `/port-reservations/${added.body.id}`, { token })).body;
    assert.equal(reservation.state, 'production');
    const placement = (await stack().db.connections.placement(connection.id))!;
    const [lag] = await lab().readLags(placement.device, [placement.lag_name!]);
    assert.equal(lag.members.length, 3);

    const patched = await request('PATCH', `/port-reservations/${added.body.id}`, {
      token,
      body: { cross_connect_id: 'XC-4711' },
    });
    assert.equal(patched.status, 202);
    assert.equal(patched.body.cross_connect_id, 'XC-4711');
    const wrongDemarc = await request('PATCH', `/port-reservations/${added.body.id}`, {
      token,
      body: { subscriber_side_demarc: 'somewhere else' },
    });
    assert.equal(wrongDemarc.status, 400);

    const given = await request('DELETE', `/port-reservations/${added.body.id}`, { token });
    assert.equal(given.status, 202, given.text);
    assert.equal(given.body.state, 'decommission_requested');
    await eventually('the port leaving', async () => {
      const now = (await request('GET', `/port-reservations/${added.body.id}`, { token })).body as {
        state: string;
      };
      return now.state === 'decommissioned' ? now : undefined;
    });
    const shrunk = await reaches(connection.id, 'production');
    assert.equal(shrunk.port_quantity, 2);
    const [after] = await lab().readLags(placement.device, [placement.lag_name!]);
    assert.equal(after.members.length, 2);
    const [released] = await spare([added.body.port as string]);
    assert.equal(released.connection, null);

    const [first] = connection.port_reservations;
    const second = connection.port_reservations[1];
    assert.equal((await request('DELETE', `/port-reservations/${first}`, { token })).status, 202);
    await eventually('the second port leaving', async () => {
      const now = (await request('GET', `/port-reservations/${first}`, { token })).body as { state: string };
      return now.state === 'decommissioned' ? now : undefined;
    });
    await reaches(connection.id, 'production');
    assert.equal((await request('GET', `/port-reservations/${second}`, { token: other })).status, 404);
    // The last port takes its connection along, on the connection's policy's day.
    const policy = await request('GET', `/connections/${connection.id}/cancellation-policy`, { token });
    const lastPolicy = await request('GET', `/port-reservations/${second}/cancellation-policy`, { token });
    assert.deepEqual(lastPolicy.body, policy.body, 'the last port goes by its connection’s policy');
    const last = await request('DELETE', `/port-reservations/${second}`, { token, body: null });
    assert.equal(last.status, 202, last.text);
    assert.equal(last.body.state, 'decommission_requested');
    assert.equal(last.body.decommission_at, (policy.body as { decommission_at: string }).decommission_at);
    const going = await read(connection.id);
    assert.equal(going.state, 'decommission_requested');
    assert.equal(going.decommission_at, last.body.decommission_at);
    await stack()
      .temporal.client.workflow.getHandle(provisioningWorkflowId(connection.id))
      .signal('decommissionNow');
    await reaches(connection.id, 'decommissioned');
  });

  it('decommissions a bundle whose cancellation overtakes the giving back of one of its ports', async () => {
    const connection = await live();
    const placed = (await stack().db.connections.placement(connection.id))!;
    // A slow device keeps the bundle's change going while the cancellation comes in.
    await lab().store.setLatency(placed.device, 1500);
    try {
      const [first] = connection.port_reservations;
      const given = await request('DELETE', `/port-reservations/${first}`, { token });
      assert.equal(given.status, 202, given.text);
      await reaches(connection.id, 'production_change_pending');
      const deleted = await request('DELETE', `/connections/${connection.id}`, { token });
      assert.equal(deleted.status, 202, deleted.text);
    } finally {
      await lab().store.setLatency(placed.device, null);
    }
    const done = await reaches(connection.id, 'decommissioned');
    assert.deepEqual(done.ports, []);
    const ports = await spare(connection.ports);
    assert.ok(ports.every((port) => port.connection === null));
    const placement = await stack().db.sequelize.query<{ state: string }>(
      'SELECT state FROM port_reservations WHERE connection = :id',
      { replacements: { id: connection.id }, type: QueryTypes.SELECT },
    );
    assert.deepEqual(
      placement.map((r) => r.state),
      ['decommissioned', 'decommissioned'],
    );
  });

  it('tells both sides of a connection its story: the reseller that manages it and the account that uses it', async () => {
    const reseller = (await login('reseller', 0)).accessToken;
    const consumer = (await login('subaccount', 0)).accessToken;
    const created = await request('POST', '/connections', {
      token: reseller,
      body: order({
        managing_account: 'acc-transit-partners',
        consuming_account: 'acc-petit-reseau',
        billing_account: 'acc-transit-partners',
        role_assignments: ['ra-transit-partners-implementation', 'ra-transit-partners-noc'],
        mode: 'standalone',
        lacp_timeout: null,
        port_quantity: 1,
      }),
    });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as ConnectionBody).id;
    await eventually('production', async () => {
      const now = await request('GET', `/connections/${id}`, { token: consumer });
      return now.body.state === 'production' ? true : undefined;
    });
    const storyFor = async (caller: string) =>
      (
        await readEvents<{
          serial: number;
          payload: { id?: string; to?: string; connection?: { id: string } };
        }>(caller)
      )
        .filter((e) => e.payload.id === id || e.payload.connection?.id === id)
        .map((e) => e.serial);
    const seenByConsumer = await storyFor(consumer);
    assert.equal(seenByConsumer.length, 4, 'created, allocated, testing, production');
    // The reseller acts for both sides and reads each event once.
    assert.deepEqual(await storyFor(reseller), seenByConsumer);
    assert.deepEqual(await storyFor(token), [], 'nothing for a third party');
  });

  it('issues letters of authorisation and keeps the ones uploaded', async () => {
    const connection = await live({ mode: 'standalone', lacp_timeout: null, port_quantity: 1 });
    const issued = await fetch(`${stack().baseUrl}/connections/${connection.id}/loa`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(issued.status, 200);
    assert.equal(issued.headers.get('content-type'), 'application/pdf');
    const pdf = Buffer.from(await issued.arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    assert.ok(pdf.includes(connection.id));

    const notPdf = await request('POST', `/connections/${connection.id}/loa`, {
      token,
      rawBody: 'just text',
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(notPdf.status, 400);
    const mine = '%PDF-1.4\n% signed by Spree Networks\n%%EOF\n';
    const uploaded = await request('POST', `/connections/${connection.id}/loa`, {
      token,
      rawBody: mine,
      headers: { 'content-type': 'application/pdf' },
    });
    assert.equal(uploaded.status, 202, uploaded.text);
    const back = await fetch(`${stack().baseUrl}/connections/${connection.id}/loa`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(await back.text(), mine);
    const [reservation] = connection.port_reservations;
    const reservationLoa = await fetch(`${stack().baseUrl}/port-reservations/${reservation}/loa`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(reservationLoa.status, 200);
    assert.ok(Buffer.from(await reservationLoa.arrayBuffer()).includes(reservation));
    const foreign = await fetch(`${stack().baseUrl}/connections/${connection.id}/loa`, {
      headers: { authorization: `Bearer ${other}` },
    });
    assert.equal(foreign.status, 404);
  });
});
