import { loadSpec } from '../spec';
import { allChecks } from './checks';
import { cleanUp } from './checks/lifecycle';
import type { CheckResult, Profile, RunSummary } from './model';
import { expectationsOf, runPassed } from './model';
import type { CheckDefinition } from './runner';
import { CheckContext, runChecks } from './runner';
import type { Credentials } from './suite';
import type { RetryPolicy } from './throttling';
import { Suite } from './suite';

export type { CheckResult, Outcome, Profile, RunSummary } from './model';
export type { Credentials } from './suite';
export type { RetryPolicy } from './throttling';
export { allChecks, uncoveredOperations } from './checks';

export interface ConformanceOptions {
  baseUrl: string;
  credentials: Credentials;
  profile?: Profile;
  only?: string[];
  skip?: string[];
  ledgerFile?: string;
  /** How the server's 429s are waited out (default: up to 3 retries, no single wait over 60 s). */
  retry?: Partial<RetryPolicy>;
  /** Check ids known to fail; see `Expectations`. */
  expectedFailures?: string[];
  onResult?: (result: CheckResult, index: number, total: number) => void;
}

/** Runs the suite against one server and returns the summary; never throws for what a server does. */
export async function runConformance(options: ConformanceOptions): Promise<RunSummary> {
  const document = loadSpec();
  const suite = new Suite({
    baseUrl: options.baseUrl,
    credentials: options.credentials,
    profile: options.profile ?? 'read',
    document,
    ledgerFile: options.ledgerFile,
    retry: options.retry,
  });
  const summary = await runChecks(suite, allChecks(document), {
    profile: options.profile ?? 'read',
    only: options.only,
    skip: options.skip,
    onResult: options.onResult,
  });
  if (!options.expectedFailures) return summary;
  const expectations = expectationsOf(summary.results, options.expectedFailures);
  if (expectations.unmatched.length)
    summary.warnings.push(
      `expected failures without a result in this run: ${expectations.unmatched.join(', ')}`,
    );
  return { ...summary, expectations };
}

/** Removes what a crashed mutating run left behind, from its ledger; returns what could not go. */
export async function cleanUpLedger(options: {
  baseUrl: string;
  credentials: Credentials;
  ledgerFile: string;
  retry?: Partial<RetryPolicy>;
}): Promise<number> {
  const document = loadSpec();
  const suite = new Suite({ ...options, profile: 'full', document });
  const cleaner: CheckDefinition = {
    id: 'CLEANUP',
    title: 'cleanup',
    clause: '',
    operations: [],
    safety: 'mutate',
    run: async (t) => cleanUp(t),
  };
  await cleanUp(new CheckContext(suite, cleaner));
  return suite.ledger.outstanding().length;
}

/**
 * A passing run has no FAIL and no TIMEOUT, except those listed as expected, and no listed check
 * that stopped failing.
 */
export const passed = (summary: RunSummary): boolean => runPassed(summary);
