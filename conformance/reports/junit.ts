import type { CheckResult, RecordedExchange, RunSummary } from '../model';
import { revisionLabel } from '../model';
import { throttleNote } from '../throttling';

const SUITE_NAME = 'ixapi-conformance';

/**
 * What XML 1.0 forbids outright (most control characters, lone surrogates, U+FFFE/U+FFFF) cannot be
 * escaped, and one of them makes the whole report unreadable to CI servers: control characters
 * become their visible symbols (as the HTML report shows them), the rest the replacement character.
 */
function legal(text: string): string {
  return text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 ? String.fromCharCode(0x2400 + code) : '\uFFFD';
  });
}

function escapeText(text: string): string {
  return legal(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\r/g, '&#13;');
}

/** Attribute values also lose their line breaks and tabs to normalisation unless written as references. */
function escapeAttribute(text: string): string {
  return escapeText(text)
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\n/g, '&#10;')
    .replace(/\t/g, '&#9;');
}

function attributes(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([name, value]) => ` ${name}="${escapeAttribute(String(value))}"`)
    .join('');
}

function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** `PAG-003` belongs to `PAG`; ids without a number keep their whole name as the family. */
function family(id: string): string {
  const match = /^(.+?)-\d+$/.exec(id);
  return match ? match[1] : id;
}

/** Where a request went: its path and query as sent to the server under test, or the whole URL elsewhere. */
function target(url: string, baseUrl: string): string {
  let origin: string;
  try {
    origin = new URL(baseUrl).origin;
  } catch {
    return url;
  }
  return url.startsWith(origin) && /^(?:[/?#]|$)/.test(url.slice(origin.length))
    ? url.slice(origin.length) || '/'
    : url;
}

/** One recorded exchange on a line: `GET /api/v2/accounts → 200 (12 ms)`, and any wait for a 429. */
function exchangeLine(exchange: RecordedExchange, baseUrl: string): string {
  const answer = exchange.response
    ? String(exchange.response.status)
    : `no response${exchange.error ? ` (${exchange.error})` : ''}`;
  const line = `${exchange.request.method} ${target(exchange.request.url, baseUrl)} → ${answer} (${Math.round(exchange.durationMs)} ms)`;
  return exchange.throttled ? `${line} ${throttleNote(exchange)}` : line;
}

/** The plain-text body of a failure or a warning: reason, findings, then the requests made. */
function details(result: CheckResult, baseUrl: string): string {
  const lines: string[] = [];
  if (result.clause) lines.push(`Clause: ${result.clause}`);
  if (result.reason) lines.push(`Reason: ${result.reason}`);
  if (result.findings.length) {
    lines.push('Findings:');
    for (const finding of result.findings) {
      lines.push(`  [${finding.severity}] ${finding.message.replace(/\r?\n/g, '\n    ')}`);
    }
  }
  if (result.evidence.length) {
    lines.push('Evidence:');
    for (const exchange of result.evidence) lines.push(`  ${exchangeLine(exchange, baseUrl)}`);
  }
  return lines.join('\n');
}

/** CI servers show a message as a one-line heading; the full text follows in the element. */
const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, ' ');

function firstProblem(result: CheckResult): string {
  const first = result.findings.find((f) => f.severity === 'must') ?? result.findings[0];
  return oneLine(first?.message ?? result.reason ?? result.outcome);
}

/** How the run's list of expected failures (`--expected-failures`) bears on one check. */
type Listed = 'still failing' | 'now passing' | undefined;

function listedAs(result: CheckResult, summary: RunSummary): Listed {
  const expectations = summary.expectations;
  if (expectations?.stillFailing.includes(result.id)) return 'still failing';
  if (expectations?.nowPassing.includes(result.id)) return 'now passing';
  return undefined;
}

/**
 * What a CI server shows of a check beside its verdict: the clause, the operations, whether it only
 * reads, its outcome and reason, and one `evidence.N` per recorded exchange (redacted as recorded).
 */
function testcaseProperties(
  result: CheckResult,
  summary: RunSummary,
  listed: Listed,
): Array<[string, string]> {
  const properties: Array<[string, string]> = [
    ['id', result.id],
    ['clause', result.clause],
    ['operations', result.operations.join(', ') || 'none'],
    ['safety', result.safety],
    ['outcome', result.outcome],
  ];
  if (result.reason) properties.push(['reason', result.reason]);
  if (listed) properties.push(['expected-failure', listed]);
  result.evidence.forEach((exchange, index) =>
    properties.push([`evidence.${index + 1}`, exchangeLine(exchange, summary.baseUrl)]),
  );
  return properties;
}

function propertiesBlock(properties: Array<[string, string]>, indent: string): string[] {
  return [
    `${indent}<properties>`,
    ...properties.map(([name, value]) => `${indent}  <property${attributes({ name, value })}/>`),
    `${indent}</properties>`,
  ];
}

/** The element a CI server reads the verdict from: none (passed), `failure` or `skipped`. */
function verdict(result: CheckResult, summary: RunSummary, listed: Listed): string | undefined {
  const indent = '      ';
  if (listed === 'still failing')
    return `${indent}<skipped${attributes({ message: `expected failure (${result.outcome}, listed in --expected-failures): ${firstProblem(result)}` })}/>`;
  if (listed === 'now passing')
    return `${indent}<failure${attributes({
      message: `listed in --expected-failures but ${result.outcome}: remove it from the list`,
      type: 'EXPECTED_FAILURE_PASSED',
    })}>${escapeText(details(result, summary.baseUrl))}</failure>`;
  switch (result.outcome) {
    case 'PASS':
    case 'WARN':
      return undefined;
    case 'FAIL':
    case 'TIMEOUT':
      return `${indent}<failure${attributes({ message: firstProblem(result), type: result.outcome })}>${escapeText(details(result, summary.baseUrl))}</failure>`;
    case 'NOT_APPLICABLE':
    case 'INCONCLUSIVE':
      return `${indent}<skipped${attributes({ message: `${result.outcome}: ${oneLine(result.reason ?? 'no reason given')}` })}/>`;
  }
}

function testcase(result: CheckResult, summary: RunSummary): string {
  const listed = listedAs(result, summary);
  const lines = [
    `    <testcase${attributes({
      classname: family(result.id),
      name: `${result.id} ${result.title}`,
      time: seconds(result.durationMs),
    })}>`,
    ...propertiesBlock(testcaseProperties(result, summary, listed), '      '),
  ];
  const element = verdict(result, summary, listed);
  if (element) lines.push(element);
  // A warning passes, so its findings go where passed tests keep their output.
  if (result.outcome === 'WARN')
    lines.push(`      <system-out>${escapeText(details(result, summary.baseUrl))}</system-out>`);
  lines.push('    </testcase>');
  return lines.join('\n');
}

/** Counts as a CI server reads them from the test cases: failures, and skipped checks. */
function countsOf(summary: RunSummary): { failures: number; skipped: number } {
  let failures = 0;
  let skipped = 0;
  for (const result of summary.results) {
    const listed = listedAs(result, summary);
    if (listed === 'still failing') skipped += 1;
    else if (listed === 'now passing') failures += 1;
    else if (result.outcome === 'FAIL' || result.outcome === 'TIMEOUT') failures += 1;
    else if (result.outcome === 'NOT_APPLICABLE' || result.outcome === 'INCONCLUSIVE') skipped += 1;
  }
  return { failures, skipped };
}

/**
 * A JUnit XML report for CI servers (Jenkins, GitLab, GitHub test-report actions): `testsuites`
 * holding one test suite, one test case per check, each with properties (clause, operations,
 * safety, outcome, reason, evidence). FAIL and TIMEOUT are failures; NOT_APPLICABLE and
 * INCONCLUSIVE are skipped; WARN passes with its findings on system-out. A check listed as an
 * expected failure is skipped while it fails and a failure once it stops, so the report's verdict
 * is the exit code's.
 */
export function toJUnitXml(summary: RunSummary): string {
  const { failures, skipped } = countsOf(summary);
  const counts = {
    tests: summary.results.length,
    failures,
    errors: 0,
    skipped,
    time: seconds(summary.durationMs),
    timestamp: summary.startedAt,
  };
  const properties: Array<[string, string]> = [
    ['tool', `${summary.tool.name} ${summary.tool.version}`],
    ['baseUrl', summary.baseUrl],
    ['profile', summary.profile],
    ['schemaVersion', summary.schemaVersion ?? 'not declared'],
    ['schemaRevision', revisionLabel(summary)],
    ['startedAt', summary.startedAt],
  ];
  if (summary.expectations)
    properties.push(['expectedFailures', summary.expectations.listed.join(', ') || 'none']);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: SUITE_NAME, ...counts })}>`,
    `  <testsuite${attributes({ name: SUITE_NAME, ...counts })}>`,
    ...propertiesBlock(properties, '    '),
    ...summary.results.map((result) => testcase(result, summary)),
  ];
  if (summary.warnings.length) {
    lines.push(
      `    <system-out>${escapeText(summary.warnings.map((w) => `warning: ${w}`).join('\n'))}</system-out>`,
    );
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}
