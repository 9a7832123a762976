import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ValidationError } from '../../domain/errors';
import type { CounterSample } from '../../domain/statistics';
import {
  SLIDING_WINDOWS,
  aggregateSummedTraffic,
  aggregateTraffic,
  customAggregate,
  nextSampleAt,
  parseDateTime,
  percentile95,
  requestedWindow,
  retentionStart,
  slidingAggregates,
  summedRates,
  trafficRates,
  windowStart,
} from '../../domain/statistics';

const T0 = Date.parse('2026-03-10T12:00:00Z');

/** A sample at `seconds` after T0 with these octets in and out (packets a tenth, no errors). */
function sample(
  seconds: number,
  octetsIn: bigint,
  octetsOut = octetsIn,
  source = 'dev-1 et-0/0/1',
): CounterSample {
  return {
    at: T0 + seconds * 1000,
    source,
    octetsIn,
    octetsOut,
    packetsIn: octetsIn / 10n,
    packetsOut: octetsOut / 10n,
    errorsIn: 0n,
    errorsOut: 0n,
    discardsIn: octetsIn / 1_000_000n,
    discardsOut: 0n,
  };
}

/** Property names of the ValidationError `run` throws. */
function refused(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return error.properties.map((p) => p.name);
  }
  assert.fail('not refused');
}

describe('traffic statistics', () => {
  it('turns consecutive samples into rates per second', () => {
    const rates = trafficRates([sample(0, 0n, 0n), sample(10, 10_000n, 5_000n), sample(20, 30_000n, 5_000n)]);
    assert.deepEqual(
      rates.map((r) => [r.opsIn, r.opsOut, r.ppsIn, r.at]),
      [
        [1000, 500, 100, T0 + 10_000],
        [2000, 0, 200, T0 + 20_000],
      ],
    );
  });

  it('takes no rate across a counter reset, a change of interface, or samples out of order', () => {
    const rates = trafficRates([
      sample(0, 1_000n),
      sample(10, 500n),
      sample(20, 1_500n),
      sample(30, 9_000n, 9_000n, 'dev-1 ae-conn-1'),
      sample(40, 10_000n, 10_000n, 'dev-1 ae-conn-1'),
    ]);
    assert.deepEqual(
      rates.map((r) => [r.from, r.at, r.opsIn]),
      [
        [T0 + 10_000, T0 + 20_000, 100],
        [T0 + 30_000, T0 + 40_000, 100],
      ],
    );
  });

  it('keeps every digit of counters past 2^53', () => {
    const big = 2n ** 62n;
    const [rate] = trafficRates([sample(0, big), sample(1, big + 12_345n)]);
    assert.equal(rate.opsIn, 12_345);
  });

  it('averages over time, takes the 95th percentile by nearest rank, and finds each maximum with its instant', () => {
    // 20 intervals of 10 s: 1 000 octets/s in each, but 50 000 in the 7th; out rises steadily.
    const samples = [sample(0, 0n, 0n)];
    for (let i = 1; i <= 20; i += 1) {
      const last = samples[samples.length - 1];
      samples.push(
        sample(i * 10, last.octetsIn + (i === 7 ? 500_000n : 10_000n), last.octetsOut + BigInt(i) * 1000n),
      );
    }
    const aggregate = aggregateTraffic(samples, {
      start: new Date(T0),
      end: new Date(T0 + 200_000),
      intervalSeconds: 10,
      now: new Date(T0 + 200_500),
      title: 'test',
    });
    assert.equal(aggregate.average_ops_in, Math.round((19 * 1000 + 50_000) / 20));
    assert.equal(aggregate.percentile95_ops_in, 1000);
    assert.equal(aggregate.maximum_ops_in, 50_000);
    assert.equal(aggregate.maximum_in_at, new Date(T0 + 70_000).toISOString());
    assert.equal(aggregate.percentile95_ops_out, 1900);
    assert.equal(aggregate.maximum_ops_out, 2000);
    assert.equal(aggregate.maximum_out_at, new Date(T0 + 200_000).toISOString());
    assert.equal(aggregate.average_pps_in, Math.round(aggregate.average_ops_in / 10));
    assert.equal(aggregate.average_eps_in, 0);
    assert.equal(aggregate.accuracy, 1);
    assert.equal(aggregate.created_at, new Date(T0 + 200_500).toISOString());
    assert.equal(aggregate.next_update_at, new Date(T0 + 210_000).toISOString());
  });

  it('counts the samples a window holds against those it should hold', () => {
    const samples = [0, 10, 20, 30, 60].map((s) => sample(s, BigInt(s) * 100n));
    const aggregate = (start: number, end: number, intervalSeconds = 10) =>
      aggregateTraffic(samples, {
        start: new Date(T0 + start * 1000),
        end: new Date(T0 + end * 1000),
        intervalSeconds,
        now: new Date(T0 + 60_000),
        title: 'test',
      });
    assert.equal(aggregate(0, 60).accuracy, 0.6667, 'four of six');
    assert.equal(aggregate(0, 60, 30).accuracy, 1, 'never more than all');
    const empty = aggregate(100, 160);
    assert.equal(empty.accuracy, 0);
    assert.equal(empty.average_ops_in, 0);
    assert.equal(empty.maximum_ops_in, null);
    assert.equal(empty.percentile95_pps_out, null);
    assert.equal(empty.average_eps_in, null);
  });

  it('uses the sample before a window to start its first interval', () => {
    const samples = [sample(0, 0n), sample(300, 300_000n)];
    const aggregate = aggregateTraffic(samples, {
      start: new Date(T0 + 100_000),
      end: new Date(T0 + 400_000),
      intervalSeconds: 300,
      now: new Date(T0 + 400_000),
      title: 'test',
    });
    assert.equal(aggregate.average_ops_in, 1000);
    assert.equal(aggregate.accuracy, 1);
  });

  it("adds up several subjects' rates over the stretches they share, and leaves out what none covers", () => {
    // One subject sampled every 10 s, the other every 20 s from 10 s on, with a counter reset at 50 s.
    const first = trafficRates([0, 10, 20, 30, 40].map((s) => sample(s, BigInt(s) * 1_000n)));
    const second = trafficRates([
      sample(10, 0n),
      sample(30, 200_000n),
      sample(50, 100n),
      sample(70, 100_100n),
      sample(90, 200_100n),
    ]);
    assert.deepEqual(
      summedRates([first, second]).map((r) => [(r.from - T0) / 1000, (r.at - T0) / 1000, r.opsIn]),
      [
        [0, 10, 1000],
        [10, 20, 11_000],
        [20, 30, 11_000],
        [30, 40, 1000],
        // 40 to 50: the second subject's counter went down, the first was not sampled: no rate.
        [50, 70, 5000],
        [70, 90, 5000],
      ],
    );
    assert.deepEqual(summedRates([first]), first, 'one subject: its own rates');
    assert.deepEqual(summedRates([]), []);
  });

  it("aggregates subjects' traffic added up: averages add up, accuracy is their mean", () => {
    const steady = (octetsPerSecond: bigint, seconds: number[]) =>
      seconds.map((s) => sample(s, BigInt(s) * octetsPerSecond, BigInt(s) * octetsPerSecond * 2n));
    const every10 = [0, 10, 20, 30, 40, 50, 60];
    const options = {
      start: new Date(T0),
      end: new Date(T0 + 60_000),
      intervalSeconds: 10,
      now: new Date(T0 + 60_000),
      title: 'test',
    };
    const a = steady(1000n, every10);
    const b = steady(250n, [0, 10, 20, 30]);
    const both = aggregateSummedTraffic([a, b], options);
    const [alone, other] = [aggregateTraffic(a, options), aggregateTraffic(b, options)];
    assert.equal(alone.average_ops_in, 1000);
    assert.equal(other.average_ops_in, 250);
    // Over 0–30 s both carry traffic (1 250/s), over 30–60 s the first alone (1 000/s).
    assert.equal(both.average_ops_in, 1125);
    assert.equal(both.average_ops_out, 2250);
    assert.equal(both.maximum_ops_in, 1250);
    assert.equal(both.maximum_in_at, new Date(T0 + 10_000).toISOString());
    assert.equal(both.percentile95_ops_in, 1250);
    assert.equal(both.accuracy, Number(((alone.accuracy + other.accuracy) / 2).toPrecision(4)));
    const same = aggregateSummedTraffic([a, a], options);
    assert.equal(same.average_ops_in, 2 * alone.average_ops_in);
    assert.equal(same.accuracy, alone.accuracy);
    assert.deepEqual(aggregateSummedTraffic([a], options), alone);
    const none = aggregateSummedTraffic([], options);
    assert.equal(none.accuracy, 0);
    assert.equal(none.average_ops_in, 0);
    assert.equal(none.maximum_ops_in, null);
    assert.equal(none.average_eps_in, null);
  });

  it('keys sliding windows by ISO 8601 durations, each ending now', () => {
    const now = new Date('2028-02-29T10:00:00Z');
    const aggregates = slidingAggregates([], { now, intervalSeconds: 300 });
    assert.deepEqual(Object.keys(aggregates), ['PT5M', 'PT1H', 'P1D', 'P7D', 'P30D', 'P1Y']);
    assert.deepEqual(SLIDING_WINDOWS, Object.keys(aggregates));
    for (const aggregate of Object.values(aggregates)) assert.equal(aggregate.end, now.toISOString());
    assert.equal(aggregates.PT5M.start, '2028-02-29T09:55:00.000Z');
    assert.equal(aggregates.P7D.start, '2028-02-22T10:00:00.000Z');
    assert.equal(aggregates.P1Y.start, '2027-03-01T10:00:00.000Z', 'a calendar year back');
    assert.equal(windowStart('P30D', now).toISOString(), '2028-01-30T10:00:00.000Z');
    assert.deepEqual(Object.keys(customAggregate([], { start: now, end: now, now, intervalSeconds: 1 })), [
      'custom',
    ]);
  });

  it('keeps samples for the longest window, and samples on multiples of the interval', () => {
    const now = new Date('2026-03-10T12:02:30Z');
    assert.equal(retentionStart(now, 300).toISOString(), '2025-03-10T11:52:30.000Z');
    assert.equal(nextSampleAt(now, 300).toISOString(), '2026-03-10T12:05:00.000Z');
    assert.equal(
      nextSampleAt(new Date('2026-03-10T12:05:00Z'), 300).toISOString(),
      '2026-03-10T12:10:00.000Z',
    );
  });

  it('reads RFC 3339 date-times, and nothing else', () => {
    const at = (text: string) => parseDateTime(text)?.toISOString();
    assert.equal(at('2026-03-10T12:00:00Z'), '2026-03-10T12:00:00.000Z');
    assert.equal(at('2026-03-10t12:00:00.25z'), '2026-03-10T12:00:00.250Z');
    assert.equal(at('2026-03-10T14:30:00+02:30'), '2026-03-10T12:00:00.000Z');
    assert.equal(at('2026-03-10T14:30:00 02:30'), '2026-03-10T12:00:00.000Z', 'a + decoded as a space');
    assert.equal(at('2026-03-10T10:00:00-02:00'), '2026-03-10T12:00:00.000Z');
    assert.equal(at('2024-02-29T00:00:00Z'), '2024-02-29T00:00:00.000Z');
    for (const text of [
      '2026-03-10',
      '2026-03-10T12:00:00',
      '2026-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-03-10T24:00:00Z',
      '2026-03-10T12:60:00Z',
      '2026-03-10T12:00:00+24:00',
      '1741608000',
      'yesterday',
      '',
    ])
      assert.equal(at(text), undefined, text);
  });

  it('takes both start and end or neither, in order, at most a year apart, and names the parameter of each problem', () => {
    assert.equal(requestedWindow({}), undefined);
    const window = requestedWindow({ start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' })!;
    assert.deepEqual(
      [window.start.toISOString(), window.end.toISOString()],
      ['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    );
    assert.ok(requestedWindow({ start: '2025-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' }));
    assert.deepEqual(
      refused(() => requestedWindow({ start: '2026-01-01T00:00:00Z' })),
      ['end'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ end: '2026-01-01T00:00:00Z' })),
      ['start'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ start: 'soon', end: '2026-01-01T00:00:00Z' })),
      ['start'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ start: '2026-01-01T00:00:00Z', end: '2026-01-32' })),
      ['end'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ start: 'a', end: 'b' })),
      ['start', 'end'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ start: ['2026-01-01T00:00:00Z', 'x'], end: '2026-02-01T00:00:00Z' })),
      ['start'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ start: '2026-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' })),
      ['end'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' })),
      ['end'],
    );
    assert.deepEqual(
      refused(() => requestedWindow({ start: '2025-01-01T00:00:00Z', end: '2026-01-01T00:00:01Z' })),
      ['end'],
    );
  });

  it('finds the 95th percentile by nearest rank', () => {
    assert.equal(percentile95([]), null);
    assert.equal(percentile95([7]), 7);
    assert.equal(percentile95(Array.from({ length: 100 }, (_, i) => 100 - i)), 95);
    assert.equal(percentile95(Array.from({ length: 20 }, (_, i) => i + 1)), 19);
  });

  it('keeps the average and the 95th percentile between the least and the largest rate, and accuracy in [0, 1]', () => {
    const samplesOf = fc
      .array(
        fc.record({
          gap: fc.integer({ min: 1, max: 900 }),
          octetsIn: fc.bigInt({ min: 0n, max: 10n ** 12n }),
          octetsOut: fc.bigInt({ min: 0n, max: 10n ** 12n }),
        }),
        { minLength: 0, maxLength: 40 },
      )
      .map((steps) => {
        let seconds = 0;
        let octetsIn = 10n ** 15n;
        let octetsOut = 10n ** 15n;
        return steps.map((step) => {
          seconds += step.gap;
          octetsIn += step.octetsIn;
          octetsOut += step.octetsOut;
          return sample(seconds, octetsIn, octetsOut);
        });
      });
    fc.assert(
      fc.property(
        samplesOf,
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 3600 }),
        (samples, startSeconds, length, intervalSeconds) => {
          const start = new Date(T0 + startSeconds * 1000);
          const aggregate = aggregateTraffic(samples, {
            start,
            end: new Date(start.getTime() + length * 1000),
            intervalSeconds,
            now: new Date(T0),
            title: 'property',
          });
          assert.ok(aggregate.accuracy >= 0 && aggregate.accuracy <= 1, `accuracy ${aggregate.accuracy}`);
          const rates = trafficRates(samples).filter(
            (r) => r.at > start.getTime() && r.at <= start.getTime() + length * 1000,
          );
          if (!rates.length) {
            assert.equal(aggregate.maximum_ops_in, null);
            return;
          }
          for (const [kind, average, p95, maximum] of [
            ['opsIn', aggregate.average_ops_in, aggregate.percentile95_ops_in, aggregate.maximum_ops_in],
            ['opsOut', aggregate.average_ops_out, aggregate.percentile95_ops_out, aggregate.maximum_ops_out],
            ['ppsIn', aggregate.average_pps_in, aggregate.percentile95_pps_in, aggregate.maximum_pps_in],
          ] as const) {
            const values = rates.map((r) => r[kind]);
            const least = Math.round(Math.min(...values));
            assert.ok(least <= average && average <= maximum!, `${kind}: ${least} ≤ ${average} ≤ ${maximum}`);
            assert.ok(least <= p95! && p95! <= maximum!, `${kind}: ${least} ≤ p95 ${p95} ≤ ${maximum}`);
          }
        },
      ),
    );
  });
});
