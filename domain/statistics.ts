import type { components } from '../spec/types';
import type { PropertyError } from './errors';
import { ValidationError } from './errors';

/**
 * Traffic statistics: rates from consecutive samples of a subject's counters, aggregated over
 * windows. Sliding windows end now and are keyed by their ISO 8601 duration; a window the client
 * names with `start` and `end` is keyed `custom`. `accuracy` says how many of the samples the
 * window should hold it does hold, so clients can tell a quiet link from a gap in the sampling.
 */

export type AggregateStatistics = components['schemas']['AggregateStatistics'];

/** What is sampled: a port, a connection (its LAG, or its one port), or a network service config. */
export type TrafficSubjectType = 'port' | 'connection' | 'network_service_config';

/**
 * What has statistics: a sampled subject, or a network service, whose traffic is not sampled
 * itself but added up from the samples of its configs.
 */
export type StatisticsSubjectType = TrafficSubjectType | 'network_service';

/** The fixed id of the one workflow that samples every subject. */
export const TRAFFIC_COLLECTOR_WORKFLOW_ID = 'ixapi:statistics:collector';

export const COUNTER_NAMES = [
  'octetsIn',
  'octetsOut',
  'packetsIn',
  'packetsOut',
  'errorsIn',
  'errorsOut',
  'discardsIn',
  'discardsOut',
] as const;

export type CounterName = (typeof COUNTER_NAMES)[number];
export type CounterValues = Record<CounterName, bigint>;

/** One reading of a subject's counters: at `at` (epoch ms), from `source` (device and interface). */
export interface CounterSample extends CounterValues {
  at: number;
  source: string;
}

/** Per-second rates over the interval from one sample to the next, which ends at `at`. */
export interface TrafficRate {
  from: number;
  at: number;
  opsIn: number;
  opsOut: number;
  ppsIn: number;
  ppsOut: number;
  epsIn: number;
  epsOut: number;
  dpsIn: number;
  dpsOut: number;
}

const RATE_OF: Record<CounterName, Exclude<keyof TrafficRate, 'from' | 'at'>> = {
  octetsIn: 'opsIn',
  octetsOut: 'opsOut',
  packetsIn: 'ppsIn',
  packetsOut: 'ppsOut',
  errorsIn: 'epsIn',
  errorsOut: 'epsOut',
  discardsIn: 'dpsIn',
  discardsOut: 'dpsOut',
};

/**
 * Rates between consecutive samples (in time order). An interval gives no rate when the samples
 * come from different interfaces or when a counter went down (the device reset it, or a LAG lost
 * a member): the difference would not be traffic.
 */
export function trafficRates(samples: readonly CounterSample[]): TrafficRate[] {
  const ordered = [...samples].sort((a, b) => a.at - b.at);
  const rates: TrafficRate[] = [];
  for (let i = 1; i < ordered.length; i += 1) {
    const [before, after] = [ordered[i - 1], ordered[i]];
    if (after.at <= before.at || after.source !== before.source) continue;
    if (COUNTER_NAMES.some((name) => after[name] < before[name])) continue;
    const seconds = (after.at - before.at) / 1000;
    const rate = { from: before.at, at: after.at } as TrafficRate;
    for (const name of COUNTER_NAMES) rate[RATE_OF[name]] = Number(after[name] - before[name]) / seconds;
    rates.push(rate);
  }
  return rates;
}

/** The sliding windows, each ending now, by the ISO 8601 duration that keys them. */
export const SLIDING_WINDOWS = ['PT5M', 'PT1H', 'P1D', 'P7D', 'P30D', 'P1Y'] as const;
export type SlidingWindow = (typeof SLIDING_WINDOWS)[number];
export const CUSTOM_WINDOW = 'custom';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const WINDOW_MS: Record<Exclude<SlidingWindow, 'P1Y'>, number> = {
  PT5M: 5 * MINUTE_MS,
  PT1H: 60 * MINUTE_MS,
  P1D: DAY_MS,
  P7D: 7 * DAY_MS,
  P30D: 30 * DAY_MS,
};
const TITLES: Record<SlidingWindow, string> = {
  PT5M: 'Last 5 minutes',
  PT1H: 'Last hour',
  P1D: 'Last day',
  P7D: 'Last 7 days',
  P30D: 'Last 30 days',
  P1Y: 'Last year',
};

/** The same instant `years` calendar years later (or earlier); 29 February becomes 1 March. */
function addYears(instant: Date, years: number): Date {
  const moved = new Date(instant.getTime());
  moved.setUTCFullYear(moved.getUTCFullYear() + years);
  return moved;
}

/** Where a sliding window ending at `end` starts; a year is a calendar year. */
export function windowStart(window: SlidingWindow, end: Date): Date {
  return window === 'P1Y' ? addYears(end, -1) : new Date(end.getTime() - WINDOW_MS[window]);
}

/** Samples older than this serve no window any more (the longest, plus the sample before it). */
export function retentionStart(now: Date, intervalSeconds: number): Date {
  return new Date(windowStart('P1Y', now).getTime() - 2 * intervalSeconds * 1000);
}

/** The collector samples on multiples of its interval: the next one after `now`. */
export function nextSampleAt(now: Date, intervalSeconds: number): Date {
  const interval = intervalSeconds * 1000;
  return new Date((Math.floor(now.getTime() / interval) + 1) * interval);
}

/** The 95th percentile by nearest rank: the smallest value at least 95 % of the values do not exceed. */
export function percentile95(values: readonly number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1];
}

const whole = (value: number) => Math.round(value);
const fine = (value: number) => Math.round(value * 1e6) / 1e6;

/** The largest rate of one kind, and when the interval that carried it ended. */
function peak(rates: readonly TrafficRate[], kind: keyof TrafficRate): { value: number; at: number } | null {
  let best: { value: number; at: number } | null = null;
  for (const rate of rates) if (!best || rate[kind] > best.value) best = { value: rate[kind], at: rate.at };
  return best;
}

export interface AggregateOptions {
  start: Date;
  end: Date;
  /** The collector's sampling interval, which says how many samples the window should hold. */
  intervalSeconds: number;
  /** When the aggregate is made. */
  now: Date;
  title: string;
}

const RATE_KINDS = Object.values(RATE_OF);
const ZERO_RATE = Object.fromEntries(RATE_KINDS.map((kind) => [kind, 0])) as Omit<TrafficRate, 'from' | 'at'>;

/**
 * The rates of several subjects added up (a service's configs): over each stretch between two
 * consecutive ends of any subject's intervals, the sum of the rates of the subjects whose interval
 * covers it. A stretch that no subject has a rate for (none sampled it, a counter went down) gives
 * none, as a gap in one subject's samples does. For one subject these are its own rates.
 */
export function summedRates(series: ReadonlyArray<readonly TrafficRate[]>): TrafficRate[] {
  const bounds = [...new Set(series.flatMap((rates) => rates.flatMap((rate) => [rate.from, rate.at])))].sort(
    (a, b) => a - b,
  );
  // Each subject's rates are in time order and do not overlap: one cursor each walks them.
  const cursors = series.map(() => 0);
  const summed: TrafficRate[] = [];
  for (let i = 1; i < bounds.length; i += 1) {
    const [from, at] = [bounds[i - 1], bounds[i]];
    let sum: TrafficRate | undefined;
    series.forEach((rates, s) => {
      while (cursors[s] < rates.length && rates[cursors[s]].at <= from) cursors[s] += 1;
      const rate = rates[cursors[s]];
      if (!rate || rate.from > from || rate.at < at) return;
      sum ??= { from, at, ...ZERO_RATE };
      for (const kind of RATE_KINDS) sum[kind] += rate[kind];
    });
    if (sum) summed.push(sum);
  }
  return summed;
}

/**
 * Aggregates the samples of a window (start, end]: time-weighted averages, 95th percentiles and
 * maxima of the rates of the intervals that end in it (the sample just before the window starts
 * the first one), and how complete the sampling was. Octets and packets are whole numbers per
 * second; `maximum_in_at` and `maximum_out_at` are the ends of the intervals with the most octets.
 */
export function aggregateTraffic(
  samples: readonly CounterSample[],
  options: AggregateOptions,
): AggregateStatistics {
  return aggregateSummedTraffic([samples], options);
}

/**
 * The aggregate of several subjects' traffic added up (`summedRates`), one subject's samples
 * each: what `aggregateTraffic` makes of one subject. Its accuracy is the mean of theirs, and
 * with no subject at all the window holds nothing (accuracy 0, no maxima).
 */
export function aggregateSummedTraffic(
  series: ReadonlyArray<readonly CounterSample[]>,
  options: AggregateOptions,
): AggregateStatistics {
  const start = options.start.getTime();
  const end = options.end.getTime();
  const inWindow = (at: number) => at > start && at <= end;
  const rates = summedRates(series.map(trafficRates)).filter((rate) => inWindow(rate.at));
  const held = series.length
    ? series.reduce((total, samples) => total + samples.filter((sample) => inWindow(sample.at)).length, 0) /
      series.length
    : 0;
  const expected = (end - start) / (options.intervalSeconds * 1000);
  const seconds = rates.reduce((total, rate) => total + (rate.at - rate.from) / 1000, 0);
  const average = (kind: keyof TrafficRate) =>
    seconds > 0
      ? rates.reduce((total, rate) => total + rate[kind] * ((rate.at - rate.from) / 1000), 0) / seconds
      : 0;
  const optional = (value: number | null, round: (value: number) => number) =>
    value === null ? null : round(value);
  const p95 = (kind: keyof TrafficRate) => optional(percentile95(rates.map((rate) => rate[kind])), whole);
  const most = (kind: keyof TrafficRate) => optional(peak(rates, kind)?.value ?? null, whole);
  const when = (kind: keyof TrafficRate) => {
    const found = peak(rates, kind);
    return found ? new Date(found.at).toISOString() : null;
  };
  const ifAny = (value: number) => (rates.length ? fine(value) : null);
  return {
    title: options.title,
    start: options.start.toISOString(),
    end: options.end.toISOString(),
    // Four significant digits: a year sampled for a day is a small accuracy, but not none.
    accuracy: expected > 0 ? Number(Math.min(1, held / expected).toPrecision(4)) : 0,
    created_at: options.now.toISOString(),
    next_update_at: nextSampleAt(options.now, options.intervalSeconds).toISOString(),
    average_pps_in: whole(average('ppsIn')),
    average_pps_out: whole(average('ppsOut')),
    average_ops_in: whole(average('opsIn')),
    average_ops_out: whole(average('opsOut')),
    average_eps_in: ifAny(average('epsIn')),
    average_eps_out: ifAny(average('epsOut')),
    average_dps_in: ifAny(average('dpsIn')),
    average_dps_out: ifAny(average('dpsOut')),
    percentile95_pps_in: p95('ppsIn'),
    percentile95_pps_out: p95('ppsOut'),
    percentile95_ops_in: p95('opsIn'),
    percentile95_ops_out: p95('opsOut'),
    maximum_pps_in: most('ppsIn'),
    maximum_pps_out: most('ppsOut'),
    maximum_ops_in: most('opsIn'),
    maximum_ops_out: most('opsOut'),
    maximum_in_at: when('opsIn'),
    maximum_out_at: when('opsOut'),
  };
}

/**
 * One aggregate per sliding window, each ending `now`, of the traffic of the subjects whose samples
 * `series` holds (one subject's, or those whose traffic adds up).
 */
export function slidingAggregates(
  series: ReadonlyArray<readonly CounterSample[]>,
  options: { now: Date; intervalSeconds: number },
): Record<SlidingWindow, AggregateStatistics> {
  return Object.fromEntries(
    SLIDING_WINDOWS.map((window) => [
      window,
      aggregateSummedTraffic(series, {
        ...options,
        start: windowStart(window, options.now),
        end: options.now,
        title: TITLES[window],
      }),
    ]),
  ) as Record<SlidingWindow, AggregateStatistics>;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 date-time (`2025-06-01T00:00:00Z`, `2025-06-01T02:00:00.5+02:00`) as an instant, or
 * undefined when it is not one (a day that does not exist, an hour past 23, no offset). An offset
 * whose `+` arrived as a space (an unencoded `+` in a query string) is read as `+`.
 */
export function parseDateTime(text: string): Date | undefined {
  const match = RFC3339.exec(text) ?? RFC3339.exec(text.replace(/ (\d{2}:\d{2})$/, '+$1'));
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHours, offsetMinutes] = match;
  const fields = [year, month, day, hour, minute, second].map(Number);
  const [y, mo, d, h, mi, s] = fields;
  const lastOfMonth = new Date(0);
  lastOfMonth.setUTCFullYear(y, mo, 0);
  const daysInMonth = lastOfMonth.getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) return undefined;
  let offset = 0;
  if (!zulu) {
    if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return undefined;
    offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * MINUTE_MS;
  }
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d);
  utc.setUTCHours(h, mi, s, Math.floor(Number(fraction ?? 0) * 1000));
  return new Date(utc.getTime() - offset);
}

/**
 * The window a statistics request names with `start` and `end`, or undefined for the sliding
 * windows. Both or neither; each an RFC 3339 date-time; `end` after `start` and at most a year
 * later. Every problem names its parameter.
 */
export function requestedWindow(query: {
  start?: unknown;
  end?: unknown;
}): { start: Date; end: Date } | undefined {
  if (query.start === undefined && query.end === undefined) return undefined;
  const problems: PropertyError[] = [];
  const read = (name: 'start' | 'end'): Date | undefined => {
    const value = query[name];
    if (value === undefined) {
      const other = name === 'start' ? 'end' : 'start';
      problems.push({
        name,
        reason: `Give ${name} together with ${other}, or neither for the sliding windows.`,
      });
      return undefined;
    }
    if (typeof value !== 'string') {
      problems.push({ name, reason: 'Give this parameter once.' });
      return undefined;
    }
    const instant = parseDateTime(value);
    if (!instant)
      problems.push({
        name,
        reason: 'Must be an RFC 3339 date-time with an offset, such as 2025-06-01T00:00:00Z.',
      });
    return instant;
  };
  const start = read('start');
  const end = read('end');
  if (start && end) {
    if (end.getTime() <= start.getTime()) problems.push({ name: 'end', reason: 'Must be later than start.' });
    else if (end.getTime() > addYears(start, 1).getTime())
      problems.push({ name: 'end', reason: 'Must be at most one year after start.' });
  }
  if (problems.length || !start || !end) throw new ValidationError(problems);
  return { start, end };
}

/** The aggregate of a window the client named, of the subjects whose samples `series` holds. */
export function customAggregate(
  series: ReadonlyArray<readonly CounterSample[]>,
  options: { start: Date; end: Date; now: Date; intervalSeconds: number },
): Record<typeof CUSTOM_WINDOW, AggregateStatistics> {
  return { [CUSTOM_WINDOW]: aggregateSummedTraffic(series, { ...options, title: 'Custom window' }) };
}
