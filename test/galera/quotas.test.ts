import assert from 'node:assert/strict';
import { createQuotaGuard } from '../../db/repositories/quota-guard';
import { allocatingTransaction } from '../../db/transactions';
import { newId } from '../../domain/ids';
import { NO_QUOTAS } from '../../domain/quotas';
import { importFreshAccount } from '../support/fresh-account';
import type { GaleraStack } from './stack';
import { galeraStack, rowsOn } from './stack';

/**
 * A customer's quota holds when its writes go through two nodes at once: a row lock on one node is
 * unknown to the other, so each write that counts against a quota moves its tree's turn, and
 * certification lets one of two such writes commit; the other runs again and counts the first.
 * Two MAC registrations of a customer with room for one more show it, each through its own node,
 * both past the quota check before either commits.
 */
describe('a quota held by writes sent through two nodes at once', function () {
  let stack: GaleraStack;

  before(function () {
    stack = galeraStack(this);
  });

  it('lets one of two registrations checked at once on two nodes commit, and refuses the other', async () => {
    const customer = await importFreshAccount('acc-galera-quota', 'Galera Quota Networks', stack.dbs[0]);
    // Node 2 has applied the new account before it is asked to count against its quota (a node
    // that had not yet would find no tree to take a turn on; deployments read with wsrep_sync_wait).
    const seen = await rowsOn<{ id: string }>(stack, 1, 'SELECT id FROM accounts WHERE id = :customer', {
      customer,
    });
    assert.equal(seen.length, 1, 'node 2 has the account');
    let checked = 0;
    let bothChecked!: () => void;
    const barrier = new Promise<void>((resolve) => (bothChecked = resolve));
    const attempts = [0, 0];
    const register = (node: number) => {
      const { sequelize } = stack.dbs[node];
      const quotas = createQuotaGuard({ sequelize, quotas: { ...NO_QUOTAS, macs: 1 } });
      return allocatingTransaction(sequelize, async (transaction) => {
        attempts[node] += 1;
        await quotas.requireRoom(customer, { macs: 1 }, transaction);
        // Both are past the check before either writes and commits.
        if ((checked += 1) === 2) bothChecked();
        await barrier;
        await sequelize.query(
          `INSERT INTO macs (id, managing_account, consuming_account, external_ref, address, valid_not_before,
             valid_not_after, created_at, updated_at)
           VALUES (:id, :customer, :customer, NULL, :address, NULL, NULL, NOW(3), NOW(3))`,
          {
            replacements: { id: newId('mac'), customer, address: `02:00:5e:10:00:1${node}` },
            transaction,
          },
        );
      });
    };
    const outcomes = await Promise.allSettled([register(0), register(1)]);
    const refused: unknown[] = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason as unknown] : [],
    );
    assert.equal(refused.length, 1, `both registrations committed (attempts ${attempts.join(', ')})`);
    assert.match(String(refused[0]), /quota/, String(refused[0]));
    assert.deepEqual([...attempts].sort(), [1, 2], 'the refused one ran again after its commit was refused');
    for (const node of [0, 1, 2]) {
      const [row] = await rowsOn<{ n: number }>(
        stack,
        node,
        'SELECT COUNT(*) AS n FROM macs WHERE managing_account = :customer',
        { customer },
      );
      assert.equal(Number(row.n), 1, `node ${node + 1} holds one MAC of the customer`);
    }
  });
});
