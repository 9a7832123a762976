import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** One API or worker process started from a build folder (dist/ or the upgrade's). */
export interface Member {
  name: string;
  role: 'api' | 'worker';
  build: string;
  /** The API's base URL; undefined for workers. */
  url?: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Resolves once the process logged `message` (pino's msg). */
  logged(message: string, timeoutMs?: number): Promise<void>;
  startedAt: number;
}

/** Starts `node <build>/<role>/main.js` with `env`; its output goes to `<logDir>/<name>.log`. */
export function startMember(options: {
  name: string;
  role: 'api' | 'worker';
  build: string;
  env: NodeJS.ProcessEnv;
  logDir: string;
  port?: number;
}): Member {
  const { name, role, build, logDir, port } = options;
  const env: NodeJS.ProcessEnv = { ...options.env };
  if (port !== undefined) {
    env.PORT = String(port);
    env.PUBLIC_BASE_URL = `http://127.0.0.1:${port}/api/v2`;
  }
  const child = spawn(process.execPath, [path.join(build, role, 'main.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
  const seen = new Set<string>();
  const waiting = new Map<string, Array<() => void>>();
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      log.write(`${line}\n`);
      const message = /"msg":"([^"]*)"/.exec(line)?.[1];
      if (!message) return;
      seen.add(message);
      for (const resolve of waiting.get(message) ?? []) resolve();
      waiting.delete(message);
    });
  }
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  return {
    name,
    role,
    build,
    url: port === undefined ? undefined : `http://127.0.0.1:${port}/api/v2`,
    child,
    exited,
    startedAt: Date.now(),
    logged(message, timeoutMs = 120_000) {
      if (seen.has(message)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name} did not log "${message}" within ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        waiting.set(message, [...(waiting.get(message) ?? []), done]);
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (${code}) before it logged "${message}"`));
        });
      });
    },
  };
}

/** Waits until the member is ready: the API listening, the worker polling. */
export async function ready(member: Member): Promise<void> {
  await member.logged(member.role === 'api' ? 'API listening' : 'worker polling');
}

/** SIGTERM, then the exit code within `timeoutMs` (null when it had to be killed). */
export async function stopGracefully(member: Member, timeoutMs: number): Promise<number | null> {
  member.child.kill('SIGTERM');
  const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), timeoutMs).unref());
  const outcome = await Promise.race([member.exited, timer]);
  if (outcome === 'late') {
    member.child.kill('SIGKILL');
    await member.exited;
    return null;
  }
  return outcome;
}

/** Ends a member at once, as a crash or an OOM kill would. */
export async function kill(member: Member): Promise<void> {
  member.child.kill('SIGKILL');
  await member.exited;
}
