import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { ReplayResult, ReplayWorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { currentTracing } from '../../telemetry/tracing';
import { bundleWorkflows } from '../../worker/create-worker';
import { HISTORIES, historyFiles } from '../support/workflow-histories';

type History = { events: Array<Record<string, any>> };
const read = (file: string) => JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')) as History;

/**
 * One replay worker for every history, as a worker replays the runs it picks up, fed one history
 * at a time when a test asks for it; answers each history's result (its error, if it did not
 * replay). Starting a worker per history would cost more than the replay.
 */
function replayWorker(options: () => ReplayWorkerOptions) {
  let file = '';
  function* histories() {
    for (;;) yield { workflowId: file, history: read(file) };
  }
  let results: AsyncIterableIterator<ReplayResult> | undefined;
  return {
    async replay(next: string): Promise<ReplayResult> {
      file = next;
      results ??= Worker.runReplayHistories(options(), histories());
      const result = await results.next();
      assert.ok(!result.done, 'the replay worker stopped');
      assert.equal(result.value.workflowId, next);
      return result.value;
    },
    async close(): Promise<void> {
      await results?.return?.(undefined);
    },
  };
}

/**
 * Every recorded history, of every workflow type and every source hash, must replay against the
 * current workflow code: a change that would break runs in flight (begun on any older version)
 * fails here. Histories are never re-recorded over or deleted while runs that old may exist. The
 * workflows replay as both kinds of worker run them: with the tracing interceptors and their span
 * sink, and without them (a worker that exports no traces), so tracing can be turned on or off with
 * runs in flight.
 */
describe('workflow replay over recorded histories', function () {
  this.timeout(120_000);
  let bundle: WorkflowBundleWithSourceMap;
  let untracedBundle: WorkflowBundleWithSourceMap;
  before(async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // already installed by another test file in this process
    }
    [bundle, untracedBundle] = await Promise.all([
      bundleWorkflows(),
      bundleWorkflows(undefined, { traced: false }),
    ]);
  });

  const files = historyFiles();
  const tracing = currentTracing();
  const sinks = { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) };
  const replayer = replayWorker(() => ({ workflowBundle: bundle, sinks }));
  const untracedReplayer = replayWorker(() => ({ workflowBundle: untracedBundle }));
  after(() => Promise.all([replayer.close(), untracedReplayer.close()]));

  it('has histories to replay, each in the folder of its workflow type', () => {
    assert.ok(files.length > 0);
    const loose = readdirSync(HISTORIES).filter((name) => name.endsWith('.json') && name !== 'manifest.json');
    assert.deepEqual(loose, [], 'histories go to <workflow type>/<path>@<source hash>.json');
    for (const file of files) {
      assert.match(path.basename(file), /^[a-z-]+@([0-9a-f]{12}|legacy|pre-[0-9a-f]{7,40})\.json$/, file);
      const started = read(file).events[0]?.workflowExecutionStartedEventAttributes;
      assert.equal(
        started?.workflowType?.name,
        path.dirname(file),
        `${file} is a history of its folder's type`,
      );
    }
  });

  for (const file of files) {
    it(`replays ${file}`, async () => {
      const { error } = await replayer.replay(file);
      if (error) throw error;
      const untraced = await untracedReplayer.replay(file);
      if (untraced.error) throw new Error(`without the tracing interceptors: ${String(untraced.error)}`);
    });
  }

  it('detects a workflow that no longer matches its history', async () => {
    const history = read(files[0]);
    // Pretend the first activity the workflow scheduled had been another one.
    const scheduled = history.events.find((e) => e.activityTaskScheduledEventAttributes);
    assert.ok(scheduled, 'the history schedules an activity');
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'somethingElse';
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: bundle, sinks }, history));
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: untracedBundle }, history));
  });

  it('bundles the tracing interceptors into the traced bundle only', () => {
    const interceptors = /interceptors-opentelemetry\/lib\/workflow-interceptors/;
    assert.match(bundle.code, interceptors);
    assert.doesNotMatch(untracedBundle.code, interceptors);
    assert.doesNotMatch(untracedBundle.code, /@opentelemetry\/sdk-trace-base/);
  });
});
