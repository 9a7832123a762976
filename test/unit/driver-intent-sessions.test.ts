import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { BgpSession, ConfigChange, DeviceIntent, LagConfig } from '../../drivers/contract';
import { applyChanges, inverseOf, planChanges } from '../../drivers/intent';
import { comparable, dot1q, NAMES, refusalOf, service, session, snapshotOf } from '../support/device-intents';

const SESSION_NAMES = ['rs-a', 'rs-b', 'rs-c', 'rs-d'];
// Few addresses, so that sessions often want the same one.
const PEER_ADDRESSES = ['192.0.2.1', '192.0.2.2', '2001:db8::1', '2001:db8::2'];

const sessionArbitrary: fc.Arbitrary<BgpSession> = fc.record({
  name: fc.constantFrom(...SESSION_NAMES),
  peerAsn: fc.integer({ min: 1, max: 4294967294 }).filter((asn) => asn !== 23456),
  peerAddress: fc.constantFrom(...PEER_ADDRESSES),
  passive: fc.boolean(),
  password: fc.constantFrom(null, 'secret', 'S3cr3t!#&~'),
  asSet: fc.constantFrom(null, 'AS-EXAMPLE', 'RIPE::AS64496:AS-CUSTOMERS'),
  maxPrefix: fc.option(fc.nat({ max: 1_000_000 })),
  insertIxpAsn: fc.boolean(),
  flags: fc.uniqueArray(fc.constantFrom('no-export', 'rpki-strict', 'graceful-shutdown'), { maxLength: 3 }),
});

/** Sessions with distinct names, keeping the first of those that share an address. */
const distinctSessionsArbitrary = fc
  .uniqueArray(sessionArbitrary, { selector: (s) => s.name, maxLength: 4 })
  .map((list) => list.filter((s, i) => list.findIndex((o) => o.peerAddress === s.peerAddress) === i));

describe('BGP sessions in device intents', () => {
  const summary = (changes: readonly ConfigChange[]) => changes.map((c) => `${c.kind} ${c.name} ${c.action}`);
  const v4 = session('rs-v4', '192.0.2.10', { passive: true, maxPrefix: 100, asSet: 'AS-EXAMPLE' });
  const v6 = session('rs-v6', '2001:db8::10', {
    passive: false,
    password: 'secret',
    flags: ['rpki-strict', 'no-export'],
  });

  it('creates, changes and removes sessions, with their flags as a set', () => {
    const start = snapshotOf();
    const created = planChanges(start, { device: 'rs', bgpSessions: [v6, v4] });
    assert.deepEqual(summary(created), ['bgp_session rs-v4 create', 'bgp_session rs-v6 create']);
    const running = applyChanges(start, created);
    assert.deepEqual(running.bgpSessions.get('rs-v6')?.flags, ['no-export', 'rpki-strict']);
    assert.deepEqual(running.bgpSessions.get('rs-v4'), v4);
    assert.deepEqual(planChanges(running, { device: 'rs', bgpSessions: [v4, v6] }), [], 'flags in any order');

    const changed = planChanges(running, {
      device: 'rs',
      bgpSessions: [
        { ...v4, maxPrefix: 200 },
        { ...v6, password: null, flags: ['no-export'] },
      ],
    });
    assert.deepEqual(summary(changed), ['bgp_session rs-v4 update', 'bgp_session rs-v6 update']);
    assert.deepEqual(changed[0].before, v4);
    assert.deepEqual(changed[1].after, { ...v6, password: null, flags: ['no-export'] });

    const removed = planChanges(running, { device: 'rs', removeBgpSessions: ['rs-v6', 'rs-v4', 'rs-none'] });
    assert.deepEqual(summary(removed), ['bgp_session rs-v4 delete', 'bgp_session rs-v6 delete']);
    assert.deepEqual([...applyChanges(running, removed).bgpSessions.keys()], []);
  });

  it('refuses sessions that say something impossible of themselves, naming the session', () => {
    const refused: Array<[Partial<BgpSession>, RegExp]> = [
      [{ name: '' }, /BGP session name "" is not a valid name/],
      [{ name: 'rs 1' }, /BGP session name "rs 1" is not a valid name/],
      [{ peerAsn: 0 }, /peer ASN 0 is not an ASN/],
      [{ peerAsn: -1 }, /peer ASN -1 is not an ASN/],
      [{ peerAsn: 4294967295 }, /peer ASN 4294967295 is not an ASN/],
      [{ peerAsn: 64496.5 }, /peer ASN 64496.5 is not an ASN/],
      [{ peerAsn: 23456 }, /peer ASN 23456 is AS_TRANS/],
      [{ peerAddress: '' }, /peer address "" is not an IPv4 or IPv6 address/],
      [{ peerAddress: 'rs1.example.net' }, /peer address "rs1.example.net"/],
      [{ peerAddress: '192.0.2.256' }, /peer address "192.0.2.256"/],
      [{ peerAddress: '192.0.2.01' }, /peer address "192.0.2.01"/],
      [{ peerAddress: '192.0.2.0/24' }, /peer address "192.0.2.0\/24"/],
      [{ peerAddress: '2001:DB8::1' }, /peer address "2001:DB8::1" .* canonical form/],
      [{ peerAddress: '2001:db8:0:0::1' }, /peer address "2001:db8:0:0::1"/],
      [{ peerAddress: '2001:0db8::1' }, /peer address "2001:0db8::1"/],
      [{ peerAddress: 'fe80::1%eth0' }, /peer address "fe80::1%eth0"/],
      [{ password: '' }, /password is not 1 to 80 printable ASCII/],
      [{ password: 'two words' }, /password/],
      [{ password: 'say"when' }, /password/],
      [{ password: "it's" }, /password/],
      [{ password: 'tab\there' }, /password/],
      [{ password: 'pässword' }, /password/],
      [{ password: 'x'.repeat(81) }, /password/],
      [{ asSet: 'A'.repeat(101) }, /AS-SET longer than 100 characters/],
      [{ maxPrefix: -1 }, /max prefix -1/],
      [{ maxPrefix: 2.5 }, /max prefix 2.5/],
      [{ flags: ['no-export', 'no-export'] }, /names a flag twice/],
      [{ flags: [''] }, /flags are not a list of names/],
    ];
    for (const [change, message] of refused) {
      const error = refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [{ ...v4, ...change }] });
      assert.match(error?.message ?? 'accepted', message, JSON.stringify(change));
      if (change.name === undefined) assert.match(error!.message, /^BGP session rs-v4: /);
    }
    const accepted: Array<Partial<BgpSession>> = [
      { peerAsn: 1 },
      { peerAsn: 4294967294 },
      { peerAsn: 23455 },
      { peerAddress: '0.0.0.1' },
      { peerAddress: '::1' },
      { peerAddress: '2001:db8:1:2:3:4:5:6' },
      { password: `!#$%&()*+,-./0123456789:;<=>?@AZ[\\]^_\`az{|}~`.padEnd(80, 'x') },
      { asSet: 'A'.repeat(100) },
      { maxPrefix: 0 },
      { flags: ['graceful-shutdown', 'no-export'] },
      { name: 'nfc:Abc_1' },
    ];
    for (const change of accepted)
      assert.equal(
        refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [{ ...v4, ...change }] })?.message,
        undefined,
        JSON.stringify(change),
      );
    assert.match(
      refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [v4, { ...v4, peerAddress: '192.0.2.11' }] })
        ?.message ?? '',
      /^the intent names BGP session rs-v4 twice$/,
    );
    assert.match(
      refusalOf(snapshotOf(), { device: 'rs', bgpSessions: [v4], removeBgpSessions: ['rs-v4'] })?.message ??
        '',
      /^BGP session rs-v4 is both intended and removed$/,
    );
  });

  it('refuses two sessions with one peer address, running or in the same intent, and accepts an address freed in the same intent', () => {
    const start = snapshotOf([], [], [v4, v6]);
    const refusals: Array<[DeviceIntent, RegExp]> = [
      [
        { device: 'rs', bgpSessions: [session('rs-new', '192.0.2.10')] },
        /^BGP sessions rs-new and rs-v4 both peer with 192\.0\.2\.10/,
      ],
      [
        { device: 'rs', bgpSessions: [{ ...v6, peerAddress: '192.0.2.10' }] },
        /^BGP sessions rs-v4 and rs-v6 both peer with 192\.0\.2\.10/,
      ],
      [
        {
          device: 'rs',
          bgpSessions: [session('rs-x', '2001:db8::20'), session('rs-y', '2001:db8::20')],
        },
        /^BGP sessions rs-x and rs-y both peer with 2001:db8::20/,
      ],
    ];
    for (const [intent, message] of refusals)
      assert.match(refusalOf(start, intent)?.message ?? 'accepted', message, JSON.stringify(intent));
    const accepted: DeviceIntent[] = [
      { device: 'rs', bgpSessions: [session('rs-new', '192.0.2.10')], removeBgpSessions: ['rs-v4'] },
      {
        device: 'rs',
        bgpSessions: [
          { ...v4, peerAddress: '2001:db8::10' },
          { ...v6, peerAddress: '192.0.2.10' },
        ],
      },
      { device: 'rs', bgpSessions: [session('rs-new', '192.0.2.11', { peerAsn: v4.peerAsn })] },
    ];
    for (const intent of accepted) assert.equal(refusalOf(start, intent), undefined, JSON.stringify(intent));
  });

  it('removes sessions before every other change and creates or changes them after every other, in name order', () => {
    const ae0: LagConfig = {
      name: 'ae0',
      description: '',
      mode: 'static',
      lacpTimeout: null,
      members: [NAMES[0], NAMES[1]],
    };
    const start = snapshotOf(
      [ae0],
      [service('svc-1', 'ae0', dot1q(100))],
      [session('rs-b', '192.0.2.2'), session('rs-d', '192.0.2.4'), session('rs-e', '192.0.2.5')],
    );
    const changes = planChanges(start, {
      device: 'd',
      interfaces: [{ name: NAMES[2], description: 'cust-1', enabled: true }],
      removeLags: ['ae0'],
      removeServices: ['svc-1'],
      lags: [{ ...ae0, name: 'ae1', members: [NAMES[3], NAMES[4]] }],
      services: [service('svc-2', 'ae1', dot1q(100))],
      removeBgpSessions: ['rs-e', 'rs-b'],
      bgpSessions: [
        session('rs-c', '192.0.2.3'),
        session('rs-d', '192.0.2.4', { maxPrefix: 10 }),
        session('rs-a', '192.0.2.1'),
      ],
    });
    assert.deepEqual(summary(changes), [
      'bgp_session rs-b delete',
      'bgp_session rs-e delete',
      'service svc-1 delete',
      'lag ae0 delete',
      `interface ${NAMES[0]} update`,
      `interface ${NAMES[1]} update`,
      `interface ${NAMES[2]} update`,
      `interface ${NAMES[3]} update`,
      `interface ${NAMES[4]} update`,
      'lag ae1 create',
      'service svc-2 create',
      'bgp_session rs-a create',
      'bgp_session rs-c create',
      'bgp_session rs-d update',
    ]);
    assert.deepEqual(summary(inverseOf(changes)).slice(0, 3), [
      'bgp_session rs-d update',
      'bgp_session rs-c delete',
      'bgp_session rs-a delete',
    ]);
    assert.deepEqual(
      comparable(applyChanges(applyChanges(start, changes), inverseOf(changes))),
      comparable(start),
    );
  });

  it('accepts exactly the sessions whose peer addresses stay distinct, and plans them to a state it rolls back from', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        distinctSessionsArbitrary,
        fc.uniqueArray(sessionArbitrary, { selector: (s) => s.name, maxLength: 4 }),
        fc.uniqueArray(fc.constantFrom(...SESSION_NAMES, 'rs-none'), { maxLength: 3 }),
        (running, intended, removing) => {
          const start = snapshotOf(
            [],
            [],
            running.map((s) => ({ ...s, flags: [...s.flags].sort() })),
          );
          const removed = removing.filter((name) => !intended.some((s) => s.name === name));
          const intent: DeviceIntent = { device: 'rs', bgpSessions: intended, removeBgpSessions: removed };
          const expected = new Map(start.bgpSessions);
          for (const name of removed) expected.delete(name);
          for (const s of intended) expected.set(s.name, { ...s, flags: [...s.flags].sort() });
          const addresses = [...expected.values()].map((s) => s.peerAddress);
          const distinct = new Set(addresses).size === addresses.length;

          const refusal = refusalOf(start, intent);
          assert.equal(refusal === undefined, distinct, refusal?.message ?? 'accepted');
          if (refusal) return;
          accepted += 1;
          const changes = planChanges(start, intent);
          // Deletes first, then creates and updates, each group in name order.
          const deletes = changes.filter((c) => c.action === 'delete');
          assert.deepEqual(changes.slice(0, deletes.length), deletes);
          for (const group of [deletes, changes.slice(deletes.length)]) {
            const names = group.map((c) => c.name);
            assert.deepEqual(names, [...names].sort());
          }
          const after = applyChanges(start, changes);
          assert.deepEqual(comparable(after), comparable({ ...start, bgpSessions: expected }));
          assert.deepEqual(planChanges(after, intent), [], 'the same intent again changes nothing');
          assert.deepEqual(comparable(applyChanges(after, inverseOf(changes))), comparable(start));
        },
      ),
      { numRuns: 500 },
    );
    assert.ok(accepted > 100, `only ${accepted} intents were accepted`);
  });
});
