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
}
