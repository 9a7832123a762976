import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import pino from 'pino';
import { QueryTypes } from 'sequelize';
import { createWorkflowStarter } from '../../temporal/client';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import { dropDatabase, ensureDatabase } from '../../db/connection';
import { migrate } from '../../db/migrator';
import type { PendingMessage } from '../../db/repositories/outbox-repository';
import { stack, throwAwayDatabaseUrl } from '../support/stack';

/**
 * The outbox with several API replicas: each message is claimed before it is sent, so that of
 * several relays (and the handler that wrote it) exactly one sends it; delivered rows are pruned.
 * These tests use a database of their own, where no other relay runs.
 */
describe('outbox relay across replicas', function () {
  this.timeout(120_000);
  const url = throwAwayDatabaseUrl();
  const replicas: Database[] = [];
  const logger = pino({ level: 'silent' });

  before(async () => {
    await ensureDatabase(url);
    for (let i = 0; i < 2; i += 1) {
      replicas.push(openDatabase({ url, apiSecretHashKey: stack().config.apiSecretHashKey }));
    }
    await migrate(replicas[0].sequelize);
  });
  after(async () => {
    for (const db of replicas) await db.close();
    await dropDatabase(url);
  });

  /** A replica's starter whose Temporal client counts the signals it sends, by workflow id. */
  function replica(db: Database, sent: Map<string, number>) {
    const counting: WorkflowClientInterceptor = {
      async signal(input, next) {
        sent.set(input.workflowExecution.workflowId, (sent.get(input.workflowExecution.workflowId) ?? 0) + 1);
        return next(input);
      },
    };
    const client = new Client({
      connection: stack().api.temporal.client.connection,
      namespace: stack().config.temporalNamespace,
      interceptors: { workflow: [counting] },
    });
    return createWorkflowStarter({ client, outbox: db.outbox, taskQueue: 'unused', logger });
  }

  /** A replica's starter whose Temporal is not there (nothing listens); sends give up within 300 ms. */
  function unreachableStarter(db: Database, pauseMs?: number) {
    const unreachable = new Client({
      connection: Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 200 }),
      namespace: stack().config.temporalNamespace,
    });
    const starter = createWorkflowStarter({
      client: unreachable,
      outbox: db.outbox,
      taskQueue: 'unused',
      logger,
      sendWithinMs: { writer: 300, relay: 300 },
      pauseMs,
    });
    return { unreachable, starter };
  }

  /** Signals to workflows that do not run: Temporal answers "not found", which counts as delivered. */
  async function enqueueSignals(count: number): Promise<PendingMessage[]> {
    const run = randomBytes(4).toString('hex');
    return replicas[0].sequelize.transaction(async (transaction) => {
      const messages: PendingMessage[] = [];
      for (let i = 0; i < count; i += 1) {
        messages.push(
          await replicas[0].outbox.enqueue(
            { workflowId: `ixapi:relay-test:${run}:${i}`, signal: 'reconsider' },
            transaction,
          ),
        );
      }
      return messages;
    });
  }

  it('has two relays running at once send each message exactly once', async () => {
    const messages = await enqueueSignals(80);
    const sent = new Map<string, number>();
    const [a, b] = replicas.map((db) => replica(db, sent));
    let rounds = 0;
    while ((await replicas[0].outbox.backlog()).undelivered > 0) {
      rounds += 1;
      assert.ok(rounds < 50, 'the relays stopped making progress');
      await Promise.all([a.relayOnce(0), b.relayOnce(0)]);
    }
    assert.equal(sent.size, messages.length, 'every message was sent');
    const twice = [...sent].filter(([, times]) => times !== 1);
    assert.deepEqual(twice, [], 'no message was sent twice');
    for (const message of messages) assert.equal(await replicas[1].outbox.isDelivered(message.id), true);
  });

  it('lets the writer send what it wrote, and no relay take it meanwhile', async () => {
    const [message] = await enqueueSignals(1);
    const sent = new Map<string, number>();
    const writer = replica(replicas[0], sent);
    const relay = replica(replicas[1], sent);
    // The writer holds its claim while it sends; a relay that looks at the same moment skips it.
    assert.equal(await replicas[0].outbox.claim(message.id, 60_000), true);
    assert.equal(await relay.relayOnce(0), 0);
    assert.equal(await replicas[1].outbox.claim(message.id, 60_000), false);
    assert.equal(sent.size, 0);
    // A second delivery of a delivered message sends nothing.
    await replicas[0].sequelize.query('UPDATE workflow_outbox SET claimed_until = NULL WHERE id = :id', {
      replacements: { id: message.id },
    });
    assert.equal(await writer.deliver(message), true);
    assert.equal(await relay.deliver(message), true);
    assert.deepEqual([...sent.values()], [1]);
  });

  it('takes over a message whose claimant died once its claim has run out', async () => {
    const [message] = await enqueueSignals(1);
    const sent = new Map<string, number>();
    assert.equal(await replicas[0].outbox.claim(message.id, 300), true);
    const relay = replica(replicas[1], sent);
    assert.equal(await relay.relayOnce(0), 0, 'the claim still runs');
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(await relay.relayOnce(0), 1);
    assert.deepEqual([...sent.values()], [1]);
  });

  it('stops a round at a message Temporal does not take, and leaves the rest to any replica', async () => {
    const messages = await enqueueSignals(5);
    const { unreachable, starter: relay } = unreachableStarter(replicas[1]);
    try {
      assert.equal(await relay.relayOnce(0), 0);
      // The process that wrote a message gives up on it as well.
      assert.equal(await relay.deliver(messages[4]), false);
    } finally {
      await unreachable.connection.close();
    }
    const rows = await replicas[0].sequelize.query<{ id: string | number; attempts: number; held: number }>(
      `SELECT id, attempts, claimed_until IS NOT NULL AS held FROM workflow_outbox WHERE id IN (:ids) ORDER BY id`,
      { replacements: { ids: messages.map((m) => m.id) }, type: QueryTypes.SELECT },
    );
    assert.deepEqual(
      rows.map((row) => [Number(row.attempts), Number(row.held)]),
      [
        [1, 0],
        [0, 0],
        [0, 0],
        [0, 0],
        [1, 0],
      ],
    );
    // Another replica sends them all.
    const sent = new Map<string, number>();
    assert.equal(await replica(replicas[0], sent).relayOnce(0), 5);
  });

  it('sends what commits in the background, and after a failed send leaves the rest to the relay', async () => {
    const { unreachable, starter: writer } = unreachableStarter(replicas[0], 600_000);
    const stopSending = replicas[0].outbox.sendCommittedWith((message) => writer.sendSoon(message));
    try {
      const [first] = await enqueueSignals(1);
      await writer.settle();
      const [second] = await enqueueSignals(1);
      await writer.settle();
      const rows = await replicas[0].sequelize.query<{ attempts: number; held: number; delivered: number }>(
        `SELECT attempts, claimed_until IS NOT NULL AS held, delivered_at IS NOT NULL AS delivered
           FROM workflow_outbox WHERE id IN (:ids) ORDER BY id`,
        { replacements: { ids: [first.id, second.id] }, type: QueryTypes.SELECT },
      );
      // The first was tried once and let go; the second, committed while sends pause, was not tried.
      assert.deepEqual(
        rows.map((row) => [Number(row.attempts), Number(row.held), Number(row.delivered)]),
        [
          [1, 0, 0],
          [0, 0, 0],
        ],
      );
    } finally {
      stopSending();
      await unreachable.connection.close();
    }
    // A relay that reaches Temporal sends both.
    assert.equal(await replica(replicas[1], new Map()).relayOnce(0), 2);
  });

  it('prunes delivered messages older than the retention, and nothing undelivered', async () => {
    const [old, recent, pending] = await enqueueSignals(3);
    await replicas[0].sequelize.query(
      `UPDATE workflow_outbox SET delivered_at = CASE id WHEN :old THEN NOW(3) - INTERVAL 8 DAY
         ELSE NOW(3) - INTERVAL 1 DAY END WHERE id IN (:old, :recent)`,
      { replacements: { old: old.id, recent: recent.id } },
    );
    await replicas[0].outbox.prune(new Date(Date.now() - 7 * 86_400_000));
    const left = await replicas[0].sequelize.query<{ id: string | number }>(
      'SELECT id FROM workflow_outbox WHERE id IN (:ids) ORDER BY id',
      { replacements: { ids: [old.id, recent.id, pending.id] }, type: QueryTypes.SELECT },
    );
    assert.deepEqual(
      left.map((row) => Number(row.id)),
      [recent.id, pending.id],
    );
  });
});
