import assert from 'node:assert/strict';
import type { ApiService } from '../../api/server';
import type { GaleraStack } from './stack';
import { galeraStack, loginAt, startNodeApis, stopApis } from './stack';

/**
 * A node that crashes leaves the other two a cluster that goes on taking writes; started again, it
 * rejoins from where it stopped and has what was written meanwhile. An API replica on the node that
 * is down answers 503 with Retry-After, and serves again once the node is back.
 */
describe('a Galera node that crashed and came back', function () {
  let stack: GaleraStack;
  let apis: ApiService[] = [];

  before(async function () {
    stack = galeraStack(this);
    apis = await startNodeApis(stack, [0, 2]);
  });
  after(async () => {
    await stopApis(apis);
    // The files after this one want all three nodes, whatever became of this test.
    if (!stack.cluster.running(2)) await stack.cluster.restart(2);
    await stack.cluster.waitForSize(3);
  });

  it('rejoins with the writes the others took while it was down; its API replica answers 503 meanwhile', async () => {
    const { cluster } = stack;
    const [onNode1, onNode3] = apis;
    const table = `${stack.database}.galera_rejoin`;
    await cluster.query(0, `CREATE TABLE IF NOT EXISTS ${table} (id INT PRIMARY KEY)`);
    assert.equal((await loginAt(stack, onNode3, 'acc-thames-cloud')).status, 201);
    await cluster.kill(2);
    await cluster.waitForSize(2);
    await cluster.query(0, `INSERT INTO ${table} VALUES (1), (2)`);
    await cluster.query(1, `INSERT INTO ${table} VALUES (3)`);

    // Its pooled connection is gone and a new one is refused: a problem a client retries, twice.
    for (let i = 0; i < 2; i += 1) {
      const down = await loginAt(stack, onNode3, 'acc-thames-cloud');
      assert.equal(down.status, 503, down.text);
      assert.equal(down.headers.get('retry-after'), '5');
      assert.match(down.headers.get('content-type') ?? '', /application\/json/);
      assert.equal((down.body as { status: number }).status, 503);
    }
    assert.equal((await loginAt(stack, onNode1, 'acc-thames-cloud')).status, 201);

    await cluster.restart(2);
    const rows = await cluster.query<{ id: number }>(2, `SELECT id FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((row) => row.id),
      [1, 2, 3],
    );
    assert.equal((await loginAt(stack, onNode3, 'acc-thames-cloud')).status, 201);
  });
});
