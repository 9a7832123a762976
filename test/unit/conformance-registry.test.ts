import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { allChecks, uncoveredOperations } from '../../conformance/checks';
import { CHECKS_DOCUMENT, renderChecksDocument } from '../../conformance/document';
import { stateStepProblem } from '../../conformance/steps/waiting';
import { positionProblems } from '../../conformance/steps/whole-lists';
import { loadSpec } from '../../spec';

describe('the conformance check registry', () => {
  const document = loadSpec();
  const checks = allChecks(document);

  it('has a check for every operation of the OpenAPI document', () => {
    assert.deepEqual(uncoveredOperations(document, checks), []);
  });

  it('gives every check a stable id, a clause and a safety class', () => {
    for (const check of checks) {
      assert.match(check.id, /^[A-Z]+-[A-Za-z0-9_]+$/, check.id);
      assert.ok(check.clause.length > 10, `${check.id} names no clause`);
      assert.ok(['read', 'mutate'].includes(check.safety), check.id);
    }
  });

  it('keeps conformance/CHECKS.md in step with the registry (npm run conformance:doc)', () => {
    assert.equal(readFileSync(CHECKS_DOCUMENT, 'utf8'), renderChecksDocument(checks));
  });
});

describe('pagination positions', () => {
  const walk = (offsets: number[], pages: number[], total: number) =>
    offsets.map((offset, i) => ({ offset, page: pages[i], pages: total }));

  it('accepts a walk that counts pages from 1 and advances offsets by the limit', () => {
    assert.deepEqual(positionProblems(walk([0, 2, 4], [1, 2, 3], 3), 2, 5), []);
  });

  it('names pages counted from 0, skipped offsets and a wrong number of pages', () => {
    assert.match(positionProblems(walk([0, 2], [0, 1], 2), 2, 4)[0], /X-Pagination-Page 0, expected 1/);
    assert.match(positionProblems(walk([0, 3], [1, 2], 2), 2, 4)[0], /X-Pagination-Offset 3, expected 2/);
    assert.match(positionProblems(walk([0, 2], [1, 2], 3), 2, 4)[0], /4 items in pages of 2 make 2/);
  });
});

describe('the lifecycle a waiter holds states to', () => {
  it('lets provisioning move on and skip states it did not see', () => {
    for (const [from, to] of [
      ['requested', 'production'],
      ['requested', 'allocated'],
      ['production', 'decommission_requested'],
      ['decommission_requested', 'decommissioned'],
      ['decommissioned', 'archived'],
      ['requested', 'cancelled'],
      ['error', 'production'],
      ['production', 'production'],
      // Through error and an operator's retry, which polling may miss.
      ['decommission_requested', 'requested'],
    ])
      assert.equal(stateStepProblem(from, to), undefined, `${from} → ${to}`);
  });

  it('refuses steps back from decommissioned or cancelled, and anything after archived', () => {
    assert.match(stateStepProblem('archived', 'production')!, /nothing follows archived/);
    assert.match(stateStepProblem('decommissioned', 'production')!, /went back/);
    assert.match(stateStepProblem('cancelled', 'testing')!, /went back/);
  });
});
