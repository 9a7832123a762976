import assert from 'node:assert/strict';
import { sharedFreshReads } from '../../db/fresh-reads';

/** A read whose answers the test hands out one by one, recording when each read started. */
function controlledRead() {
  const started: Array<{ key: string; answer: (value: string) => void; fail: (error: Error) => void }> = [];
  const read = (key: string) =>
    new Promise<string>((resolve, reject) => {
      started.push({ key, answer: resolve, fail: reject });
    });
  return { started, read };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('shared fresh reads', () => {
  it('answers a request that came during a read with the next read, never the one under way', async () => {
    const { started, read } = controlledRead();
    const shared = sharedFreshReads(read);
    const first = shared('A');
    const second = shared('A');
    const third = shared('A');
    assert.equal(started.length, 1, 'one read at a time per key');
    started[0].answer('before the change');
    assert.equal(await first, 'before the change');
    await settle();
    assert.equal(started.length, 2, 'the requests that waited get a read of their own');
    started[1].answer('after the change');
    assert.deepEqual(await Promise.all([second, third]), ['after the change', 'after the change']);
    await settle();
    assert.equal(started.length, 2, 'nobody waits: no read is started');
  });

  it('reads each key on its own', async () => {
    const { started, read } = controlledRead();
    const shared = sharedFreshReads(read);
    const a = shared('A');
    const b = shared('B');
    assert.deepEqual(
      started.map((s) => s.key),
      ['A', 'B'],
    );
    started[1].answer('b');
    started[0].answer('a');
    assert.deepEqual(await Promise.all([a, b]), ['a', 'b']);
  });

  it('fails the requests of a failed read only, and reads again for the next', async () => {
    const { started, read } = controlledRead();
    const shared = sharedFreshReads(read);
    const first = shared('A');
    const waiting = shared('A');
    started[0].fail(new Error('database down'));
    await assert.rejects(first, /database down/);
    await settle();
    started[1].answer('back');
    assert.equal(await waiting, 'back');
    const later = shared('A');
    assert.equal(started.length, 3);
    started[2].answer('again');
    assert.equal(await later, 'again');
  });
});
