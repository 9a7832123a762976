import assert from 'node:assert/strict';
import path from 'node:path';
import { birdConfig } from '../../drivers/bird/config';
import { RTR_TIMERS } from '../../drivers/bird/rpki';
import { DriverError } from '../../drivers/contract';
import { bgpSession, configBlock, protocolBlock, ROUTE_SERVER, withBirdCheck } from '../support/bird-config';

/**
 * RPKI origin validation in a route server's BIRD configuration (drivers/bird/rpki.ts): with
 * validator caches, a `protocol rpki` each, the ROA tables, and every session's import checking the
 * origin; without, the configuration holds none of it.
 */

const CACHES = [
  { host: '127.0.0.1', port: 3323 },
  { host: '2001:db8::5', port: 323 },
  { host: 'rtr.example.net', port: 8282 },
];
const RPKI = { ...ROUTE_SERVER, rpkiCaches: CACHES };

describe('BIRD route-server configuration with RPKI', () => {
  it('holds no RPKI without validator caches', () => {
    const sessions = [bgpSession(), bgpSession({ name: 'v6', peerAddress: '2001:db8::11' })];
    const config = birdConfig(ROUTE_SERVER, sessions);
    assert.equal(birdConfig({ ...ROUTE_SERVER, rpkiCaches: [] }, sessions), config);
    assert.doesNotMatch(config, /rpki|roa|import table|add\(\(64500, 1000, /i);
    assert.ok(protocolBlock(config, 'nfc-7m2k9x4q1b8d3f6h').includes('import where rs_import(64501);'));
    // A member cannot pass off RPKI results of its own, with validation or without.
    assert.ok(
      configBlock(config, 'function rs_import(int peer_asn)').includes(
        'bgp_large_community.delete([(64500, 1000, *)]);',
      ),
    );
  });

  it('writes a protocol rpki per cache with the RFC 8210 timers, into two ROA tables', () => {
    const config = birdConfig(RPKI, [bgpSession()]);
    assert.match(config, /^roa4 table roa_v4;$/m);
    assert.match(config, /^roa6 table roa_v6;$/m);
    const timers = [
      `refresh ${RTR_TIMERS.refresh};`,
      `retry ${RTR_TIMERS.retry};`,
      `expire ${RTR_TIMERS.expire};`,
    ];
    assert.deepEqual(timers, ['refresh 3600;', 'retry 600;', 'expire 7200;']);
    const remotes = [
      'remote 127.0.0.1 port 3323;',
      'remote 2001:db8::5 port 323;',
      'remote "rtr.example.net" port 8282;',
    ];
    remotes.forEach((remote, index) =>
      assert.deepEqual(configBlock(config, `protocol rpki rpki_${index + 1} {`), [
        `protocol rpki rpki_${index + 1} {`,
        'roa4 { table roa_v4; };',
        'roa6 { table roa_v6; };',
        remote,
        ...timers,
        '}',
      ]),
    );
    assert.equal([...config.matchAll(/^protocol rpki /gm)].length, 3);
  });

  it("drops RPKI-invalid origins on every session's import and tags the others", () => {
    const config = birdConfig(RPKI, [
      bgpSession({ maxPrefix: 50 }),
      bgpSession({ name: 'v6', peerAddress: '2001:db8::11', peerAsn: 4200000001 }),
      bgpSession({ name: 'none', peerAddress: '192.0.2.12', maxPrefix: 0 }),
    ]);
    assert.deepEqual(configBlock(config, 'function rs_rpki()'), [
      'function rs_rpki()',
      '{',
      'if net.type = NET_IP4 then {',
      'case roa_check(roa_v4, net, bgp_path.last) {',
      'ROA_INVALID: return false;',
      'ROA_VALID: bgp_large_community.add((64500, 1000, 1));',
      'else: bgp_large_community.add((64500, 1000, 2));',
      '}',
      '} else {',
      'case roa_check(roa_v6, net, bgp_path.last) {',
      'ROA_INVALID: return false;',
      'ROA_VALID: bgp_large_community.add((64500, 1000, 1));',
      'else: bgp_large_community.add((64500, 1000, 2));',
      '}',
      '}',
      'return true;',
      '}',
    ]);
    const imports = configBlock(config, 'function rs_import(int peer_asn)');
    assert.deepEqual(
      imports.slice(-4, -2),
      ['bgp_large_community.delete([(64500, 1000, *)]);', 'if !rs_rpki() then return false;'],
      imports.join('\n'),
    );
    // ROA changes reach routes already received: BIRD keeps them as received and checks them again.
    const v4 = protocolBlock(config, 'nfc-7m2k9x4q1b8d3f6h');
    assert.deepEqual(v4.slice(v4.indexOf('ipv4 {'), v4.indexOf('ipv4 {') + 4), [
      'ipv4 {',
      'import limit 50 action restart;',
      'import table on;',
      'import where rs_import(64501);',
    ]);
    assert.ok(protocolBlock(config, 'v6').includes('import table on;'));
    assert.ok(!protocolBlock(config, 'none').includes('import table on;'), 'nothing imported, nothing kept');
    // The ROA tables and rs_rpki come before the filters that use them.
    assert.ok(config.indexOf('function rs_rpki()') < config.indexOf('function rs_import('));
  });

  it('refuses a cache BIRD cannot be given', () => {
    const refused = (error: unknown) => error instanceof DriverError && error.code === 'invalid-config';
    assert.throws(() => birdConfig({ ...ROUTE_SERVER, rpkiCaches: [{ host: 'a"b', port: 1 }] }, []), refused);
    assert.throws(
      () => birdConfig({ ...ROUTE_SERVER, rpkiCaches: [{ host: '::1', port: 70000 }] }, []),
      refused,
    );
  });

  it('is accepted by `bird -p`, and a misspelt RPKI line is refused', function () {
    withBirdCheck(this, (check, dir) => {
      const config = birdConfig({ ...RPKI, logFile: path.join(dir, 'bird.log') }, [
        bgpSession({ maxPrefix: 10, passive: true }),
        bgpSession({ name: 'v6', peerAddress: '2001:db8::11', insertIxpAsn: true }),
      ]);
      const accepted = check(config);
      assert.equal(accepted.status, 0, `bird -p refused:\n${accepted.stderr}\n${config}`);
      const broken = check(config.replace('ROA_INVALID:', 'ROA_INVALD:'));
      assert.notEqual(broken.status, 0, 'the check can fail');
    });
  });
});
