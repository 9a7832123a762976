import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';
import { settleConnections } from '../support/connections';

const SPREE = 'acc-spree-networks';
const ROLES = ['ra-spree-networks-implementation', 'ra-spree-networks-noc'];

const order = (extra: Record<string, unknown> = {}) => ({
  managing_account: SPREE,
  consuming_account: SPREE,
  billing_account: SPREE,
  role_assignments: ROLES,
  product_offering: 'po-connection-fra-100g',
  mode: 'lag_lacp',
  lacp_timeout: 'slow',
  port_quantity: 2,
  subscriber_side_demarcs: ['cage 7, panel 1, ports 3-4'],
  external_ref: 'spree-order-1',
  ...extra,
});

const propertyNames = (response: { body: { properties?: Array<{ name: string }> } }) =>
  (response.body.properties ?? []).map((p) => p.name);

describe('connections over HTTP', function () {
  // Provisioning started here must not change collections under the tests that follow.
  after(() => settleConnections());
  this.timeout(60_000);
  let token: string;
  let other: string;

  before(async () => {
    token = (await login('customer', 0)).accessToken;
    other = (await login('customer', 1)).accessToken;
  });

  it('orders a connection that reaches production, with its ports shown to its accounts only', async () => {
    const created = await request('POST', '/connections', { token, body: order() });
    assert.equal(created.status, 201, created.text);
    const { id } = created.body as { id: string };
    assert.equal(created.body.state, 'requested');
    assert.equal(created.body.ports.length, 2);
    assert.equal(created.body.speed, 200_000);
    const live = await eventually('production', async () => {
      const read = await request('GET', `/connections/${id}`, { token });
      const body = read.body as { state: string; pop: string; ports: string[] };
      return body.state === 'production' ? body : undefined;
    });
    assert.equal(live.pop, created.body.pop);
    const ports = await request('GET', `/ports?connection=${id}`, { token });
    assert.deepEqual(
      (ports.body as Array<{ id: string; state: string }>).map((p) => [p.id, p.state]).sort(),
      live.ports.map((port) => [port, 'production']).sort(),
    );
    // Each port's reservation names it on its device as the exchange's side of the demarcation.
    const named = new Map(
      (ports.body as Array<{ id: string; device: string; name: string }>).map((p) => [
        p.id,
        `${p.device} ${p.name}`,
      ]),
    );
    const reservations = await request('GET', `/port-reservations?connection=${id}`, { token });
    assert.equal(reservations.status, 200, reservations.text);
    assert.deepEqual(
      (reservations.body as Array<{ port: string; exchange_side_demarc: string }>)
        .map((r) => [r.port, r.exchange_side_demarc])
        .sort(),
      [...named].sort(),
    );
    const listed = await request(
      'GET',
      `/connections?mode=lag_lacp&external_ref=spree-order-1&pop=${live.pop}`,
      {
        token,
      },
    );
    assert.ok((listed.body as Array<{ id: string }>).some((c) => c.id === id));
    assert.equal((await request('GET', `/connections/${id}`, { token: other })).status, 404);
    assert.ok(
      !((await request('GET', '/connections', { token: other })).body as Array<{ id: string }>).some(
        (c) => c.id === id,
      ),
    );
    const events = await readEvents<{
      type: string;
      payload: { id?: string; to?: string; connection?: { id: string } };
    }>(token);
    const story = events
      .filter((e) => e.payload.id === id || e.payload.connection?.id === id)
      .map((e) => e.payload.to ?? e.type);
    assert.deepEqual(story, ['connection.created', 'allocated', 'testing', 'production']);
  });

  it('refuses orders that do not fit their offering, naming the properties', async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ role_assignments: [ROLES[0]] }, ['role_assignments']],
      [{ product_offering: 'po-exchange-lan-fra' }, ['product_offering']],
      [{ product_offering: 'po-no-such-offering' }, ['product_offering']],
      [{ mode: 'lag_static' }, ['lacp_timeout']],
      [{ subscriber_side_demarcs: [] }, ['subscriber_side_demarcs']],
      [{ port_quantity: 9 }, ['port_quantity']],
      [{ role_assignments: ['ra-thames-cloud-noc', ROLES[1]] }, ['role_assignments.0']],
      [{ billing_account: 'acc-thames-cloud' }, ['billing_account']],
    ];
    for (const [change, names] of cases) {
      const response = await request('POST', '/connections', { token, body: order(change) });
      assert.equal(response.status, 400, `${JSON.stringify(change)}: ${response.text}`);
      assert.deepEqual(propertyNames(response), names, JSON.stringify(change));
    }
  });

  it('gives 5 free ports to exactly 5 of 20 concurrent orders over HTTP; the rest are refused cleanly', async () => {
    const { sequelize } = stack().db;
    const hold = 'held-by-http-competition';
    const speed = 400_000;
    const spare = await sequelize.query<{ id: string }>(
      `SELECT p.id FROM ports p JOIN pops pop ON pop.id = p.pop
       WHERE pop.metro_area_network = 'man-ham' AND p.speed = :speed AND p.connection IS NULL
         AND p.managing_account = 'acc-demo-ix' ORDER BY p.device, p.id`,
      { replacements: { speed }, type: QueryTypes.SELECT },
    );
    assert.ok(spare.length >= 5, `only ${spare.length} spare ports`);
    const free = spare.slice(0, 5).map((port) => port.id);
    await sequelize.query('UPDATE ports SET connection = :hold WHERE id IN (:held)', {
      replacements: {
        hold,
        held: spare
          .slice(5)
          .map((port) => port.id)
          .concat(['-']),
      },
    });
    try {
      const body = order({
        product_offering: 'po-connection-ham-400g',
        mode: 'standalone',
        lacp_timeout: null,
        port_quantity: 1,
      });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => request('POST', '/connections', { token, body })),
      );
      const won = answers.filter((answer) => answer.status === 201);
      assert.equal(won.length, 5, answers.map((a) => a.status).join(' '));
      for (const answer of answers.filter((a) => a.status !== 201)) {
        assert.equal(answer.status, 400, answer.text);
        assert.match(answer.body.type, /unable-to-fulfill/);
      }
      const taken = won.flatMap((answer) => answer.body.ports as string[]);
      assert.deepEqual([...taken].sort(), [...free].sort(), 'each free port once, no port twice');
      for (const answer of won)
        await eventually('production', async () => {
          const read = await request('GET', `/connections/${answer.body.id}`, { token });
          return read.body.state === 'production' ? true : undefined;
        });
    } finally {
      await sequelize.query('UPDATE ports SET connection = NULL WHERE connection = :hold', {
        replacements: { hold },
      });
    }
  });

  it('refuses an order no device has room for any more, as unable to fulfil', async () => {
    const body = order({ product_offering: 'po-connection-fra-400g', port_quantity: 8 });
    let response = await request('POST', '/connections', { token, body });
    // Bundles of eight fill one device after another until none has room.
    for (let i = 0; response.status === 201 && i < 20; i += 1)
      response = await request('POST', '/connections', { token, body });
    assert.equal(response.status, 400, response.text);
    assert.match(response.body.type, /unable-to-fulfill/);
    assert.match(response.body.detail, /8 free 400000 Mbit\/s port/);
  });
});
