import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { acquireHostLock } from '../support/host-lock';

describe('the host lock the fabric tests share', () => {
  const name = `test-${process.pid}-${Date.now()}`;

  it('lets one holder in at a time, and the next once it gives the lock back', async () => {
    const release = await acquireHostLock(name, 1_000);
    const order: string[] = [];
    const waiting = acquireHostLock(name, 5_000).then((next) => {
      order.push('second holds it');
      next();
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    order.push('first gives it back');
    release();
    await waiting;
    assert.deepEqual(order, ['first gives it back', 'second holds it']);
  });

  it('fails after waiting, naming the holder', async () => {
    const release = await acquireHostLock(name, 1_000);
    try {
      await assert.rejects(acquireHostLock(name, 300), new RegExp(`held by process ${process.pid}`));
    } finally {
      release();
    }
  });

  it('takes over the lock of a holder that died', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const folder = path.join(tmpdir(), `ixapi-${name}.lock`);
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'pid'), dead.stdout);
    const release = await acquireHostLock(name, 2_000);
    release();
  });
});
