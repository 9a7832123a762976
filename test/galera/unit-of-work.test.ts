import assert from 'node:assert/strict';
import type { Transaction } from 'sequelize';
import { unitOfWork } from '../../db/unit-of-work';
import type { GaleraStack } from './stack';
import { barrier } from '../support/wait';
import { galeraStack, rowsOn } from './stack';

/**
 * On a Galera cluster a row lock holds only on its node: two transactions on two nodes that change
 * the same row both run to their commit, and certification refuses the second (1213). The unit of
 * work runs that one again, and both end committed.
 *
 * The second commits only once the first has: two commits sent at the same instant may also end
 * with the cluster replaying the later one itself, which no client sees as a refusal.
 */
describe('the unit of work on a Galera cluster', function () {
  let stack: GaleraStack;

  before(async function () {
    stack = galeraStack(this);
    await stack.dbs[0].sequelize.query(
      'CREATE TABLE IF NOT EXISTS galera_probe (id VARCHAR(8) PRIMARY KEY, n INT NOT NULL)',
    );
    await stack.dbs[0].sequelize.query("REPLACE INTO galera_probe VALUES ('a', 0)");
  });

  it('runs again the transaction whose commit certification refused, on its node, until both committed', async () => {
    const bothWrote = barrier(2);
    const attempts = [0, 0];
    const order: { first?: Promise<number> } = {};
    const write = (node: number) =>
      unitOfWork(
        stack.dbs[node].sequelize,
        async (transaction: Transaction) => {
          await stack.dbs[node].sequelize.query("UPDATE galera_probe SET n = n + 1 WHERE id = 'a'", {
            transaction,
          });
          // Both have changed the row on their own node before either commits.
          if (attempts[node] === 1) {
            await bothWrote();
            if (node === 1) await order.first;
          }
          return node;
        },
        { started: () => (attempts[node] += 1) },
      );
    order.first = write(0);
    assert.deepEqual(await Promise.all([order.first, write(1)]), [0, 1]);
    // The first committed at once, the second was refused once and ran again.
    assert.deepEqual(attempts, [1, 2], `attempts per node: ${attempts.join(', ')}`);
    for (const node of [0, 1, 2]) {
      const [row] = await rowsOn<{ n: number }>(stack, node, "SELECT n FROM galera_probe WHERE id = 'a'");
      assert.equal(Number(row.n), 2, `node ${node + 1}`);
    }
  });

  it('finds a primary key on every table of the service (Galera replicates rows by their key)', async () => {
    const keyless = await rowsOn<{ name: string }>(
      stack,
      0,
      `SELECT t.table_name AS name FROM information_schema.tables t
        WHERE t.table_schema = :database AND t.table_type = 'BASE TABLE'
          AND NOT EXISTS (SELECT 1 FROM information_schema.table_constraints c
            WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name
              AND c.constraint_type = 'PRIMARY KEY')
        ORDER BY t.table_name`,
      { database: stack.database },
    );
    assert.deepEqual(
      keyless.map((row) => row.name),
      [],
    );
  });
});
