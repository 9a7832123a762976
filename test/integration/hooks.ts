import { buildDocs, docsAreStale } from '../../scripts/build-docs';
import { startStack, stopStack } from '../support/stack';

/**
 * Once per run, before any file: the API documentation page the stacks serve is built here, so that
 * parallel workers do not build it at the same time.
 */
export function mochaGlobalSetup(): void {
  if (docsAreStale()) buildDocs();
}

/**
 * Root hooks: each test file gets a real stack of its own (a throw-away database, a Temporal dev
 * server, a worker and the API), torn down (database dropped) after the file. In parallel mode
 * mocha runs these once per file; run alone, a file behaves the same.
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
