import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { allChecks, uncoveredOperations } from '../../conformance/checks';
import { CHECKS_DOCUMENT, renderChecksDocument } from '../../conformance/document';
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
