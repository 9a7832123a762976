import autocannon from 'autocannon';

/**
 * How bench:api measures: autocannon runs of one target, of a target in turns with its ceiling, and
 * of POSTs, and the table the figures are printed in.
 */

/** Seconds each measurement runs (BENCH_DURATION). */
export const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
/** Connections each measurement keeps open (BENCH_CONNECTIONS). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

export interface Figures {
  name: string;
  requests: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
}

/** One autocannon run of GETs of `target` for `duration` seconds. */
const run = (target: Target, duration: number) =>
  autocannon({ url: target.url, headers: target.headers ?? {}, connections: CONNECTIONS, duration });

/** The figures of one run (`requests` per second as autocannon averages them). */
const figuresOf = (name: string, result: autocannon.Result): Figures => ({
  name,
  requests: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  errors: result.errors + result.non2xx,
});

export async function measure(
  name: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<Figures> {
  const target = { name, url, headers };
  // A short warm-up so that JIT and connection pools are settled before the measured run.
  await run(target, 2);
  return figuresOf(name, await run(target, DURATION_SECONDS));
}

/** Two measurements taken in turns, and what the second made of the first in each round. */
export interface Paired {
  ceiling: Figures;
  target: Figures;
  /** The target's share of the ceiling in each round, in the order measured. */
  shares: number[];
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** How many rounds `measurePaired` takes turns in. */
const PAIRED_ROUNDS = 4;

/**
 * A target against its ceiling, measured in turns (ceiling first in odd rounds, target first in
 * even ones), each turn half as long as a plain measurement: the speed of a shared machine drifts
 * by more than the differences to be shown, and each round's share is taken from two runs seconds
 * apart. The figures are the rounds' medians; `shares` gives each round's share.
 */
export async function measurePaired(ceiling: Target, target: Target): Promise<Paired> {
  await run(ceiling, 2);
  await run(target, 2);
  const slice = Math.max(2, Math.round(DURATION_SECONDS / 2));
  const rounds: Array<{ ceiling: autocannon.Result; target: autocannon.Result }> = [];
  for (let round = 0; round < PAIRED_ROUNDS; round += 1) {
    if (round % 2 === 0) {
      const first = await run(ceiling, slice);
      rounds.push({ ceiling: first, target: await run(target, slice) });
    } else {
      const first = await run(target, slice);
      rounds.push({ ceiling: await run(ceiling, slice), target: first });
    }
  }
  // Each figure is the median of the rounds'; errors are counted over all of them.
  const figures = (name: string, results: autocannon.Result[]): Figures => {
    const each = results.map((result) => figuresOf(name, result));
    return {
      name,
      requests: median(each.map((f) => f.requests)),
      p50: median(each.map((f) => f.p50)),
      p99: median(each.map((f) => f.p99)),
      errors: each.reduce((sum, f) => sum + f.errors, 0),
    };
  };
  return {
    ceiling: figures(
      ceiling.name,
      rounds.map((r) => r.ceiling),
    ),
    target: figures(
      target.name,
      rounds.map((r) => r.target),
    ),
    shares: rounds.map((r) => r.target.requests.average / r.ceiling.requests.average),
  };
}

/** A paired share for the summary: the median of the rounds and their range, in per cent. */
export const pairedShare = ({ shares }: Paired) =>
  `${(median(shares) * 100).toFixed(0)}% of the ceiling (median of ${shares.length} rounds taken in turns with it: ${shares.map((share) => `${(share * 100).toFixed(0)}%`).join(', ')})`;

/** Like `measure`, for POSTs of one JSON body. */
export async function measureWrite(
  name: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: { connections?: number; amount?: number } = {},
): Promise<Figures> {
  const request = {
    url,
    method: 'POST' as const,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
  const connections = options.connections ?? CONNECTIONS;
  if (!options.amount) await autocannon({ ...request, connections, duration: 2 });
  const result = await autocannon({
    ...request,
    connections,
    // A slow answer is an answer: only a refusal or a dropped connection counts as not accepted.
    timeout: 60,
    ...(options.amount ? { amount: options.amount } : { duration: DURATION_SECONDS }),
  });
  const figures = figuresOf(name, result);
  // A burst of `amount` requests is rated over the time it took, not per second it ran.
  return options.amount ? { ...figures, requests: result.requests.total / (result.duration || 1) } : figures;
}

export function printTable(results: readonly Figures[], ceiling: number): void {
  process.stdout.write(
    `${'target'.padEnd(62)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'of ceiling'.padStart(11)} errors\n`,
  );
  for (const r of results) {
    process.stdout.write(
      `${r.name.padEnd(62)} ${r.requests.toFixed(0).padStart(9)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)} ${`${((r.requests / ceiling) * 100).toFixed(0)}%`.padStart(11)} ${r.errors}\n`,
    );
  }
}
