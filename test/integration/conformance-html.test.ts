import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Outcome, RunSummary } from '../../conformance/index';
import { runConformance } from '../../conformance/index';
import { OUTCOMES } from '../../conformance/model';
import { toHtml } from '../../conformance/reports/html';
import type { Page } from '../support/chromium';
import { Browser, findChromium } from '../support/chromium';
import { conformanceCli } from '../support/conformance-cli';
import { scratchFolder } from '../support/shared-stack';
import { stack } from '../support/stack';
import { systemTool } from '../support/system-tools';

/** Where the tests leave what people look at (gitignored; .ci/run names it). */
const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts');
const SIZE = { width: 1280, height: 2000 };
/** Credentials the server does not know: AUTH-001 fails with them, and neither may show. */
const UNKNOWN = { key: 'unknown-key-5c1e', secret: 'unknown-secret-5c1e' };

/** A handful of read checks: passing ones, one NOT_APPLICABLE without a secondary account, one INCONCLUSIVE. */
const ONLY = 'DISC-,PAG-facilities_list,ISO-001,RATE-001';

function credentialsOf(accountId: string) {
  const credential = stack().credentials.find((c) => c.accountId === accountId)!;
  return { api_key: credential.apiKey, api_secret: credential.apiSecret };
}

function countsOf(results: RunSummary['results']): Record<Outcome, number> {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const result of results) counts[result.outcome] += 1;
  return counts;
}

/** What the browser shows of the checks: id, outcome and whether it is displayed. */
interface ShownCheck {
  id: string;
  outcome: string;
  displayed: boolean;
  open: boolean;
}
const SHOWN_CHECKS = `[...document.querySelectorAll('details.check')].map((check) => ({
  id: check.querySelector('code.id').textContent,
  outcome: check.getAttribute('data-outcome'),
  displayed: check.getClientRects().length > 0,
  open: check.open,
}))`;
const displayedIds = (checks: ShownCheck[]) => checks.filter((c) => c.displayed).map((c) => c.id);

/**
 * A function for the page: the elements matching a selector whose text has a contrast below 4.5
 * (WCAG AA) with the background it is drawn on (its own, else its nearest ancestor's), or that are
 * faded (opacity below 1), each as `text: ratio`.
 */
const LOW_CONTRAST = `(selector) => {
  const rgba = (css) => (css.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const channel = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  };
  const background = (element) => {
    for (let e = element; e; e = e.parentElement) {
      const colour = rgba(getComputedStyle(e).backgroundColor);
      if (colour.length === 3 || colour[3] > 0) return colour;
    }
    return [255, 255, 255];
  };
  return [...document.querySelectorAll(selector)].flatMap((element) => {
    const style = getComputedStyle(element);
    const [a, b] = [luminance(rgba(style.color)), luminance(background(element))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    return ratio < 4.5 || Number(style.opacity) < 1 ? [element.textContent.trim() + ': ' + ratio.toFixed(2)] : [];
  });
}`;

/** Width and height of a PNG, from its header. */
function pngSize(png: Buffer): { width: number; height: number } {
  assert.equal(png.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('the conformance HTML report in headless Chromium', function () {
  this.timeout(180_000);
  const dir = scratchFolder('conformance-html');
  const cliReport = path.join(dir, 'report.html');
  const cliJson = path.join(dir, 'report.json');
  const mergedReport = path.join(dir, 'merged.html');
  let binary: string;
  let browser: Browser | undefined;
  let run: RunSummary;
  let merged: RunSummary;
  const secret = () => credentialsOf('acc-transit-partners').api_secret;

  before(async function () {
    binary = systemTool(this, findChromium(), 'Chromium (Debian: apt-get install chromium)');
    // A real run as the CI examples make one: the CLI, credentials from the environment.
    const primary = credentialsOf('acc-transit-partners');
    const cli = await conformanceCli(
      ['--base-url', stack().baseUrl, '--only', ONLY, '--html', cliReport, '--json', cliJson],
      { IXAPI_PRIMARY_KEY: primary.api_key, IXAPI_PRIMARY_SECRET: primary.api_secret },
    );
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    run = JSON.parse(readFileSync(cliJson, 'utf8')) as RunSummary;
    // And a failing check without faults: AUTH-001 with a key the server does not know.
    const refused = await runConformance({
      baseUrl: stack().baseUrl,
      credentials: { primary: { api_key: UNKNOWN.key, api_secret: UNKNOWN.secret } },
      only: ['AUTH-001'],
    });
    assert.deepEqual(
      refused.results.map((r) => `${r.id} ${r.outcome}`),
      ['AUTH-001 FAIL'],
    );
    const results = [...run.results, ...refused.results];
    merged = {
      ...run,
      results,
      counts: countsOf(results),
      durationMs: run.durationMs + refused.durationMs,
      warnings: [...run.warnings, ...refused.warnings],
    };
    writeFileSync(mergedReport, toHtml(merged));
    browser = Browser.launch(binary, SIZE);
  });

  after(async () => {
    await browser?.close();
  });

  async function open(file: string): Promise<Page> {
    return browser!.open(pathToFileURL(file).href, SIZE);
  }

  it('renders the real run the CLI wrote: verdict, counts, every check, no script errors', async () => {
    assert.deepEqual(
      Object.entries(run.counts).filter(([, n]) => n > 0),
      [
        ['PASS', run.counts.PASS],
        ['NOT_APPLICABLE', 1],
        ['INCONCLUSIVE', 1],
      ],
      'the run has passing, not applicable and inconclusive checks',
    );
    const page = await open(cliReport);
    assert.match(await page.evaluate<string>('document.title'), /^PASSED: IX-API conformance of /);
    assert.equal(
      await page.evaluate<string>(`document.querySelector('.verdict').innerText`),
      `PASSED: no FAIL and no TIMEOUT among ${run.results.length} checks`,
    );
    const checks = await page.evaluate<ShownCheck[]>(SHOWN_CHECKS);
    assert.deepEqual(
      checks.map((c) => [c.id, c.outcome, c.displayed]),
      run.results.map((r) => [r.id, r.outcome, true]),
    );
    assert.equal(
      await page.evaluate<string>(`document.getElementById('shown').textContent`),
      `${run.results.length} of ${run.results.length} checks shown`,
      'the filter script ran to its end',
    );
    assert.ok(!(await page.evaluate<string>('document.documentElement.outerHTML')).includes(secret()));
    assert.deepEqual(page.errors, [], 'no exception, console error or blocked script or style');
  });

  describe('a report with a failure', () => {
    let page: Page;
    before(async () => {
      page = await open(mergedReport);
    });

    it('shows the verdict, the counts and every check as the summary has them', async () => {
      assert.match(await page.evaluate<string>('document.title'), /^FAILED: /);
      assert.equal(
        await page.evaluate<string>(`document.querySelector('.verdict').innerText`),
        `FAILED: 1 FAIL and 0 TIMEOUT among ${merged.results.length} checks`,
      );
      const badges = await page.evaluate<string[]>(
        `[...document.querySelectorAll('ul.badges li')].map((li) => li.innerText)`,
      );
      assert.deepEqual(
        badges,
        OUTCOMES.map((o) => `${o.replace('_', ' ')} ${merged.counts[o]}`),
      );
      const checks = await page.evaluate<ShownCheck[]>(SHOWN_CHECKS);
      assert.deepEqual(
        checks.map((c) => c.id),
        merged.results.map((r) => r.id),
      );
      assert.deepEqual(
        displayedIds(checks),
        merged.results.map((r) => r.id),
      );
      assert.deepEqual(page.errors, []);
    });

    it('applies its own style despite its Content-Security-Policy', async () => {
      const colours = await page.evaluate<Record<string, string>>(`({
        fail: getComputedStyle(document.querySelector('ul.badges .o-FAIL')).backgroundColor,
        pass: getComputedStyle(document.querySelector('ul.badges .o-PASS')).backgroundColor,
        row: getComputedStyle(document.querySelector('details.check > summary')).display,
      })`);
      assert.deepEqual(colours, { fail: 'rgb(207, 34, 46)', pass: 'rgb(26, 127, 55)', row: 'grid' });
      assert.equal(
        await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'),
        true,
        'nothing runs off to the right',
      );
    });

    it('keeps its labels legible and its outcome badges their own size, in light and dark', async () => {
      for (const scheme of ['light', 'dark']) {
        await page.send('Emulation.setEmulatedMedia', {
          features: [{ name: 'prefers-color-scheme', value: scheme }],
        });
        const low = await page.evaluate<string[]>(`(${LOW_CONTRAST})('.badge, .verdict, .sev')`);
        assert.deepEqual(low, [], `${scheme}: text on a label below a contrast of 4.5`);
      }
      await page.send('Emulation.setEmulatedMedia', { features: [] });
      const widths = await page.evaluate<number[]>(
        `[...document.querySelectorAll('details.check > summary .badge')].map((b) => Math.round(b.getBoundingClientRect().width))`,
      );
      assert.ok(
        new Set(widths).size > 1,
        `badges as wide as their outcome, not their column: ${widths.join(', ')}`,
      );
    });

    it('filters when its controls are clicked and typed into', async () => {
      const all = merged.results.map((r) => r.id);
      const shown = () => page.evaluate<string>(`document.getElementById('shown').textContent`);
      assert.equal(
        await page.evaluate<boolean>(
          `getComputedStyle(document.getElementById('filters')).display !== 'none'`,
        ),
        true,
        'the controls appear once the script ran',
      );

      await page.evaluate(`document.getElementById('problems').click()`);
      assert.deepEqual(displayedIds(await page.evaluate<ShownCheck[]>(SHOWN_CHECKS)), ['AUTH-001']);
      assert.equal(await shown(), `1 of ${all.length} checks shown`);

      await page.evaluate(`document.getElementById('all').click()`);
      assert.deepEqual(displayedIds(await page.evaluate<ShownCheck[]>(SHOWN_CHECKS)), all);

      await page.evaluate(`document.querySelector('input[name="outcome"][value="PASS"]').click()`);
      assert.deepEqual(
        displayedIds(await page.evaluate<ShownCheck[]>(SHOWN_CHECKS)),
        merged.results.filter((r) => r.outcome !== 'PASS').map((r) => r.id),
      );
      await page.evaluate(`document.querySelector('input[name="outcome"][value="PASS"]').click()`);

      await page.evaluate(`(() => {
        const search = document.getElementById('search');
        search.focus();
        search.value = 'facilities';
        search.dispatchEvent(new Event('input', { bubbles: true }));
      })()`);
      const found = displayedIds(await page.evaluate<ShownCheck[]>(SHOWN_CHECKS));
      assert.ok(found.length > 0);
      assert.ok(
        found.every((id) => id.startsWith('PAG-facilities_list')),
        found.join(', '),
      );
      await page.evaluate(`document.getElementById('expand').click()`);
      const expanded = await page.evaluate<ShownCheck[]>(SHOWN_CHECKS);
      assert.deepEqual(
        expanded.filter((c) => c.open).map((c) => c.id),
        found,
        'only the checks shown open',
      );
      await page.evaluate(`document.getElementById('collapse').click()`);

      await page.evaluate(`(() => {
        const search = document.getElementById('search');
        search.value = 'no check is called this';
        search.dispatchEvent(new Event('input', { bubbles: true }));
      })()`);
      assert.deepEqual(displayedIds(await page.evaluate<ShownCheck[]>(SHOWN_CHECKS)), []);
      assert.equal(
        await page.evaluate<string>(`document.getElementById('empty').innerText`),
        'No check matches the filter.',
      );
      await page.evaluate(`(() => {
        const search = document.getElementById('search');
        search.value = '';
        search.dispatchEvent(new Event('input', { bubbles: true }));
      })()`);
      assert.deepEqual(displayedIds(await page.evaluate<ShownCheck[]>(SHOWN_CHECKS)), all);
      assert.deepEqual(page.errors, []);
    });

    it('opens a failed check on its findings and evidence, and leaves a screenshot', async () => {
      const failure = merged.results.find((r) => r.outcome === 'FAIL')!;
      const detail = await page.evaluate<{ text: string; exchanges: number }>(`(() => {
        const check = [...document.querySelectorAll('details.check')].find((c) => c.getAttribute('data-outcome') === 'FAIL');
        check.open = true;
        const first = check.querySelector('details.exchange');
        if (first) first.open = true;
        check.scrollIntoView();
        return { text: check.innerText, exchanges: check.querySelectorAll('details.exchange').length };
      })()`);
      const problem = failure.findings[0]?.message ?? failure.reason ?? '';
      assert.ok(problem && detail.text.includes(problem.split('\n')[0]), detail.text);
      assert.equal(detail.exchanges, failure.evidence.length);
      assert.ok(detail.exchanges > 0);
      const html = await page.evaluate<string>('document.documentElement.outerHTML');
      for (const hidden of [UNKNOWN.key, UNKNOWN.secret, secret()])
        assert.ok(!html.includes(hidden), 'no credential shown');

      await page.evaluate('window.scrollTo(0, 0)');
      const png = await page.screenshot();
      assert.deepEqual(pngSize(png), SIZE);
      mkdirSync(ARTIFACTS, { recursive: true });
      writeFileSync(path.join(ARTIFACTS, 'conformance-report.png'), png);
      writeFileSync(path.join(ARTIFACTS, 'conformance-report.html'), readFileSync(mergedReport));
      await page.send('Emulation.setEmulatedMedia', {
        features: [{ name: 'prefers-color-scheme', value: 'dark' }],
      });
      assert.equal(
        await page.evaluate<string>(`getComputedStyle(document.body).backgroundColor`),
        'rgb(13, 17, 23)',
        'dark colours when the reader prefers them',
      );
      writeFileSync(path.join(ARTIFACTS, 'conformance-report-dark.png'), await page.screenshot());
      assert.deepEqual(page.errors, []);
    });
  });
});
