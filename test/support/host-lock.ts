import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether process `pid` is alive. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock `name` of this host, shared by every test process of every run: a folder in the
 * temporary directory made atomically, with the holder's pid in it. A lock whose holder died is
 * taken over. Waits until it is free, or fails after `waitMs` naming the holder. Answers the
 * function that gives it back.
 */
export async function acquireHostLock(name: string, waitMs: number): Promise<() => void> {
  const folder = path.join(tmpdir(), `ixapi-${name}.lock`);
  const pidFile = path.join(folder, 'pid');
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      mkdirSync(folder);
      writeFileSync(pidFile, String(process.pid));
      return () => rmSync(folder, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder: number | undefined;
    try {
      holder = Number(readFileSync(pidFile, 'utf8'));
    } catch {
      // Being taken right now, or left by a holder that died before writing its pid.
      const age = Date.now() - (statSync(folder, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 10_000) rmSync(folder, { recursive: true, force: true });
    }
    // A dead holder's lock is removed, unless another waiter took it over in the meantime.
    if (holder !== undefined && Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      const still = (() => {
        try {
          return Number(readFileSync(pidFile, 'utf8'));
        } catch {
          return undefined;
        }
      })();
      if (still === holder) rmSync(folder, { recursive: true, force: true });
    }
    if (Date.now() > deadline)
      throw new Error(`the host lock ${folder} is still held by process ${holder ?? '(unknown)'}`);
    await sleep(200);
  }
}
