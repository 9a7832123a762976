/** Samples of a Prometheus text exposition, by series: `name{label="value",...}` with labels sorted. */
export type Samples = ReadonlyMap<string, number>;

function seriesKey(name: string, labels: Record<string, string>): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((label) => `${label}="${labels[label]}"`);
  return pairs.length ? `${name}{${pairs.join(',')}}` : name;
}

/** Reads the samples of the text format (comments skipped; label values without escaped quotes). */
export function parseSamples(text: string): Samples {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) {
      labels[pair[1]] = pair[2];
    }
    samples.set(seriesKey(match[1], labels), Number(match[3]));
  }
  return samples;
}

/** The value of one series, 0 when it has none yet (a counter or histogram not yet touched). */
export function sampleOf(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  return samples.get(seriesKey(name, labels)) ?? 0;
}

/** Whether the exposition has a series of this name, whatever its labels. */
export function hasSeries(samples: Samples, name: string): boolean {
  return [...samples.keys()].some((key) => key === name || key.startsWith(`${name}{`));
}
