import assert from 'node:assert/strict';
import { toJson } from '../../conformance/reports/json';
import { hostile } from '../support/conformance-results';

describe('conformance reports', () => {
  describe('JSON', () => {
    it('round-trips the summary, pretty-printed', () => {
      const json = toJson(hostile);
      assert.deepEqual(JSON.parse(json), hostile);
      assert.match(json, /^\{\n {2}"tool": \{\n {4}"name"/);
    });
  });
});
