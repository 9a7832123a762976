import assert from 'node:assert/strict';
import type { PendingMessage } from '../../db/repositories/outbox-repository';
import { unitOfWork } from '../../db/unit-of-work';
import type { GaleraStack } from './stack';
import { galeraStack, rowsOn } from './stack';

const MESSAGES = 300;
const PREFIX = 'ixapi:galera-claim:';

/**
 * The relays of API processes on different nodes claim the same outbox at once. A row lock (or a
 * row skipped as locked) means nothing on another node, so each claim must hold across the
 * cluster: every message goes to one relay while its claim runs, and none is left undelivered.
 */
describe('outbox claims on a Galera cluster', function () {
  let stack: GaleraStack;

  before(function () {
    stack = galeraStack(this);
  });

  it('hands each message to exactly one of two relays on two nodes claiming at once, and delivers each once', async () => {
    const db = stack.dbs[0];
    await unitOfWork(db.sequelize, async (transaction) => {
      for (let i = 0; i < MESSAGES; i += 1)
        await db.outbox.enqueue({ workflowId: `${PREFIX}${i}`, signal: 'reconsider' }, transaction);
    });
    const ours = (messages: PendingMessage[]) => messages.filter((m) => m.workflowId.startsWith(PREFIX));

    /** Claims (leases far longer than the test) from node `node` until nothing is left to claim. */
    const relay = async (node: number) => {
      const claimed: PendingMessage[] = [];
      let rounds = 0;
      for (let empty = 0; empty < 3; rounds += 1) {
        const batch = await stack.dbs[node].outbox.claimDue({ graceMs: 0, leaseMs: 600_000, limit: 5 });
        claimed.push(...ours(batch));
        empty = batch.length ? 0 : empty + 1;
      }
      return { claimed, rounds };
    };
    // Both nodes' connections are open before the relays start, so that neither starts late.
    await Promise.all(
      [0, 1].map((node) => Promise.all(Array.from({ length: 4 }, () => stack.dbs[node].ping()))),
    );
    const [first, second] = await Promise.all([relay(0), relay(1)]);

    const ids = (messages: PendingMessage[]) => messages.map((m) => m.workflowId);
    const all = [...ids(first.claimed), ...ids(second.claimed)];
    const twice = all.filter((id, index) => all.indexOf(id) !== index);
    assert.deepEqual(twice, [], 'messages handed out twice while their claim ran');
    assert.equal(new Set(all).size, MESSAGES);
    // Both relays took part: the claims raced across nodes rather than one relay taking all.
    assert.ok(
      first.claimed.length > 0 && second.claimed.length > 0,
      `${first.claimed.length}/${second.claimed.length}`,
    );

    const marked = await Promise.all(
      [first, second].map(({ claimed }, node) =>
        Promise.all(claimed.map((message) => stack.dbs[node].outbox.markDelivered(message.id))),
      ),
    );
    assert.deepEqual(
      marked.flat(),
      Array.from({ length: MESSAGES }, () => true),
    );
    // Marked once more, through the other node, a message says it was delivered already.
    assert.equal(await stack.dbs[1].outbox.markDelivered(first.claimed[0].id), false);
    for (const node of [0, 1, 2]) {
      const [left] = await rowsOn<{ n: number }>(
        stack,
        node,
        'SELECT COUNT(*) AS n FROM workflow_outbox WHERE workflow_id LIKE :prefix AND delivered_at IS NULL',
        { prefix: `${PREFIX}%` },
      );
      assert.equal(Number(left.n), 0, `undelivered messages on node ${node + 1}`);
    }
  });
});
