import { loadSpec } from '../spec';
import { allChecks } from './checks';
import type { CheckResult, Profile, RunSummary } from './model';
import { expectationsOf, runPassed } from './model';
import { CheckContext, runChecks } from './runner';
import { finish } from './steps/circuit-orders';
import { cleanUp } from './steps/cleanup';
import type { Credentials, Waits } from './suite';
import { Suite } from './suite';
import type { RetryPolicy } from './throttling';

export type { CheckResult, Outcome, Profile, RunSummary } from './model';
export type { Credentials, Waits } from './suite';
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
  /** How long the full profile waits for provisioning and changes (default `DEFAULT_WAITS`). */
  waits?: Partial<Waits>;
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
    waits: options.waits,
  });
  const summary = await runChecks(suite, allChecks(document), {
    profile: options.profile ?? 'read',
    only: options.only,
    skip: options.skip,
    onResult: options.onResult,
  });
  if (suite.options.profile === 'full') await giveBack(suite, summary);
  if (!options.expectedFailures) return summary;
  const expectations = expectationsOf(summary.results, options.expectedFailures);
  if (expectations.unmatched.length)
    summary.warnings.push(
      `expected failures without a result in this run: ${expectations.unmatched.join(', ')}`,
    );
  return { ...summary, expectations };
}

/** A context for what the suite does outside any check (cleaning up). */
function housekeeping(suite: Suite): CheckContext {
  return new CheckContext(suite, {
    id: 'CLEANUP',
    title: 'cleanup',
    clause: '',
    operations: [],
    safety: 'mutate',
    run: async () => {},
  });
}

/**
 * Gives back, at the end of a full run, what the suite provisioned for its checks to share (and
 * anything a check left), archiving services and configs once cancelled; what cannot go is a
 * warning of the run.
 */
async function giveBack(suite: Suite, summary: RunSummary): Promise<void> {
  try {
    await finish(housekeeping(suite), true);
  } catch (error) {
    summary.warnings.push(
      `giving back what the suite ordered stopped: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const left = suite.ledger.outstanding(true).length;
  if (left)
    summary.warnings.push(
      `${left} resource(s) the suite ordered could not be given back yet; \`cleanup\` removes them from the ledger`,
    );
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
  await cleanUp(housekeeping(suite), true);
  return suite.ledger.outstanding(true).length;
}

/**
 * A passing run has no FAIL and no TIMEOUT, except those listed as expected, and no listed check
 * that stopped failing.
 */
export const passed = (summary: RunSummary): boolean => runPassed(summary);
