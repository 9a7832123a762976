/**
 * The vocabulary of the conformance suite: what a check is, what it can conclude, and what it keeps
 * as evidence. Nothing here knows about any particular server.
 */

/**
 * - PASS: the server did what the clause requires.
 * - FAIL: it did not (a MUST was broken).
 * - WARN: a SHOULD was broken, or the server made a choice the specification leaves open.
 * - NOT_APPLICABLE: the server does not declare what the check needs.
 * - INCONCLUSIVE: the check could not judge (no data to test with, every call refused).
 * - TIMEOUT: the check ran out of its own deadline (an asynchronous state never came).
 */
export const OUTCOMES = ['PASS', 'FAIL', 'WARN', 'NOT_APPLICABLE', 'INCONCLUSIVE', 'TIMEOUT'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** `read` checks only read; `mutate` checks create resources of their own and remove them. */
export type Safety = 'read' | 'mutate';

export type Profile = 'read' | 'full';

export interface RecordedExchange {
  request: { method: string; url: string; headers: Record<string, string>; body?: unknown };
  response?: { status: number; headers: Record<string, string>; body?: unknown };
  error?: string;
  durationMs: number;
  /**
   * Set on a 429 answer: the Retry-After it carried, how long the suite waited before sending the
   * same request again (`retried`), or why it did not (`reason`).
   */
  throttled?: { retryAfter: string | null; waitMs: number; retried: boolean; reason?: string };
}

export interface Finding {
  severity: 'must' | 'should';
  message: string;
}

export interface CheckResult {
  id: string;
  title: string;
  clause: string;
  safety: Safety;
  operations: string[];
  outcome: Outcome;
  /** Why the outcome is what it is: failed expectations, or why the check could not judge. */
  findings: Finding[];
  reason?: string;
  evidence: RecordedExchange[];
  durationMs: number;
  /** For INCONCLUSIVE: what the exchange would need to hold for the check to judge. */
  lacking?: string;
}

/**
 * Known failures a user lists so that a run passes while they are being fixed; a listed check that
 * stops failing fails the run, so the list cannot go stale.
 */
export interface Expectations {
  listed: string[];
  /** Listed checks that failed or timed out, as expected. */
  stillFailing: string[];
  /** Listed checks that passed or only warned: remove them from the list. */
  nowPassing: string[];
  /** Listed ids this run has no result for (unknown, or left out by --only/--skip). */
  unmatched: string[];
}

/** How a report names the revision a run was judged by. */
export const revisionLabel = (summary: Pick<RunSummary, 'schemaRevision'>): string =>
  summary.schemaRevision === 'older' ? 'the older schema revision (before 2.6.0)' : 'schema revision 2.6.0';

export interface RunSummary {
  tool: { name: string; version: string };
  /** Version of this JSON report's shape. */
  reportVersion: 1;
  baseUrl: string;
  profile: Profile;
  schemaVersion: string | null;
  /** The revision responses were judged by: 2.6.0, or the older one for servers that claim it. */
  schemaRevision: '2.6.0' | 'older';
  startedAt: string;
  durationMs: number;
  counts: Record<Outcome, number>;
  results: CheckResult[];
  warnings: string[];
  /** The INCONCLUSIVE checks grouped by what they lacked, the largest group first. */
  lacking?: Array<{ what: string; checks: string[] }>;
  expectations?: Expectations;
}

const broken = (result: CheckResult) => result.outcome === 'FAIL' || result.outcome === 'TIMEOUT';

/** Compares a run with the list of checks expected to fail. */
export function expectationsOf(results: readonly CheckResult[], listed: readonly string[]): Expectations {
  const byId = new Map(results.map((result) => [result.id, result]));
  const unique = [...new Set(listed)];
  return {
    listed: unique,
    stillFailing: unique.filter((id) => byId.has(id) && broken(byId.get(id)!)),
    nowPassing: unique.filter((id) => ['PASS', 'WARN'].includes(byId.get(id)?.outcome ?? '')),
    unmatched: unique.filter((id) => !byId.has(id)),
  };
}

/** Failed or timed-out checks that the expectations do not excuse. */
export const unexpectedFailures = (summary: RunSummary): CheckResult[] => {
  const excused = new Set(summary.expectations?.stillFailing ?? []);
  return summary.results.filter((result) => broken(result) && !excused.has(result.id));
};

/** A passing run has no FAIL or TIMEOUT that is not expected, and no expected failure that went away. */
export const runPassed = (summary: RunSummary): boolean =>
  unexpectedFailures(summary).length === 0 && !summary.expectations?.nowPassing.length;

/** Reads an expected-failures list: one check id a line; `#` starts a comment. */
export const parseExpectedFailures = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
