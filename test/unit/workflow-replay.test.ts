import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';

const histories = path.resolve(__dirname, '../fixtures/histories');

/**
 * Recorded histories must replay against the current workflow code: a change that would break
 * workflows already running in production fails here (re-record only for deliberate changes).
 */
describe('workflow replay over recorded histories', function () {
  this.timeout(120_000);
  before(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // already installed by another test file in this process
    }
  });

  const files = readdirSync(histories).filter((f) => f.endsWith('.json'));

  it('has histories to replay', () => {
    assert.ok(files.length > 0);
  });

  for (const file of files) {
    it(`replays ${file}`, async () => {
      const history: unknown = JSON.parse(readFileSync(path.join(histories, file), 'utf8'));
      await Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history);
    });
  }

  it('detects a workflow that no longer matches its history', async () => {
    const history: { events: Array<Record<string, any>> } = JSON.parse(
      readFileSync(path.join(histories, files[0]), 'utf8'),
    );
    // Pretend the first activity the workflow scheduled had been another one.
    const scheduled = history.events.find((e) => e.activityTaskScheduledEventAttributes);
    assert.ok(scheduled, 'the history schedules an activity');
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'somethingElse';
    await assert.rejects(
      Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history),
    );
  });
});
