import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { expectationsOf } from '../../conformance/model';
import { toJUnitXml } from '../../conformance/reports/junit';
import { onPath, systemTool } from '../support/system-tools';
import { check, HOSTILE, hostile, hostileResults, SCRIPT, summaryOf } from '../support/conformance-results';

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
});
