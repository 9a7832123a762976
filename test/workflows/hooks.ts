import { connect, disconnect, startServer, stopServer } from './support/tier';

/**
 * One Temporal dev server and one workflow bundle for the whole tier (global fixtures: once, in
 * mocha's main process, however many processes run the test files), and in each test process the
 * connections to it.
 */
export async function mochaGlobalSetup(): Promise<void> {
  await startServer();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopServer();
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(90_000);
    await connect();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(90_000);
    await disconnect();
  },
};
