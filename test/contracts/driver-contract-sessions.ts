import assert from 'node:assert/strict';
import type { BgpSession, DeviceDriver, DeviceIntent } from '../../drivers/contract';
import type { ContractScope } from './driver-contract-support';
import {
  expectDriverError,
  key,
  PEER_V4,
  PEER_V4_OTHER,
  PEER_V6,
  PEER_V6_OTHER,
  session,
} from './driver-contract-support';

/** The contract for BGP sessions on a route server. */
export function describeSessionContract(scope: ContractScope): void {
  let driver: DeviceDriver;
  before(() => ({ driver } = scope));
  const { sessionsHost, applyOn, readSessions, ourSessions } = scope;

  it('holds a passive IPv4 and an active IPv6 session on a route server: creates, reads back, changes and removes them', async () => {
    const host = await sessionsHost();
    if (!host) return;
    const v4 = session('contract-rs-v4', PEER_V4, {
      asSet: 'AS-CONTRACT',
      maxPrefix: 100,
      flags: ['rpki-strict', 'no-export'],
    });
    const v6 = session('contract-rs-v6', PEER_V6, {
      peerAsn: 4200000000,
      passive: false,
      password: 'contract-Secret#1',
      asSet: 'AS-CONTRACT-V6',
      maxPrefix: 20,
      insertIxpAsn: true,
    });
    const names = [v4.name, v6.name];
    const candidate = await driver.load({ device: host, bgpSessions: [v6, v4] });
    assert.deepEqual(
      candidate.changes.map((change) => [change.kind, change.name, change.action]),
      [
        ['bgp_session', v4.name, 'create'],
        ['bgp_session', v6.name, 'create'],
      ],
    );
    assert.deepEqual(await readSessions(host, names), [], 'loading changed the device');
    await driver.commit(candidate.id, key());
    const created = { ...v4, flags: ['no-export', 'rpki-strict'] };
    assert.deepEqual(await readSessions(host, names), [created, v6], 'flags read back sorted');
    assert.deepEqual(await readSessions(host, [v6.name]), [v6]);

    const changedV4 = { ...created, maxPrefix: 250, flags: ['no-export'], password: 'contract-new' };
    const changedV6 = { ...v6, maxPrefix: null, flags: ['graceful-shutdown'], password: null };
    const { changes } = await applyOn(host, { bgpSessions: [changedV4, changedV6] });
    assert.deepEqual(
      changes.map((change) => [change.kind, change.name, change.action]),
      [
        ['bgp_session', v4.name, 'update'],
        ['bgp_session', v6.name, 'update'],
      ],
    );
    assert.deepEqual(await readSessions(host, names), [changedV4, changedV6]);

    await applyOn(host, { removeBgpSessions: names });
    assert.deepEqual(await readSessions(host, names), []);
  });

  it('refuses two sessions with one peer address, and changes nothing', async () => {
    const host = await sessionsHost();
    if (!host) return;
    await applyOn(host, {
      bgpSessions: [session('contract-rs-v4', PEER_V4), session('contract-rs-v6', PEER_V6)],
    });
    const before = await ourSessions(host);
    const refusals: BgpSession[][] = [
      // A running session's address, another running session moved onto it, and two new ones.
      [session('contract-rs-x', PEER_V4, { peerAsn: 64497 })],
      [session('contract-rs-v6', PEER_V4)],
      [session('contract-rs-x', PEER_V6_OTHER), session('contract-rs-y', PEER_V6_OTHER)],
    ];
    for (const bgpSessions of refusals) {
      const error = await expectDriverError(driver.load({ device: host, bgpSessions }), 'invalid-config');
      assert.equal(error.retryable, false);
    }
    assert.deepEqual(await ourSessions(host), before);
    // An address freed in the same intent may be taken.
    await applyOn(host, {
      removeBgpSessions: ['contract-rs-v4'],
      bgpSessions: [session('contract-rs-x', PEER_V4, { peerAsn: 64497 })],
    });
    assert.deepEqual(
      (await ourSessions(host)).map((s) => [s.name, s.peerAddress]),
      [
        ['contract-rs-v6', PEER_V6],
        ['contract-rs-x', PEER_V4],
      ],
    );
  });

  it('refuses sessions with an invalid peer ASN or address, and changes nothing', async () => {
    const host = await sessionsHost();
    if (!host) return;
    await applyOn(host, { bgpSessions: [session('contract-rs-v4', PEER_V4)] });
    const before = await ourSessions(host);
    const refusals: Array<Partial<BgpSession>> = [
      { peerAsn: 0 },
      { peerAsn: 23456 },
      { peerAsn: 4294967295 },
      { peerAddress: '198.18.0.256' },
      { peerAddress: 'rs.example.net' },
      { peerAddress: '2001:DB8:FFFF::3' },
      { peerAddress: '2001:db8:ffff:0:0::3' },
    ];
    for (const change of refusals) {
      const intent: DeviceIntent = {
        device: host,
        bgpSessions: [session('contract-rs-bad', PEER_V4_OTHER, change)],
      };
      const error = await expectDriverError(driver.load(intent), 'invalid-config');
      assert.equal(error.retryable, false);
      assert.match(error.message, /contract-rs-bad/, 'the refusal names the session');
    }
    assert.deepEqual(await ourSessions(host), before);
  });

  it('rolls back sessions exactly (or refuses to roll back)', async () => {
    const host = await sessionsHost();
    if (!host) return;
    await applyOn(host, {
      bgpSessions: [
        session('contract-rs-kept', PEER_V4, { password: 'kept', maxPrefix: 10, flags: ['no-export'] }),
        session('contract-rs-gone', PEER_V6, { passive: false, asSet: 'AS-GONE' }),
      ],
    });
    const before = await ourSessions(host);
    const { commitId } = await applyOn(host, {
      removeBgpSessions: ['contract-rs-gone'],
      bgpSessions: [
        session('contract-rs-kept', PEER_V4, { password: null, maxPrefix: 20, flags: ['rpki-strict'] }),
        // The new session takes the address the removed one frees.
        session('contract-rs-new', PEER_V6, { insertIxpAsn: true }),
      ],
    });
    assert.notDeepEqual(await ourSessions(host), before);
    if (!driver.capabilities.rollback) {
      await expectDriverError(driver.rollback(host, commitId), 'rejected');
      return;
    }
    await driver.rollback(host, commitId);
    assert.deepEqual(await ourSessions(host), before);
    await driver.rollback(host, commitId);
    assert.deepEqual(await ourSessions(host), before);
  });

  it('commits sessions under a key once', async () => {
    const host = await sessionsHost();
    if (!host) return;
    const commitKey = key();
    const first = await driver.load({ device: host, bgpSessions: [session('contract-rs-once', PEER_V4)] });
    const done = await driver.commit(first.id, commitKey);
    assert.deepEqual(await driver.commit(first.id, commitKey), done, 'a retried commit answers the same');
    const second = await driver.load({
      device: host,
      bgpSessions: [session('contract-rs-twice', PEER_V6)],
      removeBgpSessions: ['contract-rs-once'],
    });
    assert.equal((await driver.commit(second.id, commitKey)).commitId, done.commitId);
    assert.deepEqual(await ourSessions(host), [session('contract-rs-once', PEER_V4)]);
  });
}
