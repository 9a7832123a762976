import type { CheckResult, Finding, Outcome, RunSummary } from '../model';
import { OUTCOMES, revisionLabel, runPassed, unexpectedFailures } from '../model';

export interface ConsoleOptions {
  /** Colour the output with ANSI escapes; off by default so that logs and pipes stay plain. */
  colour?: boolean;
}

const ANSI: Record<Outcome | 'bold' | 'dim', string> = {
  PASS: '\x1b[32m',
  FAIL: '\x1b[31m',
  WARN: '\x1b[33m',
  NOT_APPLICABLE: '\x1b[90m',
  INCONCLUSIVE: '\x1b[36m',
  TIMEOUT: '\x1b[35m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
};
const RESET = '\x1b[0m';

/** Wide enough for the longest outcome name, so that ids line up in a column. */
const OUTCOME_WIDTH = Math.max(...OUTCOMES.map((o) => o.length));

const PROBLEMS: readonly Outcome[] = ['FAIL', 'TIMEOUT', 'WARN'];

function paint(text: string, style: keyof typeof ANSI, colour: boolean): string {
  return colour ? `${ANSI[style]}${text}${RESET}` : text;
}

/**
 * Makes text from a server safe to print: control characters (escape sequences above all) could
 * otherwise move the cursor, rewrite earlier lines or change the terminal's state. Line breaks
 * continue at the given indent so that multi-line messages stay inside their block.
 */
function clean(text: string, indent = ''): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(
      // eslint-disable-next-line no-control-regex -- finding control characters is the point here
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    )
    .replace(/\t/g, '  ')
    .replace(/\n/g, `\n${indent}`);
}

const PROGRESS_DETAIL_MAX = 200;

/** Progress stays one line per fact: long or multi-line messages are folded and cut. */
function oneLine(text: string): string {
  const folded = text.replace(/\s*\n\s*/g, ' ').trim();
  return folded.length > PROGRESS_DETAIL_MAX ? `${folded.slice(0, PROGRESS_DETAIL_MAX - 1)}…` : folded;
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function findingLine(finding: Finding): string {
  return `[${finding.severity}] ${finding.message}`;
}

/** The one thing worth reading first about a check that did not pass. */
function headline(result: CheckResult): string | undefined {
  const first = result.findings.find((f) => f.severity === 'must') ?? result.findings[0];
  const more = result.findings.length > 1 ? ` (+${result.findings.length - 1} more)` : '';
  if (result.reason && first) return `${result.reason}; ${findingLine(first)}${more}`;
  if (result.reason) return result.reason;
  if (first) return `${findingLine(first)}${more}`;
  return undefined;
}

function countOutcomes(results: readonly CheckResult[]): Record<Outcome, number> {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const result of results) counts[result.outcome] = (counts[result.outcome] ?? 0) + 1;
  return counts;
}

/**
 * One progress line per finished check, e.g. `[ 12/80] PASS            PAG-003  title (34 ms)`.
 * `index` is zero-based, as the runner reports it; non-passing checks get a second, indented line
 * with their reason or first finding.
 */
export function formatProgress(
  result: CheckResult,
  index: number,
  total: number,
  options: ConsoleOptions = {},
): string {
  const colour = options.colour ?? false;
  const width = String(total).length;
  const position = `[${String(index + 1).padStart(width)}/${total}]`;
  const outcome = paint(result.outcome.padEnd(OUTCOME_WIDTH), result.outcome, colour);
  const line = `${position} ${outcome}  ${clean(result.id)}  ${clean(result.title)} ${paint(`(${duration(result.durationMs)})`, 'dim', colour)}`;
  if (result.outcome === 'PASS') return line;
  const detail = headline(result);
  if (detail === undefined) return line;
  const indent = ' '.repeat(position.length + 1);
  return `${line}\n${indent}${oneLine(clean(detail))}`;
}

/**
 * The end-of-run report: counts, duration, every check that failed, timed out or warned with its
 * findings, the run's warnings, and a last line that says whether the run passed.
 */
export function formatSummary(summary: RunSummary, options: ConsoleOptions = {}): string {
  const colour = options.colour ?? false;
  const counts = countOutcomes(summary.results);
  const lines: string[] = [];

  lines.push(paint(`${clean(summary.tool.name)} ${clean(summary.tool.version)}`, 'bold', colour));
  lines.push(`Server:   ${clean(summary.baseUrl)}`);
  lines.push(`Profile:  ${summary.profile}`);
  lines.push(`Schema:   ${summary.schemaVersion === null ? 'not declared' : clean(summary.schemaVersion)}`);
  lines.push(`Judged:   ${revisionLabel(summary)}`);
  lines.push(`Started:  ${clean(summary.startedAt)}`);
  lines.push(`Duration: ${duration(summary.durationMs)}`);
  lines.push('');
  lines.push(
    `${summary.results.length} checks: ` +
      OUTCOMES.map((o) => paint(`${o} ${counts[o]}`, counts[o] ? o : 'dim', colour)).join(', '),
  );

  for (const outcome of PROBLEMS) {
    const results = summary.results.filter((r) => r.outcome === outcome);
    if (!results.length) continue;
    lines.push('');
    lines.push(paint(`${outcome} (${results.length})`, outcome, colour));
    for (const result of results) {
      lines.push(`  ${clean(result.id)}  ${clean(result.title)}`);
      const indent = '      ';
      if (result.clause) lines.push(`    ${paint(clean(result.clause, indent), 'dim', colour)}`);
      if (result.reason) lines.push(`    ${clean(result.reason, indent)}`);
      for (const finding of result.findings) lines.push(`    - ${clean(findingLine(finding), indent)}`);
    }
  }

  if (summary.lacking?.length) {
    lines.push('');
    lines.push(paint('INCONCLUSIVE, by what the checks lacked', 'INCONCLUSIVE', colour));
    for (const { what, checks } of summary.lacking)
      lines.push(`  - ${clean(what, '    ')} (${checks.length}): ${clean(checks.join(', '), '    ')}`);
    if (summary.profile === 'read')
      lines.push(
        `  ${paint('--profile full orders what the checks need (on a staging exchange); see the README', 'dim', colour)}`,
      );
  }

  if (summary.warnings.length) {
    lines.push('');
    lines.push(paint('Run warnings', 'WARN', colour));
    for (const warning of summary.warnings) lines.push(`  - ${clean(warning, '    ')}`);
  }

  const expectations = summary.expectations;
  if (expectations) {
    lines.push('');
    lines.push(
      `Expected failures: ${expectations.stillFailing.length} of ${expectations.listed.length} listed still fail`,
    );
    if (expectations.nowPassing.length)
      lines.push(
        paint(
          `  no longer failing, remove from the list: ${clean(expectations.nowPassing.join(', '))}`,
          'FAIL',
          colour,
        ),
      );
  }

  lines.push('');
  if (expectations) {
    const unexpected = unexpectedFailures(summary).length;
    const passed = runPassed(summary);
    lines.push(
      paint(
        passed
          ? `PASSED: no unexpected FAIL or TIMEOUT among ${summary.results.length} checks`
          : `FAILED: ${unexpected} unexpected FAIL or TIMEOUT, ${expectations.nowPassing.length} expected failure(s) gone, among ${summary.results.length} checks`,
        passed ? 'PASS' : 'FAIL',
        colour,
      ),
    );
    return lines.join('\n');
  }
  const broken = counts.FAIL + counts.TIMEOUT;
  lines.push(
    broken === 0
      ? paint(`PASSED: no FAIL and no TIMEOUT among ${summary.results.length} checks`, 'PASS', colour)
      : paint(
          `FAILED: ${counts.FAIL} FAIL and ${counts.TIMEOUT} TIMEOUT among ${summary.results.length} checks`,
          'FAIL',
          colour,
        ),
  );
  return lines.join('\n');
}
