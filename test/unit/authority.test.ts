import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  accessToAccount,
  accessToOwned,
  requireActingAccount,
  requireChange,
  requireNoCycle,
} from '../../domain/authority';
import { missingFields } from '../../domain/contacts';
import { COUNTRY_CODES, countryProblems } from '../../domain/countries';
import { NotFoundError, PermissionDeniedError, ValidationError } from '../../domain/errors';

const reseller = { accountId: 'r', accounts: ['r', 'o', 's'] };

describe('authority rules', () => {
  it('lets the managing side change, the consuming side read, and nobody else see', () => {
    assert.equal(accessToOwned({ managing_account: 'o', consuming_account: 'x' }, reseller), 'change');
    assert.equal(accessToOwned({ managing_account: 'x', consuming_account: 's' }, reseller), 'read');
    assert.equal(accessToOwned({ managing_account: 'x', consuming_account: 'y' }, reseller), 'none');
    assert.equal(accessToOwned({ managing_account: null, consuming_account: null }, reseller), 'none');
  });

  it('shows accounts outside the scope only when discoverable', () => {
    assert.equal(accessToAccount({ id: 's', discoverable: false }, reseller), 'change');
    assert.equal(accessToAccount({ id: 'x', discoverable: true }, reseller), 'discover');
    assert.equal(accessToAccount({ id: 'x', discoverable: false }, reseller), 'none');
  });

  it('answers a change with 404 when invisible and 403 when visible only', () => {
    assert.doesNotThrow(() => requireChange('change', 'it'));
    assert.throws(() => requireChange('none', 'it'), NotFoundError);
    assert.throws(() => requireChange('read', 'it'), PermissionDeniedError);
    assert.throws(() => requireChange('discover', 'it'), PermissionDeniedError);
  });

  it('accepts only accounts the caller acts for as references, naming the property', () => {
    assert.doesNotThrow(() => requireActingAccount(reseller, 'managing_account', 's'));
    for (const value of ['x', null, undefined, 42]) {
      assert.throws(
        () => requireActingAccount(reseller, 'billing_account', value),
        (error: unknown) =>
          error instanceof ValidationError && error.properties[0].name === 'billing_account',
      );
    }
  });

  it('never lets an account be managed by itself or by an account below it', () => {
    assert.throws(() => requireNoCycle('o', 'o', ['o', 's']), ValidationError);
    assert.throws(() => requireNoCycle('o', 's', ['o', 's']), ValidationError);
    assert.doesNotThrow(() => requireNoCycle('o', 'r', ['o', 's']));
  });

  it('keeps any sequence of accepted moves a forest', () => {
    // Random hierarchies and random moves: applying only the moves the rule accepts never creates
    // a loop.
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(7), fc.nat(7)), { maxLength: 40 }), (moves) => {
        const manager = new Map<number, number | null>([...Array(8).keys()].map((i) => [i, null]));
        const below = (id: number): number[] => {
          const result = [id];
          for (let i = 0; i < result.length; i += 1) {
            for (const [child, parent] of manager) if (parent === result[i]) result.push(child);
          }
          return result;
        };
        for (const [account, newManager] of moves) {
          try {
            requireNoCycle(String(account), String(newManager), below(account).map(String));
            manager.set(account, newManager);
          } catch {
            // refused: nothing changes
          }
        }
        for (const start of manager.keys()) {
          const seen = new Set<number>();
          let at: number | null | undefined = start;
          while (at !== null && at !== undefined) {
            assert.ok(!seen.has(at), `loop through ${at}`);
            seen.add(at);
            at = manager.get(at);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('names the fields a role requires that a contact leaves empty', () => {
    const contact = { name: 'Noc', email: '', telephone: null };
    assert.deepEqual(missingFields(contact, ['name', 'email', 'telephone']), ['email', 'telephone']);
    assert.deepEqual(missingFields(contact, ['name']), []);
  });

  it('knows the 249 assigned country codes and names the address whose country is not one', () => {
    assert.equal(COUNTRY_CODES.size, 249);
    for (const code of ['DE', 'NL', 'GB', 'FR', 'US', 'JP', 'BR', 'ZA'])
      assert.ok(COUNTRY_CODES.has(code), code);
    for (const code of ['UK', 'EU', 'ZZ', 'XK', 'de']) assert.ok(!COUNTRY_CODES.has(code), code);
    assert.deepEqual(
      countryProblems({ address: { country: 'DE' }, 'billing_information.address': { country: 'UK' } }).map(
        (p) => p.name,
      ),
      ['billing_information.address.country'],
    );
    assert.deepEqual(countryProblems({ address: null }), []);
  });
});
