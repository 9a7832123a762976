import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import type { CheckResult, Outcome, RunSummary } from '../../conformance/model';
import {
  expectationsOf,
  OUTCOMES,
  parseExpectedFailures,
  runPassed,
  unexpectedFailures,
} from '../../conformance/model';
import { formatProgress, formatSummary } from '../../conformance/reports/console';
import { toHtml } from '../../conformance/reports/html';
import { toJson } from '../../conformance/reports/json';
import { toJUnitXml } from '../../conformance/reports/junit';
import { onPath, systemTool } from '../support/system-tools';

const SCRIPT = '<script>alert(1)</script>';
const HOSTILE = `${SCRIPT} ]]> & "double" 'single' \u0001 end`;

function check(id: string, outcome: Outcome, extra: Partial<CheckResult> = {}): CheckResult {
  return {
    id,
    title: `title of ${id}`,
    clause: `clause of ${id}`,
    safety: 'read',
    operations: ['accounts_list'],
    outcome,
    findings: [],
    evidence: [],
    durationMs: 34,
    ...extra,
  };
}

function summaryOf(results: CheckResult[], warnings: string[] = []): RunSummary {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const result of results) counts[result.outcome] += 1;
  return {
    tool: { name: 'ixapi-conformance', version: '0.1.0' },
    reportVersion: 1,
    baseUrl: 'https://ix.example/api/v2',
    profile: 'read',
    schemaVersion: '2.6.0',
    schemaRevision: '2.6.0',
    startedAt: '2025-01-02T03:04:05.000Z',
    durationMs: 12_345,
    counts,
    results,
    warnings,
  };
}

const hostileResults: CheckResult[] = [
  check('PAG-001', 'PASS'),
  check('PAG-002', 'FAIL', {
    title: `Pagination ${HOSTILE}`,
    clause: `Clause ${HOSTILE}`,
    findings: [
      { severity: 'must', message: `the server answered ${HOSTILE}` },
      { severity: 'should', message: 'a second finding' },
    ],
    evidence: [
      {
        request: {
          method: 'GET',
          url: `https://ix.example/api/v2/accounts?q=${SCRIPT}&x="'><img src=x onerror=alert(2)>`,
          headers: { authorization: 'Bearer <secret>', 'x-evil': `"><${SCRIPT}` },
          body: { name: HOSTILE },
        },
        response: {
          status: 500,
          headers: { 'content-type': 'text/html', 'x-evil': HOSTILE },
          body: `${SCRIPT}]]><!-- -->`,
        },
        durationMs: 12,
      },
      {
        request: { method: 'POST', url: 'https://ix.example/api/v2/accounts', headers: {} },
        response: { status: 201, headers: {}, body: { id: 'acc-1', nested: { list: [1, 2, HOSTILE] } } },
        durationMs: 7,
      },
      {
        request: { method: 'DELETE', url: 'https://ix.example/api/v2/accounts/acc-1', headers: {} },
        error: `socket hang up ${HOSTILE}`,
        durationMs: 3,
      },
    ],
    durationMs: 1234,
  }),
  check('ERR-001', 'WARN', { findings: [{ severity: 'should', message: `prefer problem+json ${HOSTILE}` }] }),
  check('DISC-001', 'NOT_APPLICABLE', { reason: `the server does not declare ${HOSTILE}` }),
  check('AUTH-001', 'INCONCLUSIVE', { reason: 'every call refused' }),
  check('LIFE-001', 'TIMEOUT', { reason: 'no answer within 60000 ms' }),
];

const hostile = summaryOf(hostileResults, [`run warning ${HOSTILE}`]);

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const XML_NAME = /^[A-Za-z_][\w.-]*$/;
const ILLEGAL_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  assert.ok(!/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(text), `stray & in ${text}`);
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (_, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(parseInt(ref.slice(1), 10));
    return named[ref];
  });
}

/**
 * A strict little XML reader, enough to prove the report well-formed: balanced tags, one root,
 * quoted attributes, no raw `<` or stray `&` in text, no characters XML 1.0 forbids.
 */
function parseXml(xml: string): XmlElement {
  assert.ok(!ILLEGAL_XML.test(xml), 'no character XML 1.0 forbids');
  let rest = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (rest.length) {
    const lt = rest.indexOf('<');
    const text = lt === -1 ? rest : rest.slice(0, lt);
    assert.ok(!text.includes(']]>'), 'no ]]> in text');
    if (stack.length) stack[stack.length - 1].text += decodeEntities(text);
    else assert.equal(text.trim(), '', 'nothing outside the root element');
    if (lt === -1) break;
    rest = rest.slice(lt);
    const gt = rest.indexOf('>');
    assert.ok(gt > 0, 'every tag closes');
    const tag = rest.slice(1, gt);
    rest = rest.slice(gt + 1);
    if (tag.startsWith('/')) {
      const open = stack.pop();
      assert.ok(open, `closing tag </${tag.slice(1)}> without an opening one`);
      assert.equal(tag.slice(1).trim(), open.name, 'tags are balanced');
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const name = /^\S+/.exec(body)?.[0] ?? '';
    assert.match(name, XML_NAME, `element name ${name}`);
    const attributes: Record<string, string> = {};
    const attributeText = body.slice(name.length);
    const attributePattern = /\s+([A-Za-z_][\w.:-]*)="([^"<]*)"/g;
    let consumed = 0;
    for (const match of attributeText.matchAll(attributePattern)) {
      assert.equal(match.index, consumed, `attributes of <${name}> are well-formed`);
      assert.ok(!(match[1] in attributes), `no duplicate attribute ${match[1]}`);
      attributes[match[1]] = decodeEntities(match[2]);
      consumed = match.index + match[0].length;
    }
    assert.equal(attributeText.slice(consumed).trim(), '', `attributes of <${name}> are well-formed`);
    const element: XmlElement = { name, attributes, children: [], text: '' };
    if (stack.length) stack[stack.length - 1].children.push(element);
    else {
      assert.equal(root, undefined, 'a single root element');
      root = element;
    }
    if (!selfClosing) stack.push(element);
  }
  assert.equal(stack.length, 0, 'every element is closed');
  assert.ok(root, 'a root element');
  return root;
}

/** Just enough of a DOM element for the report's filter script. */
class FakeElement {
  hidden = false;
  open = false;
  checked = true;
  value = '';
  textContent = '';
  private readonly listeners: Record<string, Array<(event: unknown) => void>> = {};

  constructor(
    readonly attributes: Record<string, string> = {},
    readonly selected: Record<string, FakeElement[]> = {},
  ) {}

  addEventListener(type: string, listener: (event: unknown) => void): void {
    (this.listeners[type] ??= []).push(listener);
  }
  getAttribute(name: string): string | null {
    return this.attributes[name] ?? null;
  }
  querySelectorAll(selector: string): FakeElement[] {
    return this.selected[selector] ?? [];
  }
  fire(type: string): void {
    for (const listener of this.listeners[type] ?? []) listener({ preventDefault: () => undefined });
  }
}

/** Runs the page's script over stand-ins for its controls and checks, built from the page itself. */
function runFilterScript(html: string) {
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1];
  const checks = html
    .split('<details class="check ')
    .slice(1)
    .map((chunk) => {
      const outcome = /data-outcome="([^"]*)"/.exec(chunk)![1];
      const searchable = [...chunk.matchAll(/<span class="searchable[^"]*">([\s\S]*?)<\/span>/g)].map((m) => {
        const element = new FakeElement();
        element.textContent = decodeHtml(m[1].replace(/<[^>]*>/g, ''));
        return element;
      });
      return new FakeElement({ 'data-outcome': outcome }, { '.searchable': searchable });
    });
  const boxes = OUTCOMES.map((outcome) => {
    const box = new FakeElement();
    box.value = outcome;
    return box;
  });
  const form = new FakeElement({}, { 'input[name="outcome"]': boxes });
  form.hidden = true;
  const elements: Record<string, FakeElement> = { filters: form };
  for (const id of ['search', 'shown', 'empty', 'problems', 'all', 'expand', 'collapse']) {
    elements[id] = new FakeElement();
  }
  const document = {
    getElementById: (id: string) => elements[id] ?? null,
    querySelectorAll: (selector: string) => (selector === 'details.check' ? checks : []),
  };
  runInNewContext(script, { document });
  const visibleIds = () =>
    checks
      .filter((c) => !c.hidden)
      .map((c) => /^\S+/.exec(c.querySelectorAll('.searchable')[0].textContent)![0]);
  return { form, boxes, checks, elements, visibleIds };
}

function decodeHtml(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };
  return text.replace(/&(#\d+|\w+);/g, (_, ref: string) =>
    ref.startsWith('#') ? String.fromCodePoint(Number(ref.slice(1))) : named[ref],
  );
}

describe('conformance reports', () => {
  describe('JUnit XML', () => {
    const xml = toJUnitXml(hostile);
    // Parsed in a hook so that a malformed report fails a test instead of aborting the run.
    let root: XmlElement;
    let suite: XmlElement;
    let cases: XmlElement[];
    before(() => {
      root = parseXml(xml);
      suite = root.children[0];
      cases = suite.children.filter((c) => c.name === 'testcase');
    });
    const byId = (id: string) => cases.find((c) => c.attributes.name.startsWith(`${id} `))!;
    const propertiesOf = (element: XmlElement) =>
      Object.fromEntries(
        element.children
          .find((c) => c.name === 'properties')!
          .children.map((p) => [p.attributes.name, p.attributes.value]),
      );

    it('is testsuites holding one well-formed test suite, both with the right counts', () => {
      assert.equal(root.name, 'testsuites');
      assert.deepEqual(
        root.children.map((c) => c.name),
        ['testsuite'],
      );
      assert.equal(suite.attributes.name, 'ixapi-conformance');
      for (const element of [root, suite]) {
        assert.equal(element.attributes.tests, '6');
        assert.equal(element.attributes.failures, '2');
        assert.equal(element.attributes.errors, '0');
        assert.equal(element.attributes.skipped, '2');
        assert.equal(element.attributes.time, '12.345');
        assert.equal(element.attributes.timestamp, '2025-01-02T03:04:05.000Z');
      }
      assert.equal(cases.length, hostileResults.length);
      assert.deepEqual(propertiesOf(suite), {
        tool: 'ixapi-conformance 0.1.0',
        baseUrl: 'https://ix.example/api/v2',
        profile: 'read',
        schemaVersion: '2.6.0',
        schemaRevision: 'schema revision 2.6.0',
        startedAt: '2025-01-02T03:04:05.000Z',
      });
    });

    it('holds no raw markup, and shows characters XML cannot hold as symbols', () => {
      assert.ok(!xml.includes(SCRIPT));
      assert.ok(!xml.includes('\u0001'));
      assert.ok(xml.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
      assert.equal(
        byId('PAG-002').attributes.name,
        `PAG-002 Pagination ${HOSTILE.replace('\u0001', '\u2401')}`,
      );
      const awkward = toJUnitXml(
        summaryOf([
          check('ODD-001', 'FAIL', {
            title: 'nul \u0000 bell \u0007 escape \u001b lone \uD800 noncharacter \uFFFE',
            findings: [{ severity: 'must', message: 'tab\tand\r\nbreak\rend' }],
          }),
        ]),
      );
      const odd = parseXml(awkward).children[0].children.find((c) => c.name === 'testcase')!;
      assert.equal(
        odd.attributes.name,
        'ODD-001 nul \u2400 bell \u2407 escape \u241b lone \uFFFD noncharacter \uFFFD',
      );
      assert.equal(odd.children[1].attributes.message, 'tab\tand break end');
      assert.ok(
        odd.children[1].text.includes('tab\tand\n    break\rend'),
        'line breaks and tabs kept in text',
      );
    });

    it('maps every check to a test case with family, name and time', () => {
      for (const result of hostileResults) {
        const found = byId(result.id);
        assert.ok(found, result.id);
        assert.equal(found.attributes.classname, result.id.split('-')[0]);
        assert.equal(found.attributes.name, `${result.id} ${result.title}`.replace('\u0001', '\u2401'));
        assert.equal(found.attributes.time, (result.durationMs / 1000).toFixed(3));
      }
    });

    it('gives every test case its clause, operations, safety, outcome, reason and evidence as properties', () => {
      for (const result of hostileResults) {
        const properties = propertiesOf(byId(result.id));
        assert.equal(properties.id, result.id);
        assert.equal(properties.clause, result.clause.replace('\u0001', '\u2401'));
        assert.equal(properties.operations, 'accounts_list');
        assert.equal(properties.safety, 'read');
        assert.equal(properties.outcome, result.outcome);
        assert.equal(properties.reason, result.reason?.replace('\u0001', '\u2401'));
        assert.equal(byId(result.id).children[0].name, 'properties', 'properties come first');
      }
      const failed = propertiesOf(byId('PAG-002'));
      assert.deepEqual(
        Object.keys(failed).filter((name) => name.startsWith('evidence.')),
        ['evidence.1', 'evidence.2', 'evidence.3'],
      );
      assert.equal(
        failed['evidence.1'],
        `GET /api/v2/accounts?q=${SCRIPT}&x="'><img src=x onerror=alert(2)> → 500 (12 ms)`,
      );
      assert.equal(failed['evidence.2'], 'POST /api/v2/accounts → 201 (7 ms)');
      assert.equal(
        failed['evidence.3'],
        `DELETE /api/v2/accounts/acc-1 → no response (socket hang up ${HOSTILE.replace('\u0001', '\u2401')}) (3 ms)`,
      );
      assert.ok(!xml.includes('Bearer'), 'no request header reaches the report, redacted or not');
      const elsewhere = toJUnitXml(
        summaryOf([
          check('X-001', 'PASS', {
            evidence: [
              {
                request: { method: 'GET', url: 'https://other.example/x', headers: {} },
                response: { status: 200, headers: {} },
                durationMs: 1.6,
              },
            ],
            operations: [],
          }),
        ]),
      );
      const other = propertiesOf(parseXml(elsewhere).children[0].children[1]);
      assert.equal(other['evidence.1'], 'GET https://other.example/x → 200 (2 ms)', 'another host in full');
      assert.equal(other.operations, 'none');
    });

    it('turns outcomes into failures, skips and system-out', () => {
      const outcomeElements = (id: string) => byId(id).children.filter((c) => c.name !== 'properties');
      assert.deepEqual(outcomeElements('PAG-001'), []);
      const [failure] = outcomeElements('PAG-002');
      assert.equal(failure.name, 'failure');
      assert.equal(failure.attributes.type, 'FAIL');
      assert.equal(failure.attributes.message, `the server answered ${HOSTILE}`.replace('\u0001', '\u2401'));
      assert.ok(failure.text.includes('a second finding'));
      assert.ok(failure.text.includes(`${SCRIPT}`), 'findings survive escaping intact');
      const [timeout] = outcomeElements('LIFE-001');
      assert.equal(timeout.name, 'failure');
      assert.equal(timeout.attributes.type, 'TIMEOUT');
      assert.equal(timeout.attributes.message, 'no answer within 60000 ms');
      assert.deepEqual(
        ['DISC-001', 'AUTH-001'].map((id) => outcomeElements(id).map((c) => [c.name, c.attributes.message])),
        [
          [['skipped', `NOT_APPLICABLE: the server does not declare ${HOSTILE.replace('\u0001', '\u2401')}`]],
          [['skipped', 'INCONCLUSIVE: every call refused']],
        ],
      );
      const warn = outcomeElements('ERR-001');
      assert.deepEqual(
        warn.map((c) => c.name),
        ['system-out'],
        'a warning passes',
      );
      assert.ok(warn[0].text.includes('[should] prefer problem+json'));
      const runOut = suite.children.filter((c) => c.name === 'system-out');
      assert.equal(runOut.length, 1);
      assert.ok(runOut[0].text.includes(`warning: run warning ${SCRIPT}`));
    });

    it('skips expected failures and fails a listed check that passes, as the exit code does', () => {
      const listed = {
        ...hostile,
        expectations: expectationsOf(hostileResults, ['PAG-002', 'PAG-001']),
      };
      const report = parseXml(toJUnitXml(listed)).children[0];
      assert.equal(report.attributes.failures, '2', 'LIFE-001 and PAG-001');
      assert.equal(report.attributes.skipped, '3');
      const find = (id: string) =>
        report.children.find((c) => c.name === 'testcase' && c.attributes.name.startsWith(`${id} `))!;
      const expected = find('PAG-002').children[1];
      assert.equal(expected.name, 'skipped');
      assert.match(
        expected.attributes.message,
        /^expected failure \(FAIL, listed in --expected-failures\): /,
      );
      assert.equal(propertiesOf(find('PAG-002'))['expected-failure'], 'still failing');
      const gone = find('PAG-001').children[1];
      assert.equal(gone.name, 'failure');
      assert.equal(gone.attributes.type, 'EXPECTED_FAILURE_PASSED');
      assert.match(gone.attributes.message, /remove it from the list/);
      assert.equal(
        propertiesOf(report).expectedFailures,
        'PAG-002, PAG-001',
        'the list is named among the run facts',
      );
    });

    describe('read by xmllint', function () {
      let xmllint: string;
      before(function () {
        xmllint = systemTool(this, onPath('xmllint'), 'xmllint (Debian: apt-get install libxml2-utils)');
      });
      const query = (document: string, xpath: string) => {
        const run = spawnSync(xmllint, ['--xpath', xpath, '-'], { input: document, encoding: 'utf8' });
        assert.equal(run.status, 0, `xmllint --xpath ${xpath}: ${run.stderr}`);
        return run.stdout.trim();
      };

      it('is well-formed XML 1.0, hostile values and all', () => {
        for (const document of [
          xml,
          toJUnitXml(summaryOf([])),
          toJUnitXml(summaryOf([check('Z', 'PASS')])),
        ]) {
          const run = spawnSync(xmllint, ['--noout', '-'], { input: document, encoding: 'utf8' });
          assert.equal(run.status, 0, run.stderr);
        }
        const broken = spawnSync(xmllint, ['--noout', '-'], { input: `${xml}<x>`, encoding: 'utf8' });
        assert.notEqual(broken.status, 0, 'xmllint refuses what is not well-formed');
      });

      it('counts the test cases, outcomes and properties a CI server reads', () => {
        assert.equal(query(xml, 'count(/testsuites/testsuite/testcase)'), '6');
        assert.equal(query(xml, 'count(//testcase[failure])'), '2');
        assert.equal(query(xml, 'count(//testcase[skipped])'), '2');
        assert.equal(query(xml, 'count(//testcase[not(failure) and not(skipped)])'), '2');
        assert.equal(query(xml, 'count(//testcase/properties/property[@name="outcome"])'), '6');
        assert.equal(
          query(xml, 'string(//testcase[starts-with(@name, "ERR-001 ")]/system-out)').length > 0,
          true,
        );
        assert.equal(
          query(
            xml,
            'string(//testcase[starts-with(@name, "PAG-002 ")]/properties/property[@name="evidence.2"]/@value)',
          ),
          'POST /api/v2/accounts → 201 (7 ms)',
        );
        assert.equal(
          query(xml, 'string(//testcase[starts-with(@name, "LIFE-001 ")]/failure/@type)'),
          'TIMEOUT',
        );
        assert.equal(query(xml, 'string(/testsuites/@failures)'), '2');
      });
    });
  });

  describe('HTML', () => {
    const html = toHtml(hostile);

    it('shows every check, its outcome and the run facts', () => {
      for (const result of hostileResults) {
        assert.ok(html.includes(result.id), result.id);
        assert.ok(html.includes(`data-outcome="${result.outcome}"`), result.outcome);
      }
      assert.ok(html.includes('https://ix.example/api/v2'));
      assert.ok(html.includes('2.6.0'));
      assert.ok(html.includes('2025-01-02T03:04:05.000Z'));
      assert.ok(html.includes('FAILED'));
    });

    it('groups the INCONCLUSIVE checks by what they lacked, escaped', () => {
      const grouped = toHtml({
        ...summaryOf([check('STAT-001', 'INCONCLUSIVE'), check('POL-001', 'INCONCLUSIVE')]),
        lacking: [{ what: `a connection <b>in production</b>`, checks: ['STAT-001', 'POL-001'] }],
      });
      assert.ok(
        grouped.includes('<li>a connection &lt;b&gt;in production&lt;/b&gt; (2): STAT-001, POL-001</li>'),
      );
      assert.ok(!html.includes('by what the checks lacked'), 'no section without INCONCLUSIVE groups');
    });

    it('never lets hostile values become markup', () => {
      assert.ok(!html.includes(SCRIPT));
      assert.equal(html.match(/<script/g)?.length, 1, 'only the report’s own script');
      assert.ok(!/<img/i.test(html));
      assert.ok(!html.includes('\u0001'));
      assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'shown escaped');
      assert.ok(html.includes(']]&gt;'));
      assert.ok(html.includes('&quot;double&quot; &#39;single&#39;'));
      assert.equal((html.match(/<details/g) ?? []).length, (html.match(/<\/details>/g) ?? []).length);
      assert.equal((html.match(/<pre/g) ?? []).length, (html.match(/<\/pre>/g) ?? []).length);
    });

    it('loads nothing from outside', () => {
      const tags = html.match(/<[^>]*>/g) ?? [];
      for (const tag of tags) {
        assert.ok(!/https?:\/\//i.test(tag), `no address inside markup: ${tag}`);
        assert.ok(!/\s(?:src|href|srcset|action|poster)\s*=/i.test(tag), `no reference: ${tag}`);
      }
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
      const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1];
      for (const code of [style, script]) {
        assert.ok(!/https?:\/\/|url\(|@import|fetch\(|XMLHttpRequest/i.test(code));
      }
      // Every address left is text of the page: the base URL and the evidence.
      const outsideTags = html.replace(/<[^>]*>/g, ' ');
      assert.equal(
        (outsideTags.match(/https?:\/\//g) ?? []).length,
        (html.match(/https?:\/\//g) ?? []).length,
      );
    });

    it('allows exactly its own style and script', () => {
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)![1];
      const policy = csp.replace(/&#39;/g, "'");
      const hash = (text: string) => createHash('sha256').update(text).digest('base64');
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
      const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1];
      assert.ok(policy.includes("default-src 'none'"));
      assert.ok(policy.includes(`style-src 'sha256-${hash(style)}'`));
      assert.ok(policy.includes(`script-src 'sha256-${hash(script)}'`));
    });

    it('filters by outcome and by text when its script runs', () => {
      const page = runFilterScript(html);
      const all = hostileResults.map((r) => r.id);
      assert.equal(page.form.hidden, false, 'controls appear once the script runs');
      assert.deepEqual(page.visibleIds(), all);
      assert.equal(page.elements.shown.textContent, '6 of 6 checks shown');

      page.boxes.find((b) => b.value === 'PASS')!.checked = false;
      page.form.fire('change');
      assert.deepEqual(
        page.visibleIds(),
        all.filter((id) => id !== 'PAG-001'),
      );

      page.elements.problems.fire('click');
      assert.deepEqual(page.visibleIds(), ['PAG-002', 'ERR-001', 'LIFE-001']);
      page.elements.all.fire('click');
      assert.deepEqual(page.visibleIds(), all);

      page.elements.search.value = 'declare <SCRIPT>';
      page.form.fire('input');
      assert.deepEqual(page.visibleIds(), ['DISC-001'], 'search covers reasons, hostile text included');
      page.elements.search.value = 'clause of auth';
      page.form.fire('input');
      assert.deepEqual(page.visibleIds(), ['AUTH-001']);
      page.elements.search.value = 'nothing like this';
      page.form.fire('input');
      assert.deepEqual(page.visibleIds(), []);
      assert.equal(page.elements.empty.hidden, false);

      page.elements.search.value = 'pag';
      page.form.fire('input');
      page.elements.expand.fire('click');
      assert.deepEqual(
        page.checks.map((c) => c.open),
        hostileResults.map((r) => r.id.startsWith('PAG')),
        'only shown checks open',
      );
    });

    it('works without script: filters start hidden, checks are details', () => {
      assert.match(html, /<form id="filters" class="filters" hidden>/);
      assert.equal((html.match(/<details class="check /g) ?? []).length, hostileResults.length);
    });
  });

  describe('console', () => {
    it('prints one line for a passing check', () => {
      const line = formatProgress(hostileResults[0], 0, 6);
      assert.match(line, /^\[1\/6\] PASS\s+PAG-001 {2}title of PAG-001 \(34 ms\)$/);
      assert.equal(formatProgress(hostileResults[0], 11, 80).slice(0, 8), '[12/80] ');
      assert.equal(formatProgress(hostileResults[0], 2, 80).slice(0, 8), '[ 3/80] ');
    });

    it('adds the reason or first finding on an indented second line', () => {
      const [first, second, ...more] = formatProgress(hostileResults[1], 1, 6).split('\n');
      assert.match(first, /^\[2\/6\] FAIL\s+PAG-002 /);
      assert.match(second, /^\s+\[must\] the server answered /);
      assert.ok(second.includes('(+1 more)'));
      assert.deepEqual(more, []);
      const timeout = formatProgress(hostileResults[5], 5, 6).split('\n');
      assert.match(timeout[1], /^\s+no answer within 60000 ms$/);
    });

    it('keeps control characters out of the terminal and colours only on request', () => {
      for (const [index, result] of hostileResults.entries()) {
        const plain = formatProgress(result, index, 6);
        // eslint-disable-next-line no-control-regex -- looking for control characters on purpose
        assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(plain), result.id);
      }
      assert.ok(!formatSummary(hostile).includes('\u001b'));
      assert.ok(formatSummary(hostile, { colour: true }).includes('\u001b['));
      assert.ok(formatProgress(hostileResults[0], 0, 6, { colour: true }).includes('\u001b[32m'));
    });

    it('summarises counts, problems and warnings and ends with the verdict', () => {
      const text = formatSummary(hostile);
      for (const outcome of OUTCOMES) assert.ok(text.includes(`${outcome} ${hostile.counts[outcome]}`));
      for (const id of ['PAG-002', 'LIFE-001', 'ERR-001']) assert.ok(text.includes(id), id);
      assert.ok(!text.includes('PAG-001'), 'passing checks are not listed');
      assert.ok(text.includes('run warning'));
      assert.ok(text.includes('12.3 s'));
      const lines = text.split('\n');
      assert.match(lines[lines.length - 1], /^FAILED: 1 FAIL and 1 TIMEOUT/);
    });

    it('passes a run without FAIL and TIMEOUT, and fails one with only a TIMEOUT', () => {
      const good = summaryOf(hostileResults.filter((r) => r.outcome !== 'FAIL' && r.outcome !== 'TIMEOUT'));
      assert.match(formatSummary(good).split('\n').pop()!, /^PASSED/);
      const slow = summaryOf([check('PAG-001', 'PASS'), check('LIFE-001', 'TIMEOUT')]);
      assert.match(formatSummary(slow).split('\n').pop()!, /^FAILED: 0 FAIL and 1 TIMEOUT/);
      assert.match(toHtml(good), /class="verdict passed"/);
    });
  });

  describe('JSON', () => {
    it('round-trips the summary, pretty-printed', () => {
      const json = toJson(hostile);
      assert.deepEqual(JSON.parse(json), hostile);
      assert.match(json, /^\{\n {2}"tool": \{\n {4}"name"/);
    });
  });
});

describe('expected failures', () => {
  const results = [
    check('A-1', 'FAIL'),
    check('A-2', 'PASS'),
    check('A-3', 'TIMEOUT'),
    check('A-4', 'NOT_APPLICABLE'),
  ];

  it('reads one id a line and ignores comments and blank lines', () => {
    assert.deepEqual(parseExpectedFailures('A-1\n# known: issue 12\n\n  A-3  # flaky lab\r\n'), [
      'A-1',
      'A-3',
    ]);
  });

  it('excuses listed failures and time-outs only', () => {
    const listed = { ...summaryOf(results), expectations: expectationsOf(results, ['A-1']) };
    assert.deepEqual(
      unexpectedFailures(listed).map((r) => r.id),
      ['A-3'],
    );
    assert.equal(runPassed(listed), false);
    const both = { ...summaryOf(results), expectations: expectationsOf(results, ['A-1', 'A-3', 'A-4']) };
    assert.equal(runPassed(both), true);
    assert.deepEqual(both.expectations.nowPassing, [], 'NOT_APPLICABLE is not a pass');
    assert.match(formatSummary(both), /Expected failures: 2 of 3 listed still fail/);
    assert.match(formatSummary(both), /PASSED: no unexpected FAIL or TIMEOUT/);
  });

  it('fails the run when a listed check stops failing, and says which', () => {
    const stale = {
      ...summaryOf(results),
      expectations: expectationsOf(results, ['A-1', 'A-2', 'A-3', 'Z-9']),
    };
    assert.deepEqual(stale.expectations.nowPassing, ['A-2']);
    assert.deepEqual(stale.expectations.unmatched, ['Z-9']);
    assert.equal(runPassed(stale), false);
    assert.match(formatSummary(stale), /no longer failing, remove from the list: A-2/);
    assert.match(formatSummary(stale), /FAILED: 0 unexpected FAIL or TIMEOUT, 1 expected failure\(s\) gone/);
  });
});
