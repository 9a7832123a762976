import type { CheckResult, RecordedExchange, RunSummary } from '../model';
import { revisionLabel } from '../model';
import { throttleNote } from '../throttling';

const SUITE_NAME = 'ixapi-conformance';

/**
 * Removes what XML 1.0 forbids outright (most control characters, lone surrogates, U+FFFE/U+FFFF):
 * no escape can represent them, and one of them makes the whole report unreadable to CI servers.
 */
function legal(text: string): string {
  return text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '');
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

function exchangeLine(exchange: RecordedExchange): string {
  const answer = exchange.response
    ? String(exchange.response.status)
    : `no response${exchange.error ? ` (${exchange.error})` : ''}`;
  const line = `${exchange.request.method} ${exchange.request.url} -> ${answer} (${Math.round(exchange.durationMs)} ms)`;
  return exchange.throttled ? `${line} ${throttleNote(exchange)}` : line;
}

/** The plain-text body of a failure or a warning: reason, findings, then the requests made. */
function details(result: CheckResult): string {
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
    for (const exchange of result.evidence) lines.push(`  ${exchangeLine(exchange)}`);
  }
  return lines.join('\n');
}

function firstProblem(result: CheckResult): string {
  const first = result.findings.find((f) => f.severity === 'must') ?? result.findings[0];
  // CI servers show the message as a one-line heading; the full text follows in the element.
  return (first?.message ?? result.reason ?? result.outcome).replace(/\s*\r?\n\s*/g, ' ');
}

function testcase(result: CheckResult): string {
  const open = `  <testcase${attributes({
    classname: family(result.id),
    name: `${result.id} ${result.title}`,
    time: seconds(result.durationMs),
  })}`;
  switch (result.outcome) {
    case 'PASS':
      return `${open}/>`;
    case 'FAIL':
    case 'TIMEOUT':
      return [
        `${open}>`,
        `    <failure${attributes({ message: firstProblem(result), type: result.outcome })}>${escapeText(details(result))}</failure>`,
        '  </testcase>',
      ].join('\n');
    case 'WARN':
      return [
        `${open}>`,
        `    <system-out>${escapeText(details(result))}</system-out>`,
        '  </testcase>',
      ].join('\n');
    case 'NOT_APPLICABLE':
    case 'INCONCLUSIVE':
      return [
        `${open}>`,
        `    <skipped${attributes({ message: `${result.outcome}: ${result.reason ?? 'no reason given'}` })}/>`,
        '  </testcase>',
      ].join('\n');
  }
}

/**
 * A JUnit XML report for CI servers: one test suite, one test case per check. FAIL and TIMEOUT are
 * failures; NOT_APPLICABLE and INCONCLUSIVE are skipped; WARN passes with its findings on system-out.
 */
export function toJUnitXml(summary: RunSummary): string {
  const results = summary.results;
  const failures = results.filter((r) => r.outcome === 'FAIL' || r.outcome === 'TIMEOUT').length;
  const skipped = results.filter(
    (r) => r.outcome === 'NOT_APPLICABLE' || r.outcome === 'INCONCLUSIVE',
  ).length;
  const properties: Record<string, string> = {
    tool: `${summary.tool.name} ${summary.tool.version}`,
    baseUrl: summary.baseUrl,
    profile: summary.profile,
    schemaVersion: summary.schemaVersion ?? 'not declared',
    schemaRevision: revisionLabel(summary),
    startedAt: summary.startedAt,
  };
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite${attributes({
      name: SUITE_NAME,
      tests: results.length,
      failures,
      errors: 0,
      skipped,
      time: seconds(summary.durationMs),
      timestamp: summary.startedAt,
    })}>`,
    '  <properties>',
    ...Object.entries(properties).map(([name, value]) => `    <property${attributes({ name, value })}/>`),
    '  </properties>',
    ...results.map(testcase),
  ];
  if (summary.warnings.length) {
    lines.push(
      `  <system-out>${escapeText(summary.warnings.map((w) => `warning: ${w}`).join('\n'))}</system-out>`,
    );
  }
  lines.push('</testsuite>', '');
  return lines.join('\n');
}
