import assert from 'node:assert/strict';
import type { GaleraStack } from './stack';
import { galeraStack } from './stack';

/**
 * A node that crashes leaves the other two a cluster that goes on taking writes; started again, it
 * rejoins from where it stopped and has what was written meanwhile.
 */
describe('a Galera node that crashed and came back', function () {
  let stack: GaleraStack;

  before(function () {
    stack = galeraStack(this);
  });
  after(() => stack.cluster.waitForSize(3));

  it('rejoins with the writes the others took while it was down', async () => {
    const { cluster } = stack;
    const table = `${stack.database}.galera_rejoin`;
    await cluster.query(0, `CREATE TABLE IF NOT EXISTS ${table} (id INT PRIMARY KEY)`);
    await cluster.kill(2);
    await cluster.waitForSize(2);
    await cluster.query(0, `INSERT INTO ${table} VALUES (1), (2)`);
    await cluster.query(1, `INSERT INTO ${table} VALUES (3)`);
    await cluster.restart(2);
    const rows = await cluster.query<{ id: number }>(2, `SELECT id FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((row) => row.id),
      [1, 2, 3],
    );
  });
});
