import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { SeriesType } from '../support/series';
import { nodeDefaultSeries, PROJECT_SERIES } from '../support/series';

/**
 * The Prometheus rules of deploy/prometheus: promtool checks them and runs their test cases; every
 * alert is annotated, has a runbook entry in docs/operating.md and cases of its own, and reads only
 * series the service exports, from scrape jobs the shipped configuration and docs/deployment.md name.
 */

const ROOT = path.resolve(__dirname, '../..');
const RULES = 'deploy/prometheus/rules/ixapi.rules.yml';
const RULE_TESTS = 'deploy/prometheus/tests/ixapi.rules.test.yml';
/** The page holding the runbook, which every alert's `runbook` annotation links into. */
const RUNBOOK = 'docs/operating.md';
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

const JOBS = ['ixapi-api', 'ixapi-worker', 'ixapi-temporal-sdk'];
const SEVERITIES = ['page', 'ticket'];
const ANNOTATIONS = ['summary', 'description', 'runbook'];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

interface AlertCase {
  alertname: string;
  eval_time: string;
  exp_alerts?: unknown[];
}

interface RuleTestFile {
  rule_files: string[];
  tests: { name?: string; alert_rule_test?: AlertCase[] }[];
}

const rules = (parse(read(RULES)) as RuleFile).groups.flatMap((group) => group.rules);
const alerts = rules.filter((rule): rule is Rule & { alert: string } => rule.alert !== undefined);
const ruleTests = parse(read(RULE_TESTS)) as RuleTestFile;

/** Runs promtool in the repository; fails with its output when it fails, or with how to get it. */
function promtool(...args: string[]): string {
  const run = spawnSync('promtool', args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (run.error !== undefined && 'code' in run.error && run.error.code === 'ENOENT') {
    assert.fail('promtool is not installed: `apt-get install prometheus` (Debian, Ubuntu) provides it');
  }
  if (run.error) throw run.error;
  assert.equal(run.status, 0, `promtool ${args.join(' ')} failed:\n${run.stdout}${run.stderr}`);
  return run.stdout;
}

/** Series names in a PromQL expression: `ixapi_…` ones, and recorded ones (`level:metric:operations`). */
function seriesIn(expr: string): { own: string[]; recorded: string[] } {
  const outsideStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return {
    own: [...expr.matchAll(/(?<![\w:])ixapi_\w+/g)].map(([name]) => name),
    recorded: [...outsideStrings.matchAll(/(?<![\w:])[a-zA-Z_]\w*:[\w:]+/g)].map(([name]) => name),
  };
}

/** Whether `name` is a series of `known`, or the bucket, count or sum of one of its histograms. */
function isKnownSeries(name: string, known: Record<string, SeriesType>): boolean {
  if (known[name] !== undefined) return true;
  const histogram = /^(\w+)_(?:bucket|count|sum)$/.exec(name)?.[1];
  return histogram !== undefined && known[histogram] === 'histogram';
}

/** The runbook: severity by alert name, from the entries of the "Alerts" section of RUNBOOK. */
function runbookEntries(): Map<string, string> {
  const page = read(RUNBOOK);
  const start = page.indexOf('\n## Alerts\n');
  assert.notEqual(start, -1, `${RUNBOOK} has no "## Alerts" section`);
  const section = page.slice(start + '\n## Alerts\n'.length).split('\n## ')[0];
  return new Map(
    [...section.matchAll(/^- `(\w+)` \((\w+)\): /gm)].map(([, name, severity]) => [name, severity]),
  );
}

/** The anchors GitHub gives the headings of RUNBOOK. */
function runbookAnchors(): Set<string> {
  return new Set(
    [...read(RUNBOOK).matchAll(/^#{1,6} (.+)$/gm)].map(([, title]) =>
      title
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('alert rules: deploy/prometheus', () => {
  it('passes promtool check rules', function () {
    this.timeout(120_000);
    const output = promtool('check', 'rules', RULES);
    assert.match(output, new RegExp(`SUCCESS: ${rules.length} rules found`), output);
  });

  it('passes its promtool test cases', function () {
    this.timeout(120_000);
    promtool('test', 'rules', RULE_TESTS);
  });

  it('has alerts, and tests that load this rule file', () => {
    assert.ok(alerts.length > 0, `${RULES} has no alert`);
    const loaded = ruleTests.rule_files.map((file) =>
      path.relative(ROOT, path.resolve(ROOT, path.dirname(RULE_TESTS), file)),
    );
    assert.deepEqual(loaded, [RULES]);
  });

  it('names every alert once', () => {
    const names = alerts.map((alert) => alert.alert);
    assert.deepEqual(
      names.filter((name, index) => names.indexOf(name) !== index),
      [],
    );
  });

  it(`gives every alert a severity, a summary, a description and a runbook link into ${RUNBOOK}`, () => {
    const anchors = runbookAnchors();
    for (const alert of alerts) {
      assert.ok(SEVERITIES.includes(alert.labels?.severity ?? ''), `${alert.alert}: severity page or ticket`);
      for (const annotation of ANNOTATIONS) {
        assert.ok(alert.annotations?.[annotation]?.trim(), `${alert.alert}: annotation ${annotation}`);
      }
      const runbook = alert.annotations?.runbook ?? '';
      const anchor = runbook.startsWith(`${RUNBOOK}#`) ? runbook.slice(RUNBOOK.length + 1) : undefined;
      assert.ok(
        anchor !== undefined && /^[\w-]+$/.test(anchor) && anchors.has(anchor),
        `${alert.alert}: runbook is not a heading of ${RUNBOOK}`,
      );
    }
  });

  it(`has one runbook entry in ${RUNBOOK} per alert, with its severity`, () => {
    const entries = runbookEntries();
    assert.deepEqual([...entries.keys()].sort(), alerts.map((alert) => alert.alert).sort());
    for (const alert of alerts) assert.equal(entries.get(alert.alert), alert.labels?.severity, alert.alert);
  });

  it('has test cases for every alert, where it fires and where it must not, and for no other', () => {
    const cases = ruleTests.tests.flatMap((test) => test.alert_rule_test ?? []);
    const names = new Set(alerts.map((alert) => alert.alert));
    for (const { alertname } of cases)
      assert.ok(names.has(alertname), `a test case of unknown alert ${alertname}`);
    for (const name of names) {
      const own = cases.filter((testCase) => testCase.alertname === name);
      assert.ok(
        own.some((testCase) => (testCase.exp_alerts ?? []).length > 0),
        `${name}: no case where it fires`,
      );
      assert.ok(
        own.some((testCase) => (testCase.exp_alerts ?? []).length === 0),
        `${name}: no case where it must not fire`,
      );
    }
  });

  it('reads only series the service exports, and recorded series the rules record', () => {
    const known = { ...nodeDefaultSeries(), ...PROJECT_SERIES };
    const recorded = new Set(rules.flatMap((rule) => (rule.record === undefined ? [] : [rule.record])));
    for (const rule of rules) {
      const { own, recorded: used } = seriesIn(rule.expr);
      for (const name of own) assert.ok(isKnownSeries(name, known), `${rule.alert ?? rule.record}: ${name}`);
      for (const name of used)
        assert.ok(recorded.has(name), `${rule.alert ?? rule.record}: ${name} is not recorded`);
    }
  });

  it('selects only scrape jobs the shipped Prometheus configuration and its guide both name', () => {
    for (const rule of rules) {
      for (const [, operator, value] of rule.expr.matchAll(/\bjob\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
        const name = rule.alert ?? rule.record;
        assert.ok(operator === '=' || operator === '=~', `${name}: job${operator}`);
        for (const job of value.split('|')) assert.ok(JOBS.includes(job), `${name}: job ${job}`);
      }
    }
    const jobsIn = (file: string) =>
      [...read(file).matchAll(/^\s+- job_name: (\S+)$/gm)].map(([, job]) => job);
    for (const file of ['deploy/prometheus/prometheus.yml', 'docs/deployment.md']) {
      const configured = jobsIn(file);
      for (const job of JOBS) assert.ok(configured.includes(job), `${file} scrapes no job ${job}`);
    }
  });
});
