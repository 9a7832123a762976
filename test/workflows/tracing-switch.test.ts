import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { Worker } from '@temporalio/worker';
import { currentTracing } from '../../telemetry/tracing';
import { connection, connectionId } from './support/connection';
import { SIGNALS, dayFromToday, eventually, stepIs, tierBundles, withWorker } from './support/tier';

/**
 * A worker that exports no traces runs its workflows without the tracing interceptors. An operator
 * may turn tracing on or off and restart the workers while runs are in flight: the run goes on from
 * its history on a worker of the other kind, which replays it first.
 */
describe('workflows when tracing is switched with runs in flight', () => {
  for (const [first, then] of [
    ['untraced', 'traced'],
    ['traced', 'untraced'],
  ] as const) {
    it(`a connection put in production by a worker ${first}, decommissioned by one ${then}`, async () => {
      const { resource, fakes } = connection();
      const taskQueue = `tracing-switch-${randomBytes(4).toString('hex')}`;
      const workflowId = `provisionConnection-${randomBytes(4).toString('hex')}`;
      const untraced = (kind: 'traced' | 'untraced') => kind === 'untraced';

      const handle = await withWorker(
        fakes,
        async (run) => {
          // Started by hand, not by run.start: the run must outlive this worker.
          const started = await run.client.workflow.start('provisionConnection', {
            taskQueue,
            workflowId,
            args: [{ connectionId }],
          });
          await eventually('production', () => resource.state === 'production');
          await stepIs(started, 'in production');
          return started;
        },
        { taskQueue, untraced: untraced(first) },
      );
      try {
        // A new worker has nothing cached: it replays the run begun by the other kind, then goes on.
        await withWorker(
          fakes,
          async () => {
            resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
            await handle.signal(SIGNALS.reconsider);
            assert.equal(await handle.result(), 'decommissioned');
          },
          { taskQueue, untraced: untraced(then) },
        );
        assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live', 'decommission']);

        // The whole run, half of it from either kind, replays on both kinds.
        const history = await handle.fetchHistory();
        const bundles = tierBundles();
        const tracing = currentTracing();
        await Worker.runReplayHistory(
          {
            workflowBundle: { codePath: bundles.traced },
            sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
          },
          history,
          workflowId,
        );
        await Worker.runReplayHistory(
          { workflowBundle: { codePath: bundles.untraced } },
          history,
          workflowId,
        );
      } catch (error) {
        await handle.terminate('the test failed').catch(() => undefined);
        throw error;
      }
    });
  }
});
