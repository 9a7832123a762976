import assert from 'node:assert/strict';
import path from 'node:path';
import { birdConfig, birdString, protocolName, sessionsOfConfig } from '../../drivers/bird/config';
import { parseProtocols } from '../../drivers/bird/process';
import { DriverError } from '../../drivers/contract';
import { bgpSession, configBlock, protocolBlock, ROUTE_SERVER, withBirdCheck } from '../support/bird-config';

/**
 * The BIRD 2 configuration of a route server (drivers/bird/config.ts): one protocol per session in
 * name order, the session's properties on the lines docs/route-servers.md names, names BIRD takes,
 * passwords it can hold; and BIRD itself (`bird -p`) accepts the text, where it is installed.
 */

const RS = ROUTE_SERVER;
const session = bgpSession;

const block = protocolBlock;

const refused = (code: string, pattern: RegExp) => (error: unknown) =>
  error instanceof DriverError && error.code === code && pattern.test(error.message);

describe('BIRD route-server configuration', () => {
  it('gives each session a protocol with its neighbour, local AS and address of its family', () => {
    const config = birdConfig(RS, [
      session(),
      session({ name: 'nfc-v6', peerAddress: '2001:db8::11', peerAsn: 4200000001 }),
    ]);
    assert.match(config, /^router id 192\.0\.2\.1;$/m);
    assert.deepEqual(block(config, 'nfc-7m2k9x4q1b8d3f6h'), [
      `protocol bgp ${protocolName('nfc-7m2k9x4q1b8d3f6h')} {`,
      'description "nfc-7m2k9x4q1b8d3f6h AS64501";',
      'local 192.0.2.1 as 64500;',
      'neighbor 192.0.2.11 as 64501;',
      'rs client;',
      'ipv4 {',
      'import where rs_import(64501);',
      'export where rs_export(64501);',
      'secondary on;',
      'next hop keep;',
      '};',
      '}',
    ]);
    const v6 = block(config, 'nfc-v6');
    assert.ok(v6.includes('local 2001:db8::1 as 64500;'));
    assert.ok(v6.includes('neighbor 2001:db8::11 as 4200000001;'));
    assert.ok(v6.includes('ipv6 {'));
    assert.ok(!v6.includes('ipv4 {'));
    assert.ok(v6.includes('export where rs_export(4200000001);'), 'the export knows its peer');
  });

  it('avoids path hiding: sorted master tables, and every channel falls back past a refused path', () => {
    const sessions = [
      session(),
      session({ name: 'v6', peerAddress: '2001:db8::11', peerAsn: 64502, insertIxpAsn: true }),
      session({ name: 'none', peerAddress: '192.0.2.12', peerAsn: 64503, maxPrefix: 0 }),
    ];
    const config = birdConfig(RS, sessions);
    const tables = config.split('\n').filter((line) => /^ipv[46] table /.test(line));
    assert.deepEqual(tables, ['ipv4 table master4 sorted;', 'ipv6 table master6 sorted;']);
    // Declared before anything that uses them.
    assert.ok(config.indexOf('ipv4 table master4 sorted;') < config.indexOf('protocol '));
    for (const one of sessions) {
      const lines = block(config, one.name);
      const exported = lines.indexOf(`export where rs_export(${one.peerAsn});`);
      assert.ok(exported > 0, lines.join('\n'));
      assert.equal(lines[exported + 1], 'secondary on;', `${one.name}: ${lines.join('\n')}`);
    }
    assert.equal([...config.matchAll(/^ {4}secondary on;$/gm)].length, sessions.length);
    assert.doesNotMatch(config, /^\s*table /m, 'no table of their own: every channel is on the master');
  });

  it("exports by the announcer's large communities of the RS ASN, and takes those off", () => {
    const config = birdConfig({ ...RS, asn: 4200000000 }, [session()]);
    const has = (fn: number | string, peer: number | string) =>
      `(4200000000, ${fn}, ${peer}) ~ bgp_large_community`;
    const prepend = 'bgp_path.prepend(bgp_path.first);';
    assert.deepEqual(configBlock(config, 'function rs_export(int peer_asn)'), [
      'function rs_export(int peer_asn)',
      '{',
      'if !rs_sane() then return false;',
      `if ${has(0, 'peer_asn')} then return false;`,
      `if ${has(0, 0)} && !(${has(1, 'peer_asn')}) then return false;`,
      `if ${has(103, 'peer_asn')} then {`,
      prepend,
      prepend,
      prepend,
      `} else if ${has(102, 'peer_asn')} then {`,
      prepend,
      prepend,
      `} else if ${has(101, 'peer_asn')} then {`,
      prepend,
      '}',
      // The control communities go; the RPKI tags (4200000000, 1000, *) and any other stay.
      'bgp_large_community.delete([(4200000000, 0, *), (4200000000, 1, *), (4200000000, 101..103, *)]);',
      'return true;',
      '}',
    ]);
    assert.ok(block(config, 'nfc-7m2k9x4q1b8d3f6h').includes('export where rs_export(64501);'));
  });

  it('maps passive, password, max prefix, the RS ASN, AS-SET and flags', () => {
    const config = birdConfig({ ...RS, maxPrefixAction: 'block' }, [
      session({
        passive: true,
        password: "s3cr\\t'x",
        maxPrefix: 250,
        insertIxpAsn: true,
        asSet: 'AS-EXAMPLE',
        flags: ['zeta', 'alpha'],
      }),
    ]);
    const lines = block(config, 'nfc-7m2k9x4q1b8d3f6h');
    assert.ok(lines.includes('passive on;'));
    // BIRD's strings have no escapes: the backslash and the apostrophe stand for themselves.
    assert.ok(lines.includes(`password "s3cr\\t'x";`), lines.join('\n'));
    assert.ok(lines.includes('import limit 250 action block;'));
    // The RS ASN inserted: a plain EBGP session (no rs client), which prepends it.
    assert.ok(!lines.includes('rs client;'));
    assert.match(config, /^# AS64500 inserted into the AS paths passed on \(no rs client\)$/m);
    assert.match(config, /^# AS-SET: AS-EXAMPLE \(not expanded: /m);
    assert.match(config, /^# flags: alpha, zeta$/m);

    const plain = block(birdConfig(RS, [session()]), 'nfc-7m2k9x4q1b8d3f6h');
    assert.ok(!plain.includes('passive on;'));
    assert.ok(!plain.some((line) => line.startsWith('password')));
    assert.ok(!plain.some((line) => line.startsWith('import limit')));

    const zero = block(birdConfig(RS, [session({ maxPrefix: 0 })]), 'nfc-7m2k9x4q1b8d3f6h');
    assert.ok(zero.includes('import none;'));
    assert.ok(
      block(birdConfig(RS, [session({ maxPrefix: 9 })]), 'nfc-7m2k9x4q1b8d3f6h').includes(
        'import limit 9 action restart;',
      ),
    );
  });

  it('refuses passwords and names a BIRD string cannot hold', () => {
    assert.throws(
      () => birdConfig(RS, [session({ password: 'a"b' })]),
      refused('invalid-config', /password holds a double quote/),
    );
    assert.throws(
      () => birdConfig(RS, [session({ password: 'a\nb' })]),
      refused('invalid-config', /control character/),
    );
    assert.equal(birdString('a\\b', 'x'), '"a\\b"');
  });

  it('sanitises session names into distinct BIRD identifiers, keeping the name in a comment', () => {
    assert.equal(protocolName('rs_1'), 's_rs_1');
    for (const name of ['nfc-abc', 'nfc.abc', 'nfc:abc', 'a/b', 'x'.repeat(80)]) {
      assert.match(protocolName(name), /^s_[A-Za-z0-9_]{1,58}$/, name);
    }
    assert.notEqual(protocolName('nfc-abc'), protocolName('nfc.abc'));
    assert.notEqual(protocolName('nfc-abc'), protocolName('nfc_abc'));
    assert.notEqual(protocolName('x'.repeat(80)), protocolName('x'.repeat(79)));
    const config = birdConfig(RS, [session({ name: 'odd:name/1.x' })]);
    assert.match(config, /^# session odd:name\/1\.x: AS64501 at 192\.0\.2\.11$/m);
    assert.match(config, new RegExp(`^protocol bgp ${protocolName('odd:name/1.x')} \\{$`, 'm'));
  });

  it('is deterministic, with sessions in name order, and reads its sessions back', () => {
    const sessions = [
      session({ name: 'c', peerAddress: '192.0.2.13' }),
      session({ name: 'a', peerAddress: '192.0.2.11', flags: ['y', 'x'] }),
      session({ name: 'b', peerAddress: '2001:db8::12' }),
    ];
    const config = birdConfig(RS, sessions);
    assert.equal(birdConfig(RS, [...sessions].reverse()), config);
    const order = [...config.matchAll(/^protocol bgp (\S+) \{$/gm)].map((match) => match[1]);
    assert.deepEqual(order, ['s_a', 's_b', 's_c']);
    assert.deepEqual(
      sessionsOfConfig(config),
      [sessions[1], sessions[2], sessions[0]].map((one) => ({ ...one, flags: [...one.flags].sort() })),
    );
  });

  it('filters bogons and the default route, and refuses a session of a family the RS lacks', () => {
    const config = birdConfig(RS, [session()]);
    assert.match(config, /if net = 0\.0\.0\.0\/0 then return false;/);
    assert.match(config, /if net = ::\/0 then return false;/);
    assert.match(config, /^ {2}10\.0\.0\.0\/8\+,$/m);
    assert.match(config, /^ {2}203\.0\.113\.0\/24\+,?$/m);
    assert.doesNotMatch(birdConfig({ ...RS, rejectDocumentationPrefixes: false }, []), /203\.0\.113/);
    assert.throws(
      () => birdConfig({ ...RS, ipv6: null }, [session({ peerAddress: '2001:db8::11' })]),
      refused('invalid-config', /has no IPv6 address/),
    );
  });

  it('reads sessions from `birdc show protocols all`', () => {
    const text = [
      'BIRD 2.0.12 ready.',
      'Name       Proto      Table      State  Since         Info',
      'device1    Device     ---        up     17:13:48.977  ',
      '',
      's_a        BGP        ---        start  17:14:14.681  Idle          Automatic shutdown: Route limit exceeded',
      '  Description:    a AS64501',
      '  BGP state:          Idle',
      '    Last error:       Automatic shutdown: Route limit exceeded',
      '  Channel ipv4',
      '    Import limit:   1 [HIT]',
      '      Action:       restart',
      's_b        BGP        ---        up     17:14:04.324  Established   ',
      '  BGP state:          Established',
      '  Channel ipv4',
      '    Import limit:   5',
      '    Routes:         2 imported, 3 exported, 2 preferred',
    ].join('\n');
    const [device, a, b] = parseProtocols(text);
    assert.equal(device.proto, 'Device');
    assert.deepEqual(
      { name: a.name, state: a.state, info: a.info, limit: a.importLimit, hit: a.importLimitHit },
      { name: 's_a', state: 'start', info: 'Idle', limit: 1, hit: true },
    );
    assert.equal(a.lastError, 'Automatic shutdown: Route limit exceeded');
    assert.equal(a.description, 'a AS64501');
    assert.deepEqual(
      [b.info, b.importedRoutes, b.exportedRoutes, b.importLimitHit],
      ['Established', 2, 3, false],
    );
  });

  it('is accepted by `bird -p`', function () {
    withBirdCheck(this, (check, dir) => {
      const config = birdConfig({ ...RS, logFile: path.join(dir, 'bird.log') }, [
        session(),
        session({
          name: 'odd:name/1.x',
          peerAddress: '2001:db8::11',
          passive: true,
          password: "p\\a'ss",
          maxPrefix: 100,
          insertIxpAsn: true,
          asSet: 'AS-X',
          flags: ['f'],
        }),
        session({ name: 'zero', peerAddress: '192.0.2.12', maxPrefix: 0 }),
      ]);
      const accepted = check(config);
      assert.equal(accepted.status, 0, `bird -p refused:\n${accepted.stderr}\n${config}`);
      // The check can fail: a broken configuration is refused.
      const broken = check(config.replace('rs client;', 'rs clint;'));
      assert.notEqual(broken.status, 0);
      assert.match(broken.stderr, /syntax error/);
      // `secondary` needs the sorted tables: BIRD refuses the one without the other.
      const unsorted = check(config.replace('ipv4 table master4 sorted;', 'ipv4 table master4;'));
      assert.notEqual(unsorted.status, 0);
      assert.match(unsorted.stderr, /secondary option requires sorted table/);
    });
  });
});
