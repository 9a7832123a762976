import { spawnSync } from 'node:child_process';

/** The path of the first of `names` found on PATH, or undefined. */
export function onPath(...names: string[]): string | undefined {
  for (const name of names) {
    const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', name], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  }
  return undefined;
}

/** Whether the tests run in CI (`CI` set, as CI systems set it, and not to false or 0). */
export const inCi = (env: NodeJS.ProcessEnv = process.env): boolean =>
  !!env.CI && !['false', '0'].includes(env.CI.trim().toLowerCase());

/**
 * Tests that cannot run here, for `reason` (a program missing, no root): in CI, where .ci/run
 * installs what they need, they fail; elsewhere they are skipped, saying so loudly.
 */
export function cannotRun(context: Mocha.Context, reason: string): never {
  if (inCi()) throw new Error(`${reason}, and CI must run these tests`);
  process.stderr.write(`\n  SKIPPED (${context.test?.parent?.fullTitle() ?? 'tests'}): ${reason}\n`);
  context.skip();
}

/** A program of the system the tests need (chromium, xmllint): its path, or `cannotRun`. */
export function systemTool(context: Mocha.Context, path: string | undefined, what: string): string {
  return path ?? cannotRun(context, `${what} is not installed`);
}
