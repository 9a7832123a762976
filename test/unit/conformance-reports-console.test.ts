import assert from 'node:assert/strict';
import { OUTCOMES } from '../../conformance/model';
import { formatProgress, formatSummary } from '../../conformance/reports/console';
import { toHtml } from '../../conformance/reports/html';
import { check, hostile, hostileResults, summaryOf } from '../support/conformance-results';

describe('conformance reports', () => {
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
});
