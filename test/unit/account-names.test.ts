import assert from 'node:assert/strict';
import fc from 'fast-check';
import { discoverableNameKeys } from '../../domain/account-names';

/** Whether two discoverable accounts' names read alike: they share a key. */
const alike = (a: string, b: string): boolean => {
  const [x, y] = [discoverableNameKeys(a, true)!, discoverableNameKeys(b, true)!];
  return x.cased === y.cased || x.caseless === y.caseless;
};

describe('names of discoverable accounts', () => {
  it('reads names alike that differ in case, spacing, compatibility forms or invisible characters', () => {
    for (const name of [
      'thames cloud',
      'THAMES CLOUD',
      ' Thames   Cloud ',
      'ＴＨＡＭＥＳ Ｃｌｏｕｄ',
      'Tha\u200bmes Cloud',
    ])
      assert.ok(alike('Thames Cloud', name), name);
    assert.ok(alike('Petit Réseau', 'Petit Re\u0301seau'), 'composed and decomposed accents');
  });

  it('reads names alike whose letters pass for each other in another script or as digits', () => {
    assert.ok(alike('Demo-IX', 'Demо-IX'), 'a Cyrillic о');
    assert.ok(alike('Spree Networks', 'Ѕрrее Networks'), 'Cyrillic Ѕ, р and е');
    assert.ok(alike('Thames Cloud', 'Thames CIoud'), 'a capital I for an l');
    assert.ok(alike('Thames Cloud', 'Thames C1oud'), 'a one for an l');
    assert.ok(alike('Demo-IX', 'Dern0-IX'), 'rn for m, a zero for an o');
  });

  it('tells apart names that read differently', () => {
    for (const [a, b] of [
      ['Thames Cloud', 'Thames Clouds'],
      ['Spree Networks', 'Spree Labs'],
      ['Thames Cloud', 'ThamesCloud'],
      ['Petit Réseau', 'Petit Reseau'],
    ])
      assert.ok(!alike(a, b), `${a} / ${b}`);
  });

  it('gives keys to discoverable accounts only, of fixed length', () => {
    assert.equal(discoverableNameKeys('Thames Cloud', false), null);
    fc.assert(
      fc.property(fc.string({ maxLength: 80, unit: 'grapheme' }), (name) => {
        const keys = discoverableNameKeys(name, true)!;
        assert.match(keys.cased, /^[0-9a-f]{64}$/);
        assert.match(keys.caseless, /^[0-9a-f]{64}$/);
        // Alike is reflexive, and a name reads like itself in capitals.
        assert.ok(alike(name, name) && alike(name, name.toUpperCase()));
      }),
    );
  });
});
