import assert from 'node:assert/strict';
import { macProblems, normaliseMac } from '../../domain/macs';

describe('MAC address registrations', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  const names = (address: string, before: string | null = null, after: string | null = null) =>
    macProblems({ address, valid_not_before: before, valid_not_after: after }, now).map((p) => p.name);

  it('keeps one spelling of an address', () => {
    assert.equal(normaliseMac(' 02:AB:cd:00:11:FF '), '02:ab:cd:00:11:ff');
  });

  it('takes unicast station addresses only', () => {
    assert.deepEqual(names('02:00:5e:10:00:01'), []);
    assert.deepEqual(names('00:1B:21:3A:4F:5C'), []);
    assert.deepEqual(names('01:00:5e:00:00:01'), ['address'], 'multicast');
    assert.deepEqual(names('ff:ff:ff:ff:ff:ff'), ['address'], 'broadcast');
    assert.deepEqual(names('33:33:00:00:00:01'), ['address'], 'IPv6 multicast');
    assert.deepEqual(names('00:00:00:00:00:00'), ['address']);
  });

  it('needs a validity window that ends in the future and after it begins', () => {
    assert.deepEqual(names('02:00:00:00:00:01', '2026-12-01T00:00:00Z', '2027-01-01T00:00:00Z'), []);
    assert.deepEqual(names('02:00:00:00:00:01', null, '2026-11-01T00:00:00Z'), ['valid_not_after']);
    assert.deepEqual(names('02:00:00:00:00:01', '2027-02-01T00:00:00Z', '2027-01-01T00:00:00Z'), [
      'valid_not_after',
    ]);
  });
});
