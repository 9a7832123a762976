import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { searchAttributeFlags } from '../../domain/search-attributes';
import { endProcess } from '../../drivers/processes';
import { findTemporalCli } from '../../scripts/temporal-cli';

/** How long a dev server may take to answer: on a machine busy with the other tiers, long. */
const READY_WITHIN_MS = 120_000;

export interface DevServerOptions {
  /** The namespace the server makes at start. */
  namespace: string;
  /** More arguments of `temporal server start-dev` (dynamic configuration, say). */
  extraArgs?: string[];
}

/** A port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A Temporal dev server for a test tier, from the installed Temporal CLI, with the project's search
 * attributes; its `teardown` stops it and removes its files.
 *
 * It keeps its SQLite database in a file (in memory where the host has a tmpfs), never in SQLite's
 * memory database: under load the dev server has been seen to lose every table of that one mid-run
 * ("no such table: namespaces"). And it is given minutes to answer rather than the SDK's fixed
 * five seconds, which a server making its schema beside busy test tiers may miss.
 */
export async function startDevServer(options: DevServerOptions): Promise<TestWorkflowEnvironment> {
  const folder = mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'ixapi-temporal-'));
  const address = `127.0.0.1:${await freePort()}`;
  const child = spawn(
    findTemporalCli(),
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      address.split(':')[1],
      '--headless',
      '--db-filename',
      path.join(folder, 'temporal.db'),
      '--namespace',
      options.namespace,
      '--log-format',
      'pretty',
      '--log-level',
      'error',
      ...searchAttributeFlags().flatMap((flag) => ['--search-attribute', flag]),
      ...(options.extraArgs ?? []),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  let exit: string | undefined;
  child.once('exit', (code, signal) => (exit = `exited (${signal ?? `code ${String(code)}`})`));
  child.once('error', (error) => (exit = `could not start (${error.message})`));
  const cleanUp = async () => {
    if (child.pid !== undefined) await endProcess(child.pid, 10_000);
    rmSync(folder, { recursive: true, force: true });
  };
  const deadline = Date.now() + READY_WITHIN_MS;
  let last: unknown;
  for (;;) {
    if (exit) {
      await cleanUp();
      throw new Error(`the Temporal dev server ${exit} before it answered`);
    }
    let env: TestWorkflowEnvironment | undefined;
    try {
      env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace: options.namespace });
      await env.connection.workflowService.describeNamespace({ namespace: options.namespace });
      const teardown = env.teardown.bind(env);
      env.teardown = async () => {
        try {
          await teardown();
        } finally {
          await cleanUp();
        }
      };
      return env;
    } catch (error) {
      last = error;
      await env?.teardown().catch(() => undefined);
    }
    if (Date.now() > deadline) {
      await cleanUp();
      throw new Error(
        `the Temporal dev server at ${address} did not answer within ${READY_WITHIN_MS / 1000} s: ${String(last)}`,
      );
    }
    await sleep(250);
  }
}
