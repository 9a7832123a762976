import { createHash } from 'node:crypto';
import type { CheckResult, Finding, Outcome, RecordedExchange, RunSummary } from '../model';
import { OUTCOMES, revisionLabel } from '../model';
import { throttleNote } from '../throttling';

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Control characters become visible symbols rather than vanishing, so evidence shows what the
 * server really sent; lone surrogates cannot be encoded and become the replacement character.
 */
function visible(text: string): string {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point here
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|[\uD800-\uDFFF]/gu, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return '\uFFFD';
  });
}

/** Everything that reaches the page from a check or a server goes through here, in text and attributes alike. */
function esc(text: string | number): string {
  return visible(String(text)).replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** Only known outcomes become class names; anything else gets a neutral look. */
function outcomeClass(outcome: string): string {
  return (OUTCOMES as readonly string[]).includes(outcome) ? `o-${outcome}` : 'o-unknown';
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function countOutcomes(results: readonly CheckResult[]): Record<Outcome, number> {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const result of results) counts[result.outcome] = (counts[result.outcome] ?? 0) + 1;
  return counts;
}

/** Bodies as a person wants to read them: JSON indented, even when it arrived as a string. */
function pretty(body: unknown): string {
  if (typeof body === 'string') {
    try {
      const parsed: unknown = JSON.parse(body);
      if (typeof parsed === 'object' && parsed !== null) return JSON.stringify(parsed, null, 2);
    } catch {
      // Not JSON: shown as it came.
    }
    return body;
  }
  try {
    return JSON.stringify(body, null, 2) ?? String(body);
  } catch {
    // Values JSON cannot hold (big integers, cycles) still deserve to be shown somehow.
    return String(body);
  }
}

function headersTable(headers: Record<string, string>): string {
  const entries = Object.entries(headers);
  if (!entries.length) return '<p class="none">No headers.</p>';
  const rows = entries.map(([name, value]) => `<tr><th>${esc(name)}</th><td>${esc(value)}</td></tr>`);
  return `<table class="headers">${rows.join('')}</table>`;
}

function bodyBlock(body: unknown): string {
  if (body === undefined) return '<p class="none">No body.</p>';
  return `<pre class="payload">${esc(pretty(body))}</pre>`;
}

function statusClass(status: number): string {
  if (status >= 500) return 's5';
  if (status >= 400) return 's4';
  if (status >= 300) return 's3';
  return 's2';
}

function exchangeBlock(exchange: RecordedExchange, index: number): string {
  const { request, response } = exchange;
  const status = response
    ? `<span class="status ${statusClass(response.status)}">${esc(response.status)}</span>`
    : '<span class="status s5">no response</span>';
  const answer = response
    ? `<p>Status <strong>${esc(response.status)}</strong></p>` +
      `<h5>Headers</h5>${headersTable(response.headers)}<h5>Body</h5>${bodyBlock(response.body)}`
    : '<p class="none">No response.</p>';
  const error = exchange.error ? `<p class="error">Error: ${esc(exchange.error)}</p>` : '';
  const throttled = exchange.throttled ? `<p class="throttled">${esc(throttleNote(exchange))}</p>` : '';
  return [
    '<details class="exchange">',
    `<summary><span class="n">${index + 1}.</span> <code class="method">${esc(request.method)}</code> ` +
      `<code class="url">${esc(request.url)}</code> ${status} <span class="time">${esc(duration(exchange.durationMs))}</span></summary>`,
    error,
    throttled,
    '<div class="pair">',
    `<section><h4>Request</h4><h5>Headers</h5>${headersTable(request.headers)}<h5>Body</h5>${bodyBlock(request.body)}</section>`,
    `<section><h4>Response</h4>${answer}</section>`,
    '</div>',
    '</details>',
  ].join('\n');
}

function findingItem(finding: Finding): string {
  const severity = finding.severity === 'must' ? 'must' : 'should';
  return `<li class="sev-${severity}"><span class="sev">${severity.toUpperCase()}</span> <span class="searchable">${esc(finding.message)}</span></li>`;
}

function checkBlock(result: CheckResult): string {
  const cls = outcomeClass(result.outcome);
  const parts = [
    `<details class="check ${cls}" data-outcome="${esc(result.outcome)}">`,
    `<summary><span class="badge ${cls}">${esc(result.outcome.replace('_', ' '))}</span>` +
      `<span class="searchable name"><code class="id">${esc(result.id)}</code> ${esc(result.title)}</span>` +
      `<span class="searchable clause">${esc(result.clause)}</span>` +
      `<span class="time">${esc(duration(result.durationMs))}</span></summary>`,
    '<div class="detail">',
  ];
  if (result.reason)
    parts.push(
      `<p class="reason"><strong>Reason:</strong> <span class="searchable">${esc(result.reason)}</span></p>`,
    );
  if (result.findings.length) {
    parts.push(`<ul class="findings">${result.findings.map(findingItem).join('')}</ul>`);
  } else if (!result.reason) {
    parts.push('<p class="none">No findings.</p>');
  }
  const operations = result.operations.length
    ? result.operations.map((op) => `<code>${esc(op)}</code>`).join(', ')
    : 'none';
  parts.push(`<p class="ops">Safety: ${esc(result.safety)} · Operations: ${operations}</p>`);
  if (result.evidence.length) {
    const count = result.evidence.length;
    parts.push(`<h3>Evidence: ${count} ${count === 1 ? 'exchange' : 'exchanges'}</h3>`);
    parts.push(...result.evidence.map(exchangeBlock));
  } else {
    parts.push('<p class="none">No exchanges recorded.</p>');
  }
  parts.push('</div>', '</details>');
  return parts.join('\n');
}

const STYLE = `
:root {
  color-scheme: light dark;
  --fg: #1f2328; --on: #ffffff; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa; --line: #d1d9e0;
  --PASS: #1a7f37; --FAIL: #cf222e; --WARN: #9a6700; --NOT_APPLICABLE: #6e7781;
  --INCONCLUSIVE: #0969da; --TIMEOUT: #8250df;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6edf3; --on: #0d1117; --muted: #9198a1; --bg: #0d1117; --panel: #161b22; --line: #3d444d;
    --PASS: #3fb950; --FAIL: #f85149; --WARN: #d29922; --NOT_APPLICABLE: #9198a1;
    --INCONCLUSIVE: #4493f8; --TIMEOUT: #ab7df8;
  }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 1.5rem; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
h1 { margin: 0 0 0.5rem; font-size: 1.6rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1rem; margin: 1rem 0 0.5rem; }
h4 { margin: 0 0 0.25rem; font-size: 0.95rem; }
h5 { margin: 0.5rem 0 0.25rem; font-size: 0.8rem; text-transform: uppercase; color: var(--muted); }
.verdict { display: inline-block; margin: 0 0 1rem; padding: 0.3rem 0.8rem; border-radius: 6px; font-weight: 700; color: var(--on); }
.verdict.passed { background: var(--PASS); }
.verdict.failed { background: var(--FAIL); }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0 0 1rem; }
.meta dt { color: var(--muted); }
.meta dd { margin: 0; overflow-wrap: anywhere; }
.badges { display: flex; flex-wrap: wrap; gap: 0.5rem; list-style: none; padding: 0; margin: 0; }
.badge { display: inline-block; padding: 0.1rem 0.55rem; border-radius: 999px; font-size: 0.8rem; font-weight: 600;
  color: var(--on); background: var(--NOT_APPLICABLE); white-space: nowrap; }
.badges .badge { font-size: 0.9rem; padding: 0.25rem 0.8rem; }
.badge.o-PASS { background: var(--PASS); }
.badge.o-FAIL { background: var(--FAIL); }
.badge.o-WARN { background: var(--WARN); }
.badge.o-NOT_APPLICABLE { background: var(--NOT_APPLICABLE); }
.badge.o-INCONCLUSIVE { background: var(--INCONCLUSIVE); }
.badge.o-TIMEOUT { background: var(--TIMEOUT); }
/* A count of none is outlined, not faded: still legible in both colour schemes. */
.badge.zero { background: transparent; color: var(--muted); box-shadow: inset 0 0 0 1px var(--line); }
.warnings { border-left: 4px solid var(--WARN); background: var(--panel); padding: 0.5rem 1rem; margin: 1rem 0; }
.warnings h2 { margin-top: 0.25rem; }
.warnings.lacking { border-left-color: var(--INCONCLUSIVE); }
.filters { display: flex; flex-wrap: wrap; align-items: center; gap: 0.75rem 1.25rem; margin: 1.5rem 0 1rem;
  padding: 0.75rem 1rem; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
.filters[hidden] { display: none; }
.filters fieldset { border: 0; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 0.9rem; }
.filters legend { float: left; margin-right: 0.5rem; color: var(--muted); }
.filters input[type=search] { min-width: 18rem; padding: 0.3rem 0.5rem; font: inherit; }
.filters button { font: inherit; padding: 0.25rem 0.7rem; }
#shown { color: var(--muted); }
.row, details.check > summary { display: grid; grid-template-columns: 9.5rem minmax(0, 3fr) minmax(0, 2fr) 5rem;
  gap: 0.75rem; align-items: baseline; padding: 0.45rem 0.75rem; }
.row.head { font-weight: 600; color: var(--muted); border-bottom: 2px solid var(--line); }
details.check { border-bottom: 1px solid var(--line); border-left: 4px solid var(--NOT_APPLICABLE); }
details.check[hidden] { display: none; }
details.check.o-PASS { border-left-color: var(--PASS); }
details.check.o-FAIL { border-left-color: var(--FAIL); }
details.check.o-WARN { border-left-color: var(--WARN); }
details.check.o-INCONCLUSIVE { border-left-color: var(--INCONCLUSIVE); }
details.check.o-TIMEOUT { border-left-color: var(--TIMEOUT); }
details.check > summary { cursor: pointer; list-style: none; }
details.check > summary::-webkit-details-marker { display: none; }
details.check > summary .badge { justify-self: start; }
details.check > summary:hover { background: var(--panel); }
details.check[open] > summary { background: var(--panel); }
.name .id { font-weight: 700; margin-right: 0.35rem; }
.clause { color: var(--muted); font-size: 0.9em; overflow-wrap: anywhere; }
.time { color: var(--muted); font-variant-numeric: tabular-nums; text-align: right; white-space: nowrap; }
.detail { padding: 0.5rem 1rem 1rem 1.5rem; }
.findings { padding-left: 1.2rem; }
.findings li { margin: 0.2rem 0; overflow-wrap: anywhere; white-space: pre-line; }
.reason { white-space: pre-line; overflow-wrap: anywhere; }
.sev { font-size: 0.75rem; font-weight: 700; padding: 0 0.35rem; border-radius: 4px; color: var(--on); }
.sev-must .sev { background: var(--FAIL); }
.sev-should .sev { background: var(--WARN); }
.none, .ops { color: var(--muted); }
.error { color: var(--FAIL); }
details.exchange { margin: 0.4rem 0; border: 1px solid var(--line); border-radius: 6px; padding: 0.3rem 0.6rem; }
details.exchange > summary { cursor: pointer; overflow-wrap: anywhere; }
.throttled { border-left: 3px solid var(--WARN); padding-left: 0.5rem; }
.method { font-weight: 700; }
.status { font-weight: 700; }
.status.s2 { color: var(--PASS); }
.status.s3 { color: var(--INCONCLUSIVE); }
.status.s4 { color: var(--WARN); }
.status.s5 { color: var(--FAIL); }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1rem; margin-top: 0.5rem; }
.headers { border-collapse: collapse; font-size: 0.85rem; }
.headers th, .headers td { text-align: left; vertical-align: top; padding: 0.1rem 0.6rem 0.1rem 0; overflow-wrap: anywhere; }
.headers th { font-weight: 600; white-space: nowrap; }
.payload { margin: 0; padding: 0.5rem; background: var(--panel); border: 1px solid var(--line); border-radius: 4px;
  max-height: 28rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
#empty { color: var(--muted); padding: 1rem 0.75rem; }
footer { margin-top: 2rem; color: var(--muted); font-size: 0.85rem; }
@media (max-width: 700px) {
  .row.head { display: none; }
  .row, details.check > summary { grid-template-columns: 1fr; gap: 0.2rem; }
  .time { text-align: left; }
}
`;

// Plain ES5 in the page: the report may be opened in whatever browser is at hand.
const SCRIPT = String.raw`
(function () {
  'use strict';
  var form = document.getElementById('filters');
  if (!form) return;
  var search = document.getElementById('search');
  var shown = document.getElementById('shown');
  var empty = document.getElementById('empty');
  var boxes = Array.prototype.slice.call(form.querySelectorAll('input[name="outcome"]'));
  var checks = Array.prototype.slice.call(document.querySelectorAll('details.check'));
  var texts = checks.map(function (check) {
    return Array.prototype.map
      .call(check.querySelectorAll('.searchable'), function (el) { return el.textContent; })
      .join(' ')
      .toLowerCase();
  });
  function apply() {
    var allowed = {};
    boxes.forEach(function (box) { allowed[box.value] = box.checked; });
    var terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    checks.forEach(function (check, i) {
      var show = allowed[check.getAttribute('data-outcome')] !== false &&
        terms.every(function (term) { return texts[i].indexOf(term) !== -1; });
      check.hidden = !show;
      if (show) count += 1;
    });
    empty.hidden = count !== 0 || checks.length === 0;
    shown.textContent = count + ' of ' + checks.length + ' checks shown';
  }
  function only(outcomes) {
    boxes.forEach(function (box) { box.checked = !outcomes || outcomes.indexOf(box.value) !== -1; });
    apply();
  }
  function openAll(open) {
    checks.forEach(function (check) { if (!check.hidden) check.open = open; });
  }
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  form.addEventListener('submit', function (event) { event.preventDefault(); });
  document.getElementById('problems').addEventListener('click', function () { only(['FAIL', 'TIMEOUT', 'WARN']); });
  document.getElementById('all').addEventListener('click', function () { only(null); });
  document.getElementById('expand').addEventListener('click', function () { openAll(true); });
  document.getElementById('collapse').addEventListener('click', function () { openAll(false); });
  form.hidden = false;
  apply();
})();
`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * Nothing but this page's own style and script may run or load: a second line of defence should
 * anything hostile ever slip past the escaping, and a guarantee that opening the file calls no one.
 */
const CSP = [
  "default-src 'none'",
  `style-src ${sha256(STYLE)}`,
  `script-src ${sha256(SCRIPT)}`,
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The report for people: one self-contained HTML file with the run's facts, counts, filters and
 * every check with its findings and evidence. It reads without JavaScript; the script only filters.
 */
export function toHtml(summary: RunSummary): string {
  const counts = countOutcomes(summary.results);
  const passed = counts.FAIL === 0 && counts.TIMEOUT === 0;
  const total = summary.results.length;
  const verdict = passed
    ? `PASSED: no FAIL and no TIMEOUT among ${total} checks`
    : `FAILED: ${counts.FAIL} FAIL and ${counts.TIMEOUT} TIMEOUT among ${total} checks`;

  const meta: Array<[string, string]> = [
    ['Server', `<code>${esc(summary.baseUrl)}</code>`],
    ['Profile', esc(summary.profile)],
    ['Schema version', summary.schemaVersion === null ? 'not declared' : esc(summary.schemaVersion)],
    ['Judged by', esc(revisionLabel(summary))],
    ['Started', `<time>${esc(summary.startedAt)}</time>`],
    ['Duration', esc(duration(summary.durationMs))],
    ['Checks', esc(total)],
  ];
  const badges = OUTCOMES.map(
    (o) =>
      `<li class="badge o-${o}${counts[o] ? '' : ' zero'}">${o.replace('_', ' ')} <strong>${counts[o]}</strong></li>`,
  );
  const warnings = summary.warnings.length
    ? `<section class="warnings"><h2>Run warnings</h2><ul>${summary.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul></section>`
    : '';
  const lacking = summary.lacking?.length
    ? `<section class="warnings lacking"><h2>INCONCLUSIVE, by what the checks lacked</h2><ul>${summary.lacking
        .map(({ what, checks }) => `<li>${esc(what)} (${checks.length}): ${esc(checks.join(', '))}</li>`)
        .join('')}</ul></section>`
    : '';
  const boxes = OUTCOMES.map(
    (o) =>
      `<label><input type="checkbox" name="outcome" value="${o}" checked> <span class="badge o-${o}">${o.replace('_', ' ')}</span> ${counts[o]}</label>`,
  );
  const list = total ? summary.results.map(checkBlock).join('\n') : '<p class="none">No checks were run.</p>';

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">
<meta name="referrer" content="no-referrer">
<title>${passed ? 'PASSED' : 'FAILED'}: IX-API conformance of ${esc(summary.baseUrl)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>IX-API conformance report</h1>
<p class="verdict ${passed ? 'passed' : 'failed'}">${esc(verdict)}</p>
<dl class="meta">
${meta.map(([name, value]) => `<dt>${name}</dt><dd>${value}</dd>`).join('\n')}
</dl>
<ul class="badges">
${badges.join('\n')}
</ul>
</header>
${lacking}
${warnings}
<main>
<form id="filters" class="filters" hidden>
<fieldset><legend>Outcome</legend>
${boxes.join('\n')}
</fieldset>
<button type="button" id="problems">Problems only</button>
<button type="button" id="all">All</button>
<label>Search <input type="search" id="search" placeholder="id, title, clause or finding" autocomplete="off"></label>
<button type="button" id="expand">Expand all</button>
<button type="button" id="collapse">Collapse all</button>
<span id="shown" role="status"></span>
</form>
<div class="list">
<div class="row head"><span>Outcome</span><span>Check</span><span>Clause</span><span class="time">Duration</span></div>
${list}
<p id="empty" hidden>No check matches the filter.</p>
</div>
</main>
<footer>${esc(summary.tool.name)} ${esc(summary.tool.version)} · report version ${esc(summary.reportVersion)}</footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
