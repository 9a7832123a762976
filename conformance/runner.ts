import type { HttpRequest, HttpResponse } from './http';
import type { CheckResult, Finding, Outcome, Profile, RecordedExchange, RunSummary, Safety } from './model';
import { OUTCOMES } from './model';
import type { Role, Session, Suite } from './suite';
import { DEFAULT_WAITS, Verdict } from './suite';
import { Throttled, throttlingWarning } from './throttling';
import { toolIdentity } from './tool';

/** One check: a clause of IX-API and how to find out whether a server keeps it. */
export interface CheckDefinition {
  /** Stable id, e.g. `PAG-003`; never reused for another meaning. */
  id: string;
  title: string;
  /** The clause of the specification the check holds the server to. */
  clause: string;
  /** Operations the check exercises (the coverage the conformance document reports). */
  operations: readonly string[];
  /** Operations that must be declared for the check to apply (default: all of `operations`). */
  requires?: readonly string[];
  safety: Safety;
  /** Own deadline; running past it is TIMEOUT. */
  deadlineMs?: number;
  run(t: CheckContext): Promise<void>;
}

const DEFAULT_DEADLINE_MS = 60_000;

/** What a running check uses to talk to the server and to record what it found. */
export class CheckContext {
  readonly findings: Finding[] = [];
  readonly evidence: RecordedExchange[] = [];
  /** What the check could not judge and why, though it judged the rest; the result's reason. */
  readonly notes: string[] = [];
  /** How long the check waited out the server's 429s; its deadline does not count that time. */
  throttledMs = 0;

  constructor(
    readonly suite: Suite,
    readonly definition: CheckDefinition,
  ) {}

  private readonly record = (exchange: RecordedExchange) => {
    this.evidence.push(exchange);
    if (exchange.throttled?.retried) this.throttledMs += exchange.throttled.waitMs;
  };

  /** A MUST: a broken one fails the check. */
  must(condition: unknown, message: string): boolean {
    if (!condition) this.findings.push({ severity: 'must', message });
    return Boolean(condition);
  }

  /** A SHOULD, or a choice the specification leaves open: a broken one is a warning. */
  should(condition: unknown, message: string): boolean {
    if (!condition) this.findings.push({ severity: 'should', message });
    return Boolean(condition);
  }

  /**
   * Says what the check left unjudged (a day it cannot wait for, say) while it judged the rest; the
   * report shows it as the reason of whatever outcome the check comes to.
   */
  note(message: string): void {
    this.notes.push(message);
  }

  notApplicable(reason: string): never {
    throw new Verdict('NOT_APPLICABLE', reason);
  }

  /**
   * Ends the check unjudged. `lacking` names the data that would let it judge ("a connection of
   * the primary account in production"); the summary groups the checks by it.
   */
  inconclusive(reason: string, lacking?: string): never {
    throw new Verdict('INCONCLUSIVE', reason, lacking);
  }

  send(request: HttpRequest): Promise<HttpResponse> {
    return this.suite.send(request, this.record);
  }

  session(role: Role = 'primary'): Promise<Session> {
    return this.suite.session(role, this.record);
  }

  async token(role: Role = 'primary'): Promise<string> {
    return (await this.session(role)).accessToken;
  }

  /** The path of an operation with its `{id}` filled in and a query string appended. */
  path(operationId: string, options: { id?: string; query?: string } = {}): string {
    const template = this.suite.operation(operationId).path;
    const filled =
      options.id === undefined ? template : template.replace('{id}', encodeURIComponent(options.id));
    return options.query ? `${filled}?${options.query}` : filled;
  }

  /**
   * Calls an operation as the given role (or without a token when `role` is null) and holds the
   * answer to the document: a documented status and a body matching its schema.
   */
  async call(
    operationId: string,
    options: {
      id?: string;
      query?: string;
      role?: Role | null;
      body?: unknown;
      rawBody?: string | Buffer;
      headers?: Record<string, string>;
    } = {},
  ): Promise<HttpResponse> {
    const op = this.suite.operation(operationId);
    const token = options.role === null ? undefined : await this.token(options.role ?? 'primary');
    const response = await this.send({
      method: op.method,
      path: this.path(operationId, options),
      token,
      body: options.body,
      rawBody: options.rawBody,
      headers: options.headers,
    });
    this.contract(operationId, response);
    return response;
  }

  /** Records every way the response departs from the document as a MUST finding. */
  contract(operationId: string, response: HttpResponse): void {
    for (const problem of this.suite.contractProblems(operationId, response)) {
      this.must(
        false,
        `${this.suite.operation(operationId).method} ${response.url.replace(this.suite.http.baseUrl, '')}: ${problem}`,
      );
    }
  }

  /** A list of items, or a finding and an empty list. */
  items(response: HttpResponse): Array<Record<string, unknown>> {
    if (Array.isArray(response.body)) return response.body as Array<Record<string, unknown>>;
    this.must(false, `expected a JSON array, got ${response.text.slice(0, 80)}`);
    return [];
  }
}

function outcomeOf(findings: readonly Finding[]): Outcome {
  if (findings.some((f) => f.severity === 'must')) return 'FAIL';
  if (findings.some((f) => f.severity === 'should')) return 'WARN';
  return 'PASS';
}

class DeadlineExceeded extends Error {}

/** Runs one check to its outcome; nothing a server does makes this throw. */
export async function runCheck(
  suite: Suite,
  definition: CheckDefinition,
  profile: Profile,
): Promise<CheckResult> {
  const started = Date.now();
  const t = new CheckContext(suite, definition);
  const result = (outcome: Outcome, reason?: string, lacking?: string): CheckResult => ({
    id: definition.id,
    title: definition.title,
    clause: definition.clause,
    safety: definition.safety,
    operations: [...definition.operations],
    outcome,
    findings: t.findings,
    reason: [reason, ...t.notes].filter(Boolean).join('; ') || undefined,
    evidence: t.evidence,
    durationMs: Date.now() - started,
    ...(outcome === 'INCONCLUSIVE' ? { lacking: lacking ?? reason } : {}),
  });
  if (definition.safety === 'mutate' && profile !== 'full') {
    return result('NOT_APPLICABLE', 'creates resources; run with --profile full');
  }
  const undeclared = (definition.requires ?? definition.operations).filter((op) => !suite.isDeclared(op));
  if (undeclared.length) {
    return result('NOT_APPLICABLE', `the server does not declare ${undeclared.join(', ')}`);
  }
  let timer: NodeJS.Timeout | undefined;
  // Deadlines are set for the default waits: longer waits give checks that much longer.
  const stretch = Math.max(
    1,
    suite.waits.provisioning / DEFAULT_WAITS.provisioning,
    suite.waits.settling / DEFAULT_WAITS.settling,
  );
  const deadlineMs = Math.round((definition.deadlineMs ?? DEFAULT_DEADLINE_MS) * stretch);
  try {
    await Promise.race([
      definition.run(t),
      new Promise((_, reject) => {
        // Time spent waiting out 429s is the server's, not the check's: the deadline moves by it.
        let credited = 0;
        const arm = (ms: number) => {
          timer = setTimeout(() => {
            const owed = t.throttledMs - credited;
            credited = t.throttledMs;
            if (owed > 0) arm(owed);
            else reject(new DeadlineExceeded());
          }, ms);
        };
        arm(deadlineMs);
      }),
    ]);
    return result(outcomeOf(t.findings));
  } catch (error) {
    const failed = t.findings.some((f) => f.severity === 'must');
    if (error instanceof Verdict) {
      // A failure already found stands, whatever stopped the check afterwards.
      return failed ? result('FAIL', error.message) : result(error.outcome, error.message, error.lacking);
    }
    if (error instanceof Throttled) {
      // A server enforcing its limits is not wrong; the check just could not finish judging it.
      const reason = `the server throttled the check: ${error.message}`;
      return failed ? result('FAIL', reason) : result('INCONCLUSIVE', reason);
    }
    if (error instanceof DeadlineExceeded) {
      const waited = t.throttledMs ? ` (plus ${t.throttledMs} ms waiting out 429s)` : '';
      return result('TIMEOUT', `no answer within ${deadlineMs} ms${waited}`);
    }
    t.findings.push({
      severity: 'must',
      message: `the check could not complete: ${error instanceof Error ? error.message : String(error)}`,
    });
    return result('FAIL');
  } finally {
    clearTimeout(timer);
  }
}

export interface RunOptions {
  profile: Profile;
  only?: readonly string[];
  skip?: readonly string[];
  onResult?: (result: CheckResult, index: number, total: number) => void;
}

/** Whether an id matches a selector: an exact id, or a prefix ending in `-` or `*` (`PAG-`, `PAG*`). */
function matches(id: string, selectors: readonly string[]): boolean {
  return selectors.some((s) => s === id || (/[-*]$/.test(s) && id.startsWith(s.replace(/\*$/, ''))));
}

/** Runs the selected checks in registry order and summarises them. */
export async function runChecks(
  suite: Suite,
  checks: readonly CheckDefinition[],
  options: RunOptions,
): Promise<RunSummary> {
  const started = Date.now();
  const selected = checks.filter(
    (check) =>
      (!options.only?.length || matches(check.id, options.only)) &&
      !(options.skip?.length && matches(check.id, options.skip)),
  );
  await suite.discover();
  const results: CheckResult[] = [];
  for (const [index, check] of selected.entries()) {
    const result = await runCheck(suite, check, options.profile);
    results.push(result);
    options.onResult?.(result, index, selected.length);
  }
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const result of results) counts[result.outcome] += 1;
  const warnings = [...suite.warnings];
  const lacking = new Map<string, string[]>();
  for (const result of results)
    if (result.outcome === 'INCONCLUSIVE' && result.lacking)
      lacking.set(result.lacking, [...(lacking.get(result.lacking) ?? []), result.id]);
  const throttled = throttlingWarning(suite.http.throttles);
  if (throttled) warnings.push(throttled);
  if (
    results.length &&
    results.every((r) => r.outcome === 'INCONCLUSIVE' || r.outcome === 'NOT_APPLICABLE')
  ) {
    warnings.push('no check could judge the server: are the base URL and the credentials right?');
  }
  return {
    tool: toolIdentity(),
    reportVersion: 1,
    baseUrl: suite.options.baseUrl,
    profile: options.profile,
    schemaVersion: suite.schemaVersion,
    schemaRevision: suite.revision.name,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    counts,
    results,
    warnings,
    lacking: [...lacking]
      .map(([what, checks]) => ({ what, checks }))
      .sort((a, b) => b.checks.length - a.checks.length || a.what.localeCompare(b.what)),
  };
}
