import type { Verdict } from './checks';

/** The rehearsal's clock: its lines, timed from the start, and its phases, each timed and bounded. */

export const started = Date.now();
export const phases: Array<{ name: string; seconds: number }> = [];
export const say = (message: string) =>
  process.stdout.write(`[rehearse ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}\n`);

/** Runs one phase of the rehearsal, timed; a phase that outlasts `limitMinutes` fails the run. */
export async function phase<T>(name: string, work: () => Promise<T>, limitMinutes = 15): Promise<T> {
  say(`── ${name}`);
  const from = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${name}: not done within ${limitMinutes} minutes`)),
      limitMinutes * 60_000,
    );
  });
  try {
    const result = await Promise.race([work(), limit]);
    phases.push({ name, seconds: (Date.now() - from) / 1000 });
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** Prints how long each phase took and every verdict, and where the logs are. */
export function report(verdicts: Verdict[], requests: number, logs: string): void {
  process.stdout.write('\nPhases\n');
  for (const { name, seconds } of phases)
    process.stdout.write(`  ${seconds.toFixed(1).padStart(7)} s  ${name}\n`);
  process.stdout.write(
    `  ${((Date.now() - started) / 1000).toFixed(1).padStart(7)} s  in all (${requests} requests)\n`,
  );
  process.stdout.write('\nChecks\n');
  for (const verdict of verdicts)
    process.stdout.write(`  ${verdict.ok ? 'PASS' : 'FAIL'}  ${verdict.check}: ${verdict.detail}\n`);
  const failed = verdicts.filter((verdict) => !verdict.ok).length;
  process.stdout.write(
    `\nrehearsal: ${verdicts.length - failed} checks passed, ${failed} failed; logs in ${logs}/\n`,
  );
}
