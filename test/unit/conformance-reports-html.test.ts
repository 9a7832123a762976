import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { OUTCOMES } from '../../conformance/model';
import { toHtml } from '../../conformance/reports/html';
import { check, hostile, hostileResults, SCRIPT, summaryOf } from '../support/conformance-results';

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
});
