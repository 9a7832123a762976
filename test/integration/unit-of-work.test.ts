import assert from 'node:assert/strict';
import type { Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import { dropDatabase, ensureDatabase } from '../../db/connection';
import { migrate } from '../../db/migrator';
import type { PendingMessage } from '../../db/repositories/outbox-repository';
import { conflictsRetried, isConflict, unitOfWork } from '../../db/unit-of-work';
import { stack, throwAwayDatabaseUrl } from '../support/stack';
import { barrier } from '../support/wait';

/**
 * A write is one unit of work: its rows and its outbox rows commit together, a write the database
 * rolls back for a conflict runs again whole, and only what committed is sent. Runs on a database
 * of its own, where no relay runs.
 */
describe('the unit of work', function () {
  this.timeout(60_000);
  const url = throwAwayDatabaseUrl('uow');
  let db: Database;
  const sent: PendingMessage[] = [];

  before(async () => {
    await ensureDatabase(url);
    db = openDatabase({ url, apiSecretHashKey: stack().config.apiSecretHashKey });
    await migrate(db.sequelize);
    await db.sequelize.query('CREATE TABLE probe (id VARCHAR(8) PRIMARY KEY, n INT NOT NULL)');
    await db.sequelize.query("INSERT INTO probe VALUES ('a', 0), ('b', 0)");
    db.outbox.sendCommittedWith((message) => sent.push(message));
  });
  after(async () => {
    await db.close();
    await dropDatabase(url);
  });

  it('runs again the write the database chose as a deadlock victim, and sends only what committed', async () => {
    sent.length = 0;
    const retriedBefore = conflictsRetried();
    const bothHoldOne = barrier(2);
    const attempts = { ab: 0, ba: 0 };
    /** Locks `first`, waits until the other write holds its own, then takes `second`: a deadlock. */
    const write = (name: 'ab' | 'ba', first: string, second: string) =>
      unitOfWork(db.sequelize, async (transaction: Transaction) => {
        attempts[name] += 1;
        await db.outbox.enqueue({ workflowId: `ixapi:probe:${name}`, signal: 'reconsider' }, transaction);
        for (const [index, id] of [first, second].entries()) {
          await db.sequelize.query('UPDATE probe SET n = n + 1 WHERE id = :id', {
            replacements: { id },
            transaction,
          });
          if (index === 0 && attempts[name] === 1) await bothHoldOne();
        }
        return name;
      });
    assert.deepEqual(await Promise.all([write('ab', 'a', 'b'), write('ba', 'b', 'a')]), ['ab', 'ba']);

    // One of the two ran twice: the database undid its first run, and nothing of it stayed.
    assert.equal(attempts.ab + attempts.ba, 3);
    assert.equal(
      conflictsRetried() - retriedBefore,
      1,
      'the run again is counted (ixapi_db_conflicts_retried_total)',
    );
    const counts = await db.sequelize.query<{ id: string; n: number }>(
      'SELECT id, n FROM probe ORDER BY id',
      {
        type: QueryTypes.SELECT,
      },
    );
    assert.deepEqual(
      counts.map(({ id, n }) => [id, Number(n)]),
      [
        ['a', 2],
        ['b', 2],
      ],
    );
    const rows = await db.sequelize.query<{ workflow_id: string }>(
      "SELECT workflow_id FROM workflow_outbox WHERE workflow_id LIKE 'ixapi:probe:%' ORDER BY workflow_id",
      { type: QueryTypes.SELECT },
    );
    assert.deepEqual(
      rows.map((row) => row.workflow_id),
      ['ixapi:probe:ab', 'ixapi:probe:ba'],
    );
    // Each committed message went to the sender once; the undone run's never did.
    assert.deepEqual(sent.map((message) => message.workflowId).sort(), ['ixapi:probe:ab', 'ixapi:probe:ba']);
  });

  it('sends nothing of a write that fails, and lets other errors through at once', async () => {
    sent.length = 0;
    let runs = 0;
    await assert.rejects(
      unitOfWork(db.sequelize, async (transaction) => {
        runs += 1;
        await db.outbox.enqueue({ workflowId: 'ixapi:probe:failed', signal: 'reconsider' }, transaction);
        throw new Error('the order breaks a rule');
      }),
      /breaks a rule/,
    );
    assert.equal(runs, 1);
    assert.deepEqual(sent, []);
    const [row] = await db.sequelize.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM workflow_outbox WHERE workflow_id = 'ixapi:probe:failed'",
      { type: QueryTypes.SELECT },
    );
    assert.equal(Number(row.n), 0);
  });

  it('gives up on a write that keeps colliding, with the conflict', async () => {
    let runs = 0;
    const conflict = Object.assign(new Error('Deadlock found'), { parent: { errno: 1213 } });
    assert.equal(isConflict(conflict), true);
    // A lock wait that timed out is one too: the whole transaction runs again.
    assert.equal(
      isConflict(Object.assign(new Error('Lock wait timeout'), { parent: { errno: 1205 } })),
      true,
    );
    await assert.rejects(
      unitOfWork(db.sequelize, () => {
        runs += 1;
        return Promise.reject(conflict);
      }),
      (error: unknown) => error === conflict,
    );
    assert.equal(runs, 5);
  });
});
