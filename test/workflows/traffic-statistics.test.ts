import assert from 'node:assert/strict';
import type { SamplingRound } from '../../activities/traffic';
import type { TrafficCollectorStatus } from '../../workflows/traffic-statistics';
import { FakeActivities, refusal } from './support/fakes';
import { eventually, queryUntil, withWorker } from './support/tier';

const STATUS_QUERY = 'trafficCollectorStatus';
const round = (subjects: number): SamplingRound => ({
  at: new Date().toISOString(),
  subjects,
  sampled: subjects,
  missed: 0,
  optics: 0,
  pruned: 0,
});

describe('collectTrafficStatistics', () => {
  it('samples once per interval and counts its rounds on from those of earlier runs', async () => {
    let calls = 0;
    const fakes = new FakeActivities().on('sampleTraffic', () => round((calls += 1)));
    await withWorker(fakes, async (run) => {
      const handle = await run.start<never>('collectTrafficStatistics', { intervalSeconds: 1, rounds: 40 });
      const status = await queryUntil<TrafficCollectorStatus>(handle, STATUS_QUERY, (s) => s.rounds >= 42);
      assert.deepEqual(fakes.callsOf('sampleTraffic')[0].input, { intervalSeconds: 1 });
      // Before each round it waits for the next multiple of the interval: a timer of at most the
      // interval comes between two rounds, never two rounds back to back.
      const events = (await handle.fetchHistory()).events ?? [];
      let waited: number | undefined;
      let rounds = 0;
      for (const event of events) {
        const timer = event.timerStartedEventAttributes?.startToFireTimeout;
        if (timer) waited = Number(timer.seconds ?? 0) * 1000 + Math.round((timer.nanos ?? 0) / 1e6);
        if (!event.activityTaskScheduledEventAttributes) continue;
        assert.ok(
          waited !== undefined && waited > 0 && waited <= 1000,
          `round ${rounds} came without a wait (${waited} ms)`,
        );
        waited = undefined;
        rounds += 1;
      }
      assert.ok(rounds >= 2, `${rounds} rounds in the history`);
      assert.equal(status.intervalSeconds, 1);
      assert.equal(status.lastError, null);
      assert.ok(status.lastRound!.subjects >= 2);
    });
  });

  it('takes a round that fails for a missed sample, says why, and carries on', async () => {
    const fakes = new FakeActivities().on('sampleTraffic', () => {
      if (fakes.callsOf('sampleTraffic').length === 1) throw refusal('the samples table is locked', 'Locked');
      return round(3);
    });
    await withWorker(fakes, async (run) => {
      const handle = await run.start<never>('collectTrafficStatistics', { intervalSeconds: 1 });
      const failed = await queryUntil<TrafficCollectorStatus>(handle, STATUS_QUERY, (s) => s.rounds === 1);
      assert.equal(failed.lastError, 'the samples table is locked');
      assert.equal(failed.lastRound, null);
      const next = await queryUntil<TrafficCollectorStatus>(handle, STATUS_QUERY, (s) => s.rounds === 2);
      assert.equal(next.lastError, null);
      assert.equal(next.lastRound!.subjects, 3);
      await eventually('no retry of the failed round', () => fakes.callsOf('sampleTraffic').length >= 2);
      assert.deepEqual(
        fakes.callsOf('sampleTraffic').map((call) => call.attempt),
        fakes.callsOf('sampleTraffic').map(() => 1),
      );
    });
  });
});
