import { startStack, stopStack } from '../support/stack';

/** Root hooks: one real stack for the whole integration run, torn down (database dropped) at the end. */
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
