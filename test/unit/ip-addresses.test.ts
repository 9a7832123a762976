import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  firstFreeHost,
  formatAddress,
  parseAddress,
  parsePrefix,
  prefixContains,
} from '../../domain/ip-addresses';
import { canonicalAddress, ipProblems } from '../../domain/ip-registrations';

describe('IP address maths', () => {
  it('reads and writes both families in their canonical forms', () => {
    assert.equal(formatAddress(4, parseAddress('192.0.2.10')!.value), '192.0.2.10');
    assert.equal(canonicalAddress('2001:0DB8:0000:0000:0001:0000:0000:0001'), '2001:db8::1:0:0:1');
    assert.equal(canonicalAddress('2001:db8:0:0:1:0:0:0'), '2001:db8:0:0:1::');
    assert.equal(canonicalAddress('::'), '::');
    // An IPv4-mapped address is the IPv4 address it maps, however it is written.
    assert.equal(canonicalAddress('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(canonicalAddress('::FFFF:c000:201'), '192.0.2.1');
    assert.deepEqual(parseAddress('::ffff:192.0.2.1'), {
      version: 4,
      value: parseAddress('192.0.2.1')!.value,
    });
    assert.equal(canonicalAddress('::fffe:c000:201'), '::fffe:c000:201');
    assert.equal(canonicalAddress('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2:3:4:5:6');
    for (const bad of ['192.0.2', '192.0.2.256', '01.2.3.4', '1::2::3', '2001:db8::g', '1:2:3:4:5:6:7:8:9'])
      assert.equal(parseAddress(bad), null, bad);
  });

  it('formats any IPv6 address into text that reads back to it, with one :: at most', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (value) => {
        const text = formatAddress(6, value);
        const mapped = value >> 32n === 0xffffn;
        assert.equal(parseAddress(text)?.value, mapped ? value & 0xffffffffn : value);
        assert.ok(text.split('::').length <= 2);
        assert.equal(text, text.toLowerCase());
      }),
    );
  });

  it('reads prefixes and refuses those with host bits set', () => {
    assert.deepEqual(parsePrefix('192.0.2.0/24'), {
      version: 4,
      network: parseAddress('192.0.2.0')!.value,
      length: 24,
    });
    assert.equal(parsePrefix('192.0.2.1/24'), null);
    assert.equal(parsePrefix('2001:db8::/129'), null);
    const v6 = parsePrefix('2001:db8:1::/64')!;
    assert.ok(prefixContains(v6, 6, parseAddress('2001:db8:1::ffff')!.value));
    assert.ok(!prefixContains(v6, 6, parseAddress('2001:db8:2::1')!.value));
    assert.ok(!prefixContains(v6, 4, 1n));
  });

  it('hands out the lowest free host, never the network, broadcast or subnet-router address', () => {
    const v4 = parsePrefix('198.51.100.0/30')!;
    const host = (text: string) => parseAddress(text)!.value;
    assert.equal(firstFreeHost(v4, new Set()), host('198.51.100.1'));
    assert.equal(firstFreeHost(v4, new Set([host('198.51.100.1')])), host('198.51.100.2'));
    assert.equal(firstFreeHost(v4, new Set([host('198.51.100.1'), host('198.51.100.2')])), null);
    assert.equal(firstFreeHost(parsePrefix('2001:db8::/64')!, new Set()), host('2001:db8::1'));
    fc.assert(
      fc.property(
        fc.integer({ min: 24, max: 30 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 255 })),
        (length, offsets) => {
          const prefix = parsePrefix(`10.0.0.0/${length}`)!;
          const taken = new Set(offsets.map((offset) => prefix.network + BigInt(offset)));
          const free = firstFreeHost(prefix, taken);
          const size = 1n << BigInt(32 - length);
          if (free === null) {
            for (let h = prefix.network + 1n; h < prefix.network + size - 1n; h += 1n)
              assert.ok(taken.has(h));
            return;
          }
          assert.ok(!taken.has(free));
          assert.ok(free > prefix.network && free < prefix.network + size - 1n);
          for (let h = prefix.network + 1n; h < free; h += 1n)
            assert.ok(taken.has(h), 'a lower one was free');
        },
      ),
    );
  });
});

describe('IP address registrations', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  const input = {
    managing_account: 'acc-a',
    consuming_account: 'acc-a',
    external_ref: null,
    version: 4,
    address: '203.0.113.9',
    prefix_length: 32,
    fqdn: null,
    valid_not_before: null,
    valid_not_after: null,
  };
  const names = (extra: Record<string, unknown>, subnets = [parsePrefix('192.0.2.0/24')!]) =>
    ipProblems({ ...input, ...extra }, now, subnets).map((p) => p.name);

  it('takes an address of its version with a fitting prefix, outside the exchange subnets', () => {
    assert.deepEqual(names({}), []);
    assert.deepEqual(names({ address: '203.0.113' }), ['address']);
    assert.deepEqual(names({ version: 6 }), ['version']);
    assert.deepEqual(names({ prefix_length: 33 }), ['prefix_length']);
    assert.deepEqual(names({ address: '192.0.2.44' }), ['address']);
    // Mapped into IPv6, an address of the exchange's subnet is still one.
    assert.deepEqual(names({ address: '::ffff:192.0.2.44' }), ['address']);
    assert.deepEqual(names({ version: 6, address: '::ffff:192.0.2.44', prefix_length: 128 }), ['version']);
  });

  it('takes host names and windows that end in the future', () => {
    assert.deepEqual(names({ fqdn: 'peer1.example.net.' }), []);
    assert.deepEqual(names({ fqdn: 'localhost' }), ['fqdn']);
    assert.deepEqual(names({ fqdn: 'bad_name.example' }), ['fqdn']);
    assert.deepEqual(names({ valid_not_after: '2026-01-01T00:00:00Z' }), ['valid_not_after']);
  });
});
