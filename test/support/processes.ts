import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { login, request } from './http';
import { stack } from './stack';
import { eventually } from './wait';

const ROOT = path.resolve(__dirname, '../..');

/** A process started from dist/, its log lines (pino JSON) and its exit. */
export function startBuilt(script: string, env: NodeJS.ProcessEnv) {
  const file = path.join(ROOT, 'dist', script);
  assert.ok(existsSync(file), `${file} is missing: run \`npm run build\` first (npm test does)`);
  const child: ChildProcess = spawn(process.execPath, [file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => lines.push(line));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logged = (message: string) =>
    eventually(
      `${script} logging "${message}"`,
      () => Promise.resolve(lines.some((line) => line.includes(`"msg":"${message}"`)) ? true : undefined),
      60_000,
    );
  return { child, lines, exited, logged };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The compiled API and worker on the stack's database and Temporal server, with a task queue of
 * their own (what this API starts, this worker runs), both started and ready; `extraEnv` adds to
 * their environment.
 */
export async function startBuiltPair(extraEnv: NodeJS.ProcessEnv = {}) {
  const port = await freePort();
  const env = {
    ...process.env,
    ...stack().env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}/api/v2`,
    TEMPORAL_TASK_QUEUE: `ixapi-dist-${randomBytes(3).toString('hex')}`,
    ...extraEnv,
  };
  const worker = startBuilt('worker/main.js', env);
  const api = startBuilt('api/main.js', env);
  await Promise.all([worker.logged('worker polling'), api.logged('API listening')]);
  return { worker, api, baseUrl: `http://127.0.0.1:${port}/api/v2` };
}

/**
 * Orders a 10G connection through `baseUrl` as the first customer, waits for it in production, then
 * takes it down (10G ports are given back at once: the workflow ends today) and waits for it
 * decommissioned; answers its id.
 */
export async function orderAndTakeDown(baseUrl: string, demarc: string): Promise<string> {
  const token = (await login('customer', 0)).accessToken;
  const created = await request('POST', '/connections', {
    baseUrl,
    token,
    body: {
      managing_account: 'acc-spree-networks',
      consuming_account: 'acc-spree-networks',
      billing_account: 'acc-spree-networks',
      role_assignments: ['ra-spree-networks-implementation', 'ra-spree-networks-noc'],
      product_offering: 'po-connection-ham-10g',
      mode: 'standalone',
      port_quantity: 1,
      subscriber_side_demarcs: [demarc],
    },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  const stateOf = async () =>
    (await request('GET', `/connections/${id}`, { baseUrl, token })).body.state as string;
  await eventually('the connection in production', async () =>
    (await stateOf()) === 'production' ? true : undefined,
  );
  const gone = await request('DELETE', `/connections/${id}`, { baseUrl, token });
  assert.equal(gone.status, 202, gone.text);
  await eventually('the connection decommissioned', async () =>
    (await stateOf()) === 'decommissioned' ? true : undefined,
  );
  return id;
}
