import assert from 'node:assert/strict';
import { gapsAsStatus, onboardingGaps } from '../../domain/onboarding';

describe('account on-boarding rules', () => {
  it('accepts an account with an address and a legal contact', () => {
    assert.deepEqual(
      onboardingGaps({ accountId: 'a', hasAddress: true, assignedRoleNames: ['noc', 'legal'] }),
      [],
    );
  });

  it('names each missing requirement', () => {
    const gaps = onboardingGaps({ accountId: 'a', hasAddress: false, assignedRoleNames: ['noc'] });
    assert.deepEqual(
      gaps.map((g) => g.tag),
      ['address_missing', 'contact_role_missing'],
    );
    assert.match(gaps[1].message, /legal/);
  });

  it('turns gaps into status entries a client can act on', () => {
    const [entry] = gapsAsStatus(
      onboardingGaps({ accountId: 'a', hasAddress: true, assignedRoleNames: [] }),
      '2026-01-01T00:00:00.000Z',
    );
    assert.deepEqual(Object.keys(entry).sort(), ['attrs', 'message', 'severity', 'tag', 'timestamp']);
    assert.equal(entry.timestamp, '2026-01-01T00:00:00.000Z');
    assert.ok(entry.severity >= 0 && entry.severity <= 7);
  });
});
