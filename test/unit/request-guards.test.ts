import assert from 'node:assert/strict';
import pino from 'pino';
import { createCallerReads } from '../../api/authenticate';
import { runHousekeeping } from '../../api/housekeeping';
import { createIdempotency, fingerprintOf } from '../../api/idempotency';
import { addressKey } from '../../api/rate-limits';
import type { IdempotencyRepository } from '../../db/repositories/idempotency-repository';
import { ValidationError } from '../../domain/errors';

describe('request guards', () => {
  describe('callers', () => {
    it('reads what a caller acts for at every request, so a revocation stops the next one', async () => {
      const reads: string[] = [];
      let accounts = ['acc-a', 'acc-b'];
      const callers = createCallerReads({
        actingFor: ({ apiKey, accountId, familyId }) => {
          reads.push(`${apiKey}/${accountId}/${familyId}`);
          return Promise.resolve(accounts);
        },
      });
      const login = { apiKey: 'K', accountId: 'acc-a', familyId: 'F' };
      assert.deepEqual(await callers.actingFor(login), ['acc-a', 'acc-b']);
      accounts = [];
      assert.deepEqual(await callers.actingFor(login), []);
      assert.deepEqual(await callers.actingFor({ apiKey: 'L', accountId: 'acc-c', familyId: 'G' }), []);
      assert.deepEqual(reads, ['K/acc-a/F', 'K/acc-a/F', 'L/acc-c/G']);
    });

    it('shares a read among the requests of one login only, so revoking a login spares the others', async () => {
      const revoked = new Set(['F']);
      const reads: string[] = [];
      const callers = createCallerReads({
        actingFor: ({ familyId }) => {
          reads.push(familyId);
          return Promise.resolve(revoked.has(familyId) ? [] : ['acc-a']);
        },
      });
      const login = (familyId: string) => ({ apiKey: 'K', accountId: 'acc-a', familyId });
      const answers = await Promise.all([
        callers.actingFor(login('F')),
        callers.actingFor(login('G')),
        callers.actingFor(login('F')),
      ]);
      assert.deepEqual(answers, [[], ['acc-a'], []]);
      assert.deepEqual(reads.sort(), ['F', 'F', 'G']);
    });

    it('does not remember a failed read', async () => {
      let fail = true;
      const callers = createCallerReads({
        actingFor: () => (fail ? Promise.reject(new Error('database down')) : Promise.resolve(['acc-a'])),
      });
      const login = { apiKey: 'K', accountId: 'acc-a', familyId: 'F' };
      await assert.rejects(callers.actingFor(login), /database down/);
      fail = false;
      assert.deepEqual(await callers.actingFor(login), ['acc-a']);
    });
  });

  describe('client addresses as rate limits count them', () => {
    it('counts an IPv4 client as itself, also when mapped into IPv6', () => {
      assert.equal(addressKey('192.0.2.7'), '192.0.2.7');
      assert.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
      assert.equal(addressKey(undefined), 'unknown');
    });

    it('counts every address of an IPv6 /64 as one client', () => {
      const key = addressKey('2001:db8:1:2:aaaa::1');
      assert.equal(key, '2001:db8:1:2::/64');
      assert.equal(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), key);
      assert.equal(addressKey('2001:DB8:1:2::'), key);
      assert.notEqual(addressKey('2001:db8:1:3::1'), key);
      assert.equal(addressKey('::1'), '0:0:0:0::/64');
    });
  });

  describe('idempotency keys', () => {
    const idempotency = createIdempotency({} as IdempotencyRepository);

    it('takes a key of 1 to 255 visible ASCII characters, quoted or not', () => {
      assert.equal(idempotency.keyOf({}), undefined);
      assert.equal(idempotency.keyOf({ 'idempotency-key': ' abc-123 ' }), 'abc-123');
      assert.equal(idempotency.keyOf({ 'idempotency-key': '"abc-123"' }), 'abc-123');
      for (const bad of ['', '""', 'a b', 'x'.repeat(256), 'ключ']) {
        assert.throws(() => idempotency.keyOf({ 'idempotency-key': bad }), ValidationError, bad);
      }
    });

    it('tells requests apart by method, path and body, but not by the order of keys', () => {
      const base = { method: 'POST', path: '/api/v2/contacts', body: { a: 1, b: [1, { c: 2, d: 3 }] } };
      const same = fingerprintOf({ ...base, body: { b: [1, { d: 3, c: 2 }], a: 1 } });
      assert.equal(fingerprintOf(base), same);
      assert.notEqual(fingerprintOf({ ...base, method: 'PUT' }), same);
      assert.notEqual(fingerprintOf({ ...base, path: '/api/v2/contacts/x' }), same);
      assert.notEqual(fingerprintOf({ ...base, body: { a: 1, b: [{ c: 2, d: 3 }, 1] } }), same);
      assert.notEqual(fingerprintOf({ ...base, body: Buffer.from('%PDF') }), same);
      assert.equal(fingerprintOf({ ...base, body: undefined }), fingerprintOf({ ...base, body: null }));
    });
  });

  describe('housekeeping', () => {
    it('runs every chore each round, carries on past a failing one, and stops when asked', async () => {
      const runs: string[] = [];
      let failures = 0;
      const stop = runHousekeeping({
        logger: pino({ level: 'silent' }),
        intervalMs: 20,
        chores: [
          {
            name: 'failing',
            run: () => {
              failures += 1;
              return Promise.reject(new Error('no database'));
            },
          },
          { name: 'working', run: () => (runs.push('working'), Promise.resolve(1)) },
        ],
      });
      while (runs.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      await stop();
      const after = runs.length;
      await new Promise((resolve) => setTimeout(resolve, 60));
      assert.equal(runs.length, after, 'a chore ran after stop');
      assert.ok(failures >= 3);
    });
  });
});
