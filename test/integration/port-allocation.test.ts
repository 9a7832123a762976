import assert from 'node:assert/strict';
import { DatabaseError, QueryTypes } from 'sequelize';
import { UnableToFulfillError } from '../../domain/errors';
import type { PortDemand } from '../../db/allocation/ports';
import { stack } from '../support/stack';

const EXCHANGE = 'acc-demo-ix';
const HOLD = 'held-by-allocation-test';
const CUSTOMER = {
  managing_account: 'acc-spree-networks',
  consuming_account: 'acc-spree-networks',
  billing_account: 'acc-spree-networks',
};

interface PortRow {
  id: string;
  device: string;
  pop: string;
  connection: string | null;
  managing_account: string;
  state: string;
}

const query = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  stack().db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

describe('port allocation', () => {
  let pop: string;
  let man: string;
  let speed: number;

  const demand = (connection: string, quantity: number, where: Partial<PortDemand> = {}): PortDemand => ({
    connection,
    pop,
    metroAreaNetwork: man,
    speed,
    quantity,
    accounts: CUSTOMER,
    ...where,
  });
  const allocate = (d: PortDemand) =>
    stack().db.portAllocation.transaction((transaction) =>
      stack().db.portAllocation.allocate(d, transaction),
    );
  const release = (connection: string) =>
    stack().db.portAllocation.transaction((transaction) =>
      stack().db.portAllocation.release(connection, EXCHANGE, transaction),
    );
  const portsOf = (connection: string) =>
    query<PortRow>('SELECT * FROM ports WHERE connection = :connection ORDER BY id', { connection });

  /** Leaves exactly `free` spare ports of the chosen speed at the chosen PoP; holds the others. */
  async function leaveFree(free: number) {
    await stack().db.sequelize.query(`UPDATE ports SET connection = NULL WHERE connection = :hold`, {
      replacements: { hold: HOLD },
    });
    const spare = await query<PortRow>(
      `SELECT * FROM ports WHERE pop = :pop AND speed = :speed AND connection IS NULL AND managing_account = :exchange
       ORDER BY device, id`,
      { pop, speed, exchange: EXCHANGE },
    );
    assert.ok(spare.length >= free, `only ${spare.length} spare ports`);
    // Spread the free ones over devices: keep every other port, round-robin by device.
    const byDevice = new Map<string, PortRow[]>();
    for (const port of spare) byDevice.set(port.device, [...(byDevice.get(port.device) ?? []), port]);
    const keep: string[] = [];
    for (let i = 0; keep.length < free; i += 1)
      for (const ports of byDevice.values()) if (ports[i] && keep.length < free) keep.push(ports[i].id);
    await stack().db.sequelize.query(
      `UPDATE ports SET connection = :hold WHERE pop = :pop AND speed = :speed AND connection IS NULL
       AND managing_account = :exchange AND id NOT IN (:keep)`,
      { replacements: { hold: HOLD, pop, speed, exchange: EXCHANGE, keep } },
    );
    return keep;
  }

  before(async () => {
    // The PoP and speed with the most spare ports spread over more than one device.
    const [choice] = await query<{ pop: string; speed: number; man: string }>(
      `SELECT p.pop, p.speed, pop.metro_area_network AS man FROM ports p JOIN pops pop ON pop.id = p.pop
       WHERE p.connection IS NULL AND p.managing_account = :exchange
       GROUP BY p.pop, p.speed, pop.metro_area_network HAVING COUNT(DISTINCT p.device) > 1
       ORDER BY COUNT(*) DESC, p.pop LIMIT 1`,
      { exchange: EXCHANGE },
    );
    ({ pop, speed, man } = choice);
  });

  afterEach(async () => {
    await stack().db.sequelize.query(
      `UPDATE ports SET connection = NULL, state = 'production', managing_account = :exchange,
         consuming_account = :exchange, billing_account = :exchange
       WHERE connection = :hold OR connection LIKE 'conn-alloc-%'`,
      { replacements: { hold: HOLD, exchange: EXCHANGE } },
    );
  });

  it('gives 5 free ports to exactly 5 of 20 concurrent orders, never one port twice', async () => {
    const free = await leaveFree(5);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => allocate(demand(`conn-alloc-${i}`, 1))),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 5);
    for (const r of results)
      if (r.status === 'rejected') assert.ok(r.reason instanceof UnableToFulfillError, String(r.reason));
    const taken = won.map(
      (r) => (r as PromiseFulfilledResult<{ ports: Array<{ id: string }> }>).value.ports[0].id,
    );
    assert.deepEqual([...taken].sort(), [...free].sort());
    const rows = await query<PortRow>('SELECT * FROM ports WHERE id IN (:free)', { free });
    for (const row of rows) {
      assert.match(row.connection ?? '', /^conn-alloc-\d+$/);
      assert.equal(row.managing_account, CUSTOMER.managing_account);
      assert.equal(row.state, 'allocated');
    }
    assert.equal(new Set(rows.map((r) => r.connection)).size, 5);
  });

  it('keeps a bundle on one device, and refuses one no device can hold without changing anything', async () => {
    const [device] = await query<{ device: string; free: number }>(
      `SELECT device, COUNT(*) AS free FROM ports WHERE pop = :pop AND speed = :speed AND connection IS NULL
       GROUP BY device ORDER BY free DESC LIMIT 1`,
      { pop, speed },
    );
    const bundle = await allocate(demand('conn-alloc-bundle', 2));
    assert.equal(new Set((await portsOf('conn-alloc-bundle')).map((p) => p.device)).size, 1);
    assert.equal(bundle.ports.length, 2);
    const tooMany = Number(device.free) + 1;
    await assert.rejects(allocate(demand('conn-alloc-huge', tooMany)), UnableToFulfillError);
    assert.deepEqual(await portsOf('conn-alloc-huge'), []);
  });

  it('fills the device with the least room first, so that roomy devices stay roomy', async () => {
    const spare = await query<PortRow>(
      `SELECT * FROM ports WHERE pop = :pop AND speed = :speed AND connection IS NULL AND managing_account = :exchange
       ORDER BY device DESC, id`,
      { pop, speed, exchange: EXCHANGE },
    );
    const devices = [...new Set(spare.map((port) => port.device))];
    assert.ok(devices.length >= 2, 'two devices with spare ports');
    // The last device by id keeps one spare port, the others two or more: the order lands on it.
    const tight = devices[0];
    const keep = [
      ...spare.filter((port) => port.device === tight).slice(0, 1),
      ...devices.slice(1).flatMap((device) => spare.filter((port) => port.device === device).slice(0, 2)),
    ].map((port) => port.id);
    await stack().db.sequelize.query(
      `UPDATE ports SET connection = :hold WHERE pop = :pop AND speed = :speed AND connection IS NULL
       AND managing_account = :exchange AND id NOT IN (:keep)`,
      { replacements: { hold: HOLD, pop, speed, exchange: EXCHANGE, keep } },
    );
    assert.equal((await allocate(demand('conn-alloc-tight', 1))).device, tight);
    // Now no device has a single spare port left but two: the first by id is taken.
    const [roomy] = devices.slice(1).sort();
    assert.equal((await allocate(demand('conn-alloc-roomy', 1))).device, roomy);
  });

  it('takes ports anywhere in the metro area network when the offering names no PoP', async () => {
    const allocated = await allocate(demand('conn-alloc-man', 1, { pop: null }));
    const [pops] = await query<{ man: string }>(
      'SELECT metro_area_network AS man FROM pops WHERE id = :pop',
      {
        pop: allocated.pop,
      },
    );
    assert.equal(pops.man, man);
  });

  it('runs a transaction the database chose as a deadlock victim again, and gives up after a few', async () => {
    const deadlock = () =>
      new DatabaseError(
        Object.assign(new Error('Deadlock found when trying to get lock'), {
          errno: 1213,
          code: 'ER_LOCK_DEADLOCK',
          sql: 'SELECT 1',
        }),
      );
    let attempts = 0;
    const result = await stack().db.portAllocation.transaction(() => {
      attempts += 1;
      return attempts < 3 ? Promise.reject(deadlock()) : Promise.resolve('done');
    });
    assert.deepEqual([result, attempts], ['done', 3]);
    attempts = 0;
    await assert.rejects(
      stack().db.portAllocation.transaction(() => {
        attempts += 1;
        return Promise.reject(deadlock());
      }),
      /Deadlock/,
    );
    assert.equal(attempts, 5);
  });

  it('gives released ports back to the exchange as spare ports', async () => {
    const { ports } = await allocate(demand('conn-alloc-released', 2));
    assert.equal(await release('conn-alloc-released'), 2);
    const rows = await query<PortRow>('SELECT * FROM ports WHERE id IN (:ids)', {
      ids: ports.map((p) => p.id),
    });
    for (const row of rows)
      assert.deepEqual([row.connection, row.managing_account, row.state], [null, EXCHANGE, 'production']);
    assert.equal(await release('conn-alloc-released'), 0, 'releasing twice changes nothing');
  });
});
