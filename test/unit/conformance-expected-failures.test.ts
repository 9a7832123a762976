import assert from 'node:assert/strict';
import {
  expectationsOf,
  parseExpectedFailures,
  runPassed,
  unexpectedFailures,
} from '../../conformance/model';
import { formatSummary } from '../../conformance/reports/console';
import { check, summaryOf } from '../support/conformance-results';

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
