import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';

type LocalOptions = NonNullable<Parameters<typeof TestWorkflowEnvironment.createLocal>[0]>;

/** How often a dev server that was slow to answer is started again before the tier gives up. */
const ATTEMPTS = 4;

/**
 * A folder for the dev server's database: in memory where the host has a tmpfs, so that the file
 * costs no disk writes.
 */
function databaseFolder(): string {
  const parent = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return mkdtempSync(path.join(parent, 'ixapi-temporal-'));
}

/**
 * A Temporal dev server for a test tier. The SDK gives the server a fixed few seconds to answer
 * and kills it when it does not; on a machine busy with the other tiers that can happen once at
 * start-up, so only that failure is tried again (on a fresh port), and any other is thrown at once.
 *
 * The server keeps its SQLite database in a file (removed by `teardown`), never in SQLite's memory
 * database: under load the dev server has been seen to lose every table of that one mid-run
 * ("no such table: namespaces"), failing every test after.
 */
export async function startDevServer(options: LocalOptions): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt += 1) {
    const folder = databaseFolder();
    try {
      const env = await TestWorkflowEnvironment.createLocal({
        ...options,
        server: { dbFilename: path.join(folder, 'temporal.db'), ...options.server },
      });
      const teardown = env.teardown.bind(env);
      env.teardown = async () => {
        try {
          await teardown();
        } finally {
          rmSync(folder, { recursive: true, force: true });
        }
      };
      return env;
    } catch (error) {
      rmSync(folder, { recursive: true, force: true });
      const slow = error instanceof Error && /did not start within/.test(error.message);
      if (!slow || attempt >= ATTEMPTS) throw error;
      console.warn(
        `the Temporal dev server did not answer in time (attempt ${attempt} of ${ATTEMPTS}); starting it again`,
      );
    }
  }
}
