import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RouteServerPlacement, SessionState } from '../../drivers/bird/driver';
import { BirdRouteServers } from '../../drivers/bird/driver';
import type { BgpSession } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import { cannotRun, onPath } from '../support/system-tools';

/**
 * A real BGP session: the route server's BIRD, run by drivers/bird/driver.ts in one network namespace,
 * and a member's BIRD in another, joined by a veth pair. The member announces two documentation
 * prefixes, a private one and the default route; the route server learns the first two only. Then
 * the session's max prefix changes, the session goes, and a killed BIRD comes back with its sessions.
 * Needs root, `ip` and BIRD 2 (Debian's bird2): skipped, loudly, where they are missing, but in CI
 * (CI=true, as .ci/run sets it), which installs them, it fails instead.
 */

const tag = randomBytes(3).toString('hex');
const NS_RS = `ixrs-${tag}`;
const NS_MEMBER = `ixmb-${tag}`;
const VETH_RS = `vrs${tag}`;
const VETH_MEMBER = `vmb${tag}`;
const RS_V4 = '10.99.0.1';
const MEMBER_V4 = '10.99.0.2';
const RS_V6 = 'fd99::1';
const MEMBER_V6 = 'fd99::2';
const DEVICE = 'nf-route-server-1';
const ANNOUNCED = ['192.0.2.0/24', '203.0.113.0/24'];
const FILTERED = ['10.20.0.0/16', '0.0.0.0/0'];

/** Why these tests cannot run here, or undefined when they can. */
function missing(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  if (!onPath('bird') || !onPath('birdc')) return 'bird and birdc are not installed (Debian package bird2)';
  if (!onPath('ip')) return 'ip is not installed (iproute2)';
  const probe = `ixprobe-${tag}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return `network namespaces are not available: ${made.stderr.trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return undefined;
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });

/** Polls `probe` until it returns something, or fails with what it saw last. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const found = await probe();
      if (found !== undefined) return found;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what} did not happen within ${ms} ms${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    await sleep(250);
  }
}

describe('BIRD route server with a real BGP session', function () {
  this.timeout(120_000);
  const root = mkdtempSync(path.join(tmpdir(), 'rs-'));
  const memberDir = path.join(root, 'member');
  const placement: RouteServerPlacement = {
    namespace: NS_RS,
    asn: 64500,
    ipv4: RS_V4,
    ipv6: RS_V6,
    rejectDocumentationPrefixes: false,
  };
  const servers = new BirdRouteServers(path.join(root, 'run'), (device) =>
    device === DEVICE ? placement : undefined,
  );
  const session: BgpSession = {
    name: 'nfc-member-1',
    peerAsn: 64501,
    peerAddress: MEMBER_V4,
    passive: true,
    password: 'secret\\1',
    asSet: 'AS-MEMBER',
    maxPrefix: 10,
    insertIxpAsn: false,
    flags: [],
  };
  const sessionV6: BgpSession = { ...session, name: 'nfc-member-1-v6', peerAddress: MEMBER_V6 };
  let ready = false;
  let keys = 0;

  const birdcRs = (...args: string[]) =>
    execFileSync('birdc', ['-s', path.join(servers.directoryOf(DEVICE), 'bird.ctl'), ...args], {
      encoding: 'utf8',
    });
  const birdcMember = (...args: string[]) =>
    execFileSync('birdc', ['-s', path.join(memberDir, 'bird.ctl'), ...args], { encoding: 'utf8' });

  async function commit(intent: { bgpSessions?: BgpSession[]; removeBgpSessions?: string[] }) {
    const candidate = await servers.load({ device: DEVICE, ...intent });
    keys += 1;
    return servers.commit(candidate.id, `test:${keys}`);
  }

  const established = (name: string) =>
    until(`session ${name} Established`, async () => {
      const [state] = await servers.readSessionStates(DEVICE, [name]);
      return state?.bgpState === 'Established' && state.importedRoutes > 0 ? state : undefined;
    });

  before(function () {
    const reason = missing();
    if (reason) cannotRun(this, reason);
    ip('netns', 'add', NS_RS);
    ip('netns', 'add', NS_MEMBER);
    ip('link', 'add', VETH_RS, 'type', 'veth', 'peer', 'name', VETH_MEMBER);
    ip('link', 'set', VETH_RS, 'netns', NS_RS);
    ip('link', 'set', VETH_MEMBER, 'netns', NS_MEMBER);
    for (const [ns, dev, v4, v6] of [
      [NS_RS, VETH_RS, RS_V4, RS_V6],
      [NS_MEMBER, VETH_MEMBER, MEMBER_V4, MEMBER_V6],
    ]) {
      ip('-n', ns, 'addr', 'add', `${v4}/24`, 'dev', dev);
      ip('-n', ns, 'addr', 'add', `${v6}/64`, 'dev', dev, 'nodad');
      ip('-n', ns, 'link', 'set', dev, 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
    // The member: a plain BIRD announcing its prefixes, a private one and the default route.
    mkdirSync(memberDir);
    const member = [
      `router id ${MEMBER_V4};`,
      `log "${memberDir}/bird.log" all;`,
      'protocol device {}',
      'protocol static announced4 {',
      '  ipv4;',
      ...[...ANNOUNCED, ...FILTERED].map((prefix) => `  route ${prefix} blackhole;`),
      '}',
      'protocol static announced6 {',
      '  ipv6;',
      '  route 2001:db8:100::/48 blackhole;',
      '}',
      'protocol bgp routeserver4 {',
      `  local ${MEMBER_V4} as 64501;`,
      `  neighbor ${RS_V4} as 64500;`,
      `  password "${session.password}";`,
      '  connect delay time 1; connect retry time 2; error wait time 1, 4;',
      '  ipv4 { import all; export where proto = "announced4"; };',
      '}',
      'protocol bgp routeserver6 {',
      `  local ${MEMBER_V6} as 64501;`,
      `  neighbor ${RS_V6} as 64500;`,
      `  password "${session.password}";`,
      '  connect delay time 1; connect retry time 2; error wait time 1, 4;',
      '  ipv6 { import all; export where proto = "announced6"; };',
      '}',
    ];
    writeFileSync(path.join(memberDir, 'bird.conf'), `${member.join('\n')}\n`);
    execFileSync('ip', [
      'netns',
      'exec',
      NS_MEMBER,
      'bird',
      '-c',
      path.join(memberDir, 'bird.conf'),
      '-s',
      path.join(memberDir, 'bird.ctl'),
      '-P',
      path.join(memberDir, 'bird.pid'),
    ]);
    ready = true;
  });

  after(async function () {
    this.timeout(30_000);
    if (ready) {
      try {
        process.stdout.write(`\n  route server: birdc show protocols\n${birdcRs('show', 'protocols')}\n`);
      } catch {
        // BIRD is gone already.
      }
    }
    await servers.stop(DEVICE).catch(() => undefined);
    try {
      const pid = Number(readFileSync(path.join(memberDir, 'bird.pid'), 'utf8'));
      if (pid > 0) process.kill(pid, 'SIGTERM');
    } catch {
      // The member's BIRD never started.
    }
    for (const ns of [NS_RS, NS_MEMBER]) spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', VETH_RS]);
    rmSync(root, { recursive: true, force: true });
  });

  it('establishes the session and learns the member’s prefixes, not its bogons', async () => {
    await commit({ bgpSessions: [session, sessionV6] });
    const state: SessionState = await established(session.name);
    assert.equal(state.state, 'up');
    assert.equal(state.importedRoutes, ANNOUNCED.length);
    assert.equal(state.importLimit, 10);
    const routes = birdcRs('show', 'route');
    for (const prefix of ANNOUNCED)
      assert.match(routes, new RegExp(`^${prefix.replace(/\./g, '\\.')}\\s`, 'm'));
    for (const prefix of FILTERED)
      assert.doesNotMatch(routes, new RegExp(`^${prefix.replace(/\./g, '\\.')}\\s`, 'm'));
    const v6 = await established(sessionV6.name);
    assert.equal(v6.importedRoutes, 1);
    assert.match(birdcRs('show', 'route'), /^2001:db8:100::\/48\s/m);
    assert.match(birdcMember('show', 'protocols'), /routeserver4\s+BGP\s+---\s+up\s.*Established/);
    // The configuration is what the driver reads back.
    assert.deepEqual(await servers.readBgpSessions(DEVICE), [session, sessionV6]);
    const config = readFileSync(path.join(servers.directoryOf(DEVICE), 'bird.conf'), 'utf8');
    assert.match(config, /^ {4}import limit 10 action restart;$/m);
  });

  it('applies a new max prefix: with fewer allowed than announced, the limit is hit', async () => {
    await commit({ bgpSessions: [{ ...session, maxPrefix: 1 }] });
    const [state] = await until('the import limit hit', async () => {
      const states = await servers.readSessionStates(DEVICE, [session.name]);
      return states[0]?.importLimit === 1 && states[0].importLimitHit && states[0].bgpState !== 'Established'
        ? states
        : undefined;
    });
    assert.match(state.lastError ?? '', /limit exceeded/i);
    assert.equal((await servers.readBgpSessions(DEVICE, [session.name]))[0].maxPrefix, 1);
    // Back to room for every prefix: the session comes up again.
    await commit({ bgpSessions: [{ ...session, maxPrefix: 5 }] });
    const again = await until(
      'the session up again with limit 5',
      async () => {
        const [one] = await servers.readSessionStates(DEVICE, [session.name]);
        return one?.importLimit === 5 && one.bgpState === 'Established' && one.importedRoutes === 2
          ? one
          : undefined;
      },
      60_000,
    );
    assert.equal(again.importLimitHit, false);
  });

  it('refuses a configuration BIRD cannot take and keeps the running one', async () => {
    const file = path.join(servers.directoryOf(DEVICE), 'bird.conf');
    const before = readFileSync(file, 'utf8');
    const pid = await servers.pid(DEVICE);
    // A link-local neighbour without an interface: BIRD's check (bird -p) refuses it.
    await assert.rejects(
      commit({ bgpSessions: [{ ...sessionV6, name: 'nfc-bad', peerAddress: 'fe80::9' }] }),
      (error: unknown) =>
        error instanceof DriverError && error.code === 'rejected' && /Link-local/i.test(error.message),
    );
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.equal(await servers.pid(DEVICE), pid);
    assert.deepEqual(
      (await servers.readBgpSessions(DEVICE)).map((one) => one.name),
      [session.name, sessionV6.name],
    );
    assert.doesNotMatch(birdcRs('show', 'protocols'), /nfc_bad/);
  });

  let removal: { commitId: string } | undefined;

  it('removes a session: its protocol is gone', async () => {
    removal = await commit({ removeBgpSessions: [sessionV6.name] });
    assert.deepEqual(
      (await servers.readBgpSessions(DEVICE)).map((one) => one.name),
      [session.name],
    );
    assert.doesNotMatch(birdcRs('show', 'protocols'), /nfc_member_1_v6/);
    assert.match(birdcRs('show', 'protocols'), /^s_nfc_member_1_\w+\s+BGP/m);
  });

  it('starts a killed BIRD again with the same sessions', async () => {
    const pid = await servers.pid(DEVICE);
    assert.ok(pid);
    process.kill(pid, 'SIGKILL');
    await until('BIRD dead', async () => ((await servers.pid(DEVICE)) === null ? true : undefined));
    assert.equal(await servers.restartIfDead(DEVICE), true);
    const restarted = await servers.pid(DEVICE);
    assert.ok(restarted && restarted !== pid);
    const state = await established(session.name);
    assert.equal(state.importLimit, 5);
    assert.deepEqual(
      (await servers.readSessionStates(DEVICE)).map((one) => one.name),
      [session.name],
    );
    assert.equal(await servers.restartIfDead(DEVICE), false);
  });

  it('answers a key committed before with its commit, and rolls a commit back once', async () => {
    assert.ok(removal);
    const candidate = await servers.load({ device: DEVICE, bgpSessions: [sessionV6] });
    const again = await servers.commit(candidate.id, `test:${keys}`);
    assert.equal(again.commitId, removal.commitId);
    assert.deepEqual(
      (await servers.readBgpSessions(DEVICE)).map((one) => one.name),
      [session.name],
    );
    await servers.rollback(DEVICE, removal.commitId);
    assert.deepEqual(
      (await servers.readBgpSessions(DEVICE)).map((one) => one.name),
      [session.name, sessionV6.name],
    );
    assert.match(birdcRs('show', 'protocols'), /^s_nfc_member_1_v6_\w+\s+BGP/m);
    await servers.rollback(DEVICE, removal.commitId);
    assert.equal((await servers.readBgpSessions(DEVICE)).length, 2);
    await established(sessionV6.name);
  });
});
