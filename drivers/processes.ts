import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Whether process `pid` runs: it exists and is not a zombie left to its parent; with `command`,
 * it is also that program (a recorded pid the system gave to another process does not count).
 */
export function processRuns(pid: number | null, command?: string): boolean {
  if (pid === null) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // Without /proc, the signal's answer is all there is to go by.
    return command === undefined;
  }
  // pid (comm) state …: the command may hold spaces and parentheses; the state follows the last ')'.
  const end = stat.lastIndexOf(')');
  const state = stat.slice(end + 2, end + 3);
  return (
    state !== 'Z' &&
    state !== 'X' &&
    (command === undefined || stat.slice(stat.indexOf('(') + 1, end) === command)
  );
}

/** Sends SIGTERM to a running process, waits up to `graceMs` for it to end, then sends SIGKILL. */
export async function endProcess(pid: number, graceMs: number, command?: string): Promise<void> {
  if (!processRuns(pid, command)) return;
  process.kill(pid, 'SIGTERM');
  for (const until = Date.now() + graceMs; processRuns(pid, command) && Date.now() < until;) await sleep(50);
  if (processRuns(pid, command)) process.kill(pid, 'SIGKILL');
}
