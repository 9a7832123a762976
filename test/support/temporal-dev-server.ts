import { TestWorkflowEnvironment } from '@temporalio/testing';

type LocalOptions = NonNullable<Parameters<typeof TestWorkflowEnvironment.createLocal>[0]>;

/** How often a dev server that was slow to answer is started again before the tier gives up. */
const ATTEMPTS = 4;

/**
 * A Temporal dev server for a test tier. The SDK gives the server a fixed few seconds to answer
 * and kills it when it does not; on a machine busy with the other tiers that can happen once at
 * start-up, so only that failure is tried again (on a fresh port), and any other is thrown at once.
 */
export async function startDevServer(options: LocalOptions): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await TestWorkflowEnvironment.createLocal(options);
    } catch (error) {
      const slow = error instanceof Error && /did not start within/.test(error.message);
      if (!slow || attempt >= ATTEMPTS) throw error;
      console.warn(
        `the Temporal dev server did not answer in time (attempt ${attempt} of ${ATTEMPTS}); starting it again`,
      );
    }
  }
}
