import assert from 'node:assert/strict';
import type { ApiService } from '../../api/server';
import type { HttpResponse } from '../support/http';
import { request } from '../support/http';
import type { GaleraStack } from './stack';
import { galeraStack, loginAt, rowsOn, startNodeApis, stopApis } from './stack';

const CUSTOMER = 'acc-spree-networks';
const OFFERING = 'po-connection-fra-10g';
const HOLD = 'held-by-galera-race';
const FREE = 3;
const ORDERS = 10;

/**
 * Two API processes, each on its own node of the cluster, take orders for the last free ports of a
 * PoP at the same moment. A port an order takes on one node is not locked on the other, so both may
 * pick it; certification lets one commit, the other runs again and finds what is left. Exactly as
 * many orders succeed as ports were free, the others are refused as an order no port is free for,
 * and no port serves two connections on any node.
 */
describe('orders racing for the last free ports through two nodes', function () {
  let stack: GaleraStack;
  const apis: ApiService[] = [];

  before(async function () {
    stack = galeraStack(this);
    const [db] = stack.dbs;
    const offering = (await db.connections.offering(OFFERING))!;
    const pops = offering.handover_pop
      ? [offering.handover_pop]
      : (
          await rowsOn<{ id: string }>(stack, 0, 'SELECT id FROM pops WHERE metro_area_network = :man', {
            man: offering.handover_metro_area_network,
          })
        ).map((row) => row.id);
    const spare = `connection IS NULL AND state = 'production' AND managing_account = 'acc-demo-ix'
      AND speed = :speed AND pop IN (:pops)`;
    const keep = await rowsOn<{ id: string }>(
      stack,
      0,
      `SELECT id FROM ports WHERE ${spare} ORDER BY id LIMIT :free`,
      {
        speed: offering.physical_port_speed,
        pops,
        free: FREE,
      },
    );
    assert.equal(keep.length, FREE);
    await db.sequelize.query(`UPDATE ports SET connection = :hold WHERE ${spare} AND id NOT IN (:keep)`, {
      replacements: {
        hold: HOLD,
        speed: offering.physical_port_speed,
        pops,
        keep: keep.map((row) => row.id),
      },
    });
    apis.push(...(await startNodeApis(stack, [0, 1])));
  });

  /** How often the two nodes refused a commit, summed: what the race cost in transactions run again. */
  async function conflicts() {
    let certification = 0;
    let aborted = 0;
    for (const node of [0, 1]) {
      const rows = await stack.cluster.query<{ Variable_name: string; Value: string }>(
        node,
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts')",
      );
      for (const row of rows)
        if (row.Variable_name === 'wsrep_local_cert_failures') certification += Number(row.Value);
        else aborted += Number(row.Value);
    }
    return { certification, aborted };
  }

  after(async () => {
    await stopApis(apis);
    await stack?.dbs[0].sequelize.query('UPDATE ports SET connection = NULL WHERE connection = :hold', {
      replacements: { hold: HOLD },
    });
  });

  it(`gives ${FREE} free ports to exactly ${FREE} of ${ORDERS} orders sent to two nodes at once, never a port twice`, async () => {
    const tokens = await Promise.all(
      apis.map(async (api) => {
        const login = await loginAt(stack, api, CUSTOMER);
        assert.equal(login.status, 201, login.text);
        return login.body.access_token as string;
      }),
    );
    const before = await conflicts();
    const answers: HttpResponse[] = await Promise.all(
      Array.from({ length: ORDERS }, (_, i) =>
        request('POST', '/connections', {
          baseUrl: apis[i % 2].url,
          token: tokens[i % 2],
          body: {
            managing_account: CUSTOMER,
            consuming_account: CUSTOMER,
            billing_account: CUSTOMER,
            role_assignments: ['ra-spree-networks-implementation', 'ra-spree-networks-noc'],
            product_offering: OFFERING,
            mode: 'standalone',
            port_quantity: 1,
            subscriber_side_demarcs: [`cage 9, panel 2, port ${i + 1}`],
          },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    assert.deepEqual(
      statuses.filter((status) => status >= 500),
      [],
      answers.map((a) => a.text).join('\n'),
    );
    const created = answers
      .filter((answer) => answer.status === 201)
      .map((answer) => answer.body.id as string);
    assert.equal(created.length, FREE, `statuses: ${statuses.join(', ')}`);
    for (const refused of answers.filter((answer) => answer.status !== 201)) {
      assert.equal(refused.status, 400, refused.text);
      assert.match(String(refused.body.type), /\/unable-to-fulfill\.html$/, refused.text);
      assert.match(String(refused.body.detail), /free .*port/, refused.text);
    }
    const after = await conflicts();
    process.stdout.write(
      `      (certification failures ${after.certification - before.certification}, ` +
        `transactions aborted for a replicated write ${after.aborted - before.aborted})\n`,
    );

    const views = await Promise.all(
      [0, 1, 2].map((node) =>
        rowsOn<{ id: string; connection: string }>(
          stack,
          node,
          `SELECT p.id, p.connection FROM ports p JOIN connections c ON c.id = p.connection
            WHERE c.id IN (:created) ORDER BY p.id`,
          { created },
        ),
      ),
    );
    const [ports] = views;
    assert.equal(ports.length, FREE, JSON.stringify(ports));
    assert.equal(new Set(ports.map((port) => port.id)).size, FREE, 'a port booked twice');
    assert.deepEqual([...new Set(ports.map((port) => port.connection))].sort(), [...created].sort());
    const reservations = await rowsOn<{ port: string; n: number }>(
      stack,
      0,
      'SELECT port, COUNT(*) AS n FROM port_reservations WHERE connection IN (:created) GROUP BY port',
      { created },
    );
    assert.deepEqual(
      reservations.map((row) => Number(row.n)),
      Array.from({ length: FREE }, () => 1),
    );
    for (const node of [1, 2]) assert.deepEqual(views[node], ports, `node ${node + 1} sees other ports`);
  });
});
