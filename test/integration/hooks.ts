import { buildDocs, docsAreStale } from '../../scripts/build-docs';
import { startSharedStack, stopSharedStack } from '../support/shared-stack';
import { startStack, stopStack } from '../support/stack';

/**
 * Once per run, before any file (in mocha's main process): the API documentation page the stacks
 * serve is built, so that parallel workers do not build it at the same time, and what every file's
 * stack shares is made (test/support/shared-stack.ts): the migrated and seeded template database,
 * the Temporal dev server and the workflow bundle.
 */
export async function mochaGlobalSetup(): Promise<void> {
  if (docsAreStale()) buildDocs();
  await startSharedStack();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopSharedStack();
}

/**
 * Root hooks: each test file gets a real stack of its own (a copy of the template database, a
 * namespace of its own on the Temporal server, a worker and the API), torn down (database dropped)
 * after the file. In parallel mode mocha runs these once per file; run alone, a file behaves the same.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await startStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopStack();
  },
};
