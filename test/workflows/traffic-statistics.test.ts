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
    const at: number[] = [];
    const fakes = new FakeActivities().on('sampleTraffic', () => {
      at.push(Date.now());
      return round(at.length);
    });
    await withWorker(fakes, async (run) => {
      const handle = await run.start<never>('collectTrafficStatistics', { intervalSeconds: 1, rounds: 40 });
      const status = await queryUntil<TrafficCollectorStatus>(handle, STATUS_QUERY, (s) => s.rounds >= 42);
      assert.deepEqual(fakes.callsOf('sampleTraffic')[0].input, { intervalSeconds: 1 });
      // On the next multiple of the interval each time, not back to back.
      assert.ok(at[1] - at[0] >= 500, `rounds ${at[1] - at[0]} ms apart`);
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
