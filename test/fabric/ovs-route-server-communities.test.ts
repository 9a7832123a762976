import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { BirdRouteServers } from '../../drivers/bird/driver';
import type { BgpSession } from '../../drivers/contract';
import { OvsDriver } from '../../drivers/ovs/driver';
import type { OvsFabric } from '../../drivers/ovs/fabric';
import { runProgram } from '../../drivers/ovs/program';
import { linkOf, routeServerLinkOf } from '../../drivers/ovs/topology';
import type { Announcement, ShownRoute, Speaker } from '../support/bird-speakers';
import { shownRoutes, startSpeaker } from '../support/bird-speakers';
import { inCustomerSide, serviceAttachment, startFabric, stopFabric } from '../support/ovs';
import { eventually } from '../support/wait';

/**
 * What a route server passes on to each member, with BGP between real speakers on the ovs fabric:
 * three members' routers (A, B, C), each a BIRD on a port of one device on an exchange LAN, hold a
 * session with the route server's BIRD (drivers/bird/driver.ts), which hangs off the LAN's core
 * bridge. A's routes carry the large communities of the route server's ASN that say where they go
 * (docs/route-servers.md#export-control-by-large-communities): a route kept from C reaches B only;
 * a prefix both A and B announce, whose best path (A's) is kept from C, still reaches C by B's path
 * (no path hiding); a prepend towards B shows at B only; one announced to C alone reaches C alone.
 * Needs root, Open vSwitch and BIRD 2.
 */

const DEVICE = `ovs-rsc${process.pid % 100000}`;
const NETWORK = 'man-rs-communities';
const LAN = 'ns-rs-communities';
const RS = 'nf-rs-communities';
const RS_ASN = 64500;
const RS_ADDRESS = '192.0.2.253';
const PORTS = ['et-0/0/1', 'et-0/0/2', 'et-0/0/3'];
const [A, B, C] = [64521, 64522, 64523];

/** A route kept from C: reaches B only. */
const KEPT_FROM_C = '185.3.1.0/24';
/** Announced by A (path `A`, the best) kept from C, and by B with a longer path (`B B`). */
const SHARED = '185.3.2.0/24';
/** A's ASN prepended twice towards B. */
const PREPENDED = '185.3.3.0/24';
/** To no one but C. */
const ONLY_TO_C = '185.3.4.0/24';
/** C's, with no community: to A and B. */
const PLAIN = '185.3.5.0/24';
/** A community of A's own, which the route server passes on. */
const OWN: [number, number, number] = [A, 7, 7];

const MEMBERS: Array<{ asn: number; port: string; address: string; announce: Announcement[] }> = [
  {
    asn: A,
    port: PORTS[0],
    address: '192.0.2.21',
    announce: [
      { prefix: KEPT_FROM_C, largeCommunities: [[RS_ASN, 0, C], OWN] },
      { prefix: SHARED, largeCommunities: [[RS_ASN, 0, C]] },
      { prefix: PREPENDED, largeCommunities: [[RS_ASN, 102, B]] },
      {
        prefix: ONLY_TO_C,
        largeCommunities: [
          [RS_ASN, 0, 0],
          [RS_ASN, 1, C],
        ],
      },
    ],
  },
  { asn: B, port: PORTS[1], address: '192.0.2.22', announce: [{ prefix: SHARED, prepend: 1 }] },
  { asn: C, port: PORTS[2], address: '192.0.2.23', announce: [{ prefix: PLAIN }] },
];

/** What each member must learn: prefix, the announcer's address (next hop) and the AS path. */
const EXPECTED: Record<number, Record<string, { via: string; asPath: number[] }>> = {
  [A]: {
    // A's own path of SHARED is the best, and never goes back to A: the next one does.
    [SHARED]: { via: '192.0.2.22', asPath: [B, B] },
    [PLAIN]: { via: '192.0.2.23', asPath: [C] },
  },
  [B]: {
    [KEPT_FROM_C]: { via: '192.0.2.21', asPath: [A] },
    [SHARED]: { via: '192.0.2.21', asPath: [A] },
    [PREPENDED]: { via: '192.0.2.21', asPath: [A, A, A] },
    [PLAIN]: { via: '192.0.2.23', asPath: [C] },
  },
  [C]: {
    // A's path, the best, is kept from C: C learns B's.
    [SHARED]: { via: '192.0.2.22', asPath: [B, B] },
    [PREPENDED]: { via: '192.0.2.21', asPath: [A] },
    [ONLY_TO_C]: { via: '192.0.2.21', asPath: [A] },
  },
};

const session = (member: (typeof MEMBERS)[number]): BgpSession => ({
  name: `nfc-member-${member.asn}`,
  peerAsn: member.asn,
  peerAddress: member.address,
  passive: true,
  password: null,
  asSet: null,
  maxPrefix: 10,
  insertIxpAsn: false,
  flags: [],
});

/** The next hop and AS path of each prefix of `routes`, for comparing. */
const picture = (routes: Map<string, ShownRoute>) =>
  Object.fromEntries([...routes.values()].map((r) => [r.prefix, { via: r.via, asPath: r.asPath }]));

describe('route-server export control and path hiding on the ovs fabric', function () {
  this.timeout(180_000);
  let fabric: OvsFabric | undefined;
  let root: string | undefined;
  let servers: BirdRouteServers;
  const speakers = new Map<number, Speaker>();
  /** What each member learned from the route server, as its BIRD shows it. */
  const learned = new Map<number, { shown: string; routes: Map<string, ShownRoute> }>();

  before(async function () {
    fabric = await startFabric(
      this,
      'ixapi-rs-comm-',
      [{ device: DEVICE, network: NETWORK, ports: PORTS.map((name) => ({ name, speed: 10_000 })) }],
      [{ feature: RS, network: NETWORK, segment: LAN, ipv4: `${RS_ADDRESS}/24`, ipv6: null }],
    );
    root = mkdtempSync(path.join(tmpdir(), 'ixapi-rs-comm-'));
    // The three ports on the exchange LAN, untagged, open to every MAC.
    const switches = new OvsDriver(fabric);
    const candidate = await switches.load({
      device: DEVICE,
      interfaces: PORTS.map((name) => ({ name, description: 'member', enabled: true })),
      services: PORTS.map((port, index) => serviceAttachment(`lan-${index}`, port, { segment: LAN })),
    });
    await switches.commit(candidate.id, `rs-communities-${Date.now()}`);

    const { namespace } = routeServerLinkOf({ feature: RS, network: NETWORK, segment: LAN });
    servers = new BirdRouteServers(fabric.birdDir, (device) =>
      device === RS ? { namespace, asn: RS_ASN, ipv4: RS_ADDRESS, ipv6: null } : undefined,
    );
    const sessions = await servers.load({ device: RS, bgpSessions: MEMBERS.map(session) });
    await servers.commit(sessions.id, `rs-communities-sessions-${Date.now()}`);

    for (const member of MEMBERS) {
      const { customerEnd, namespace: memberNamespace } = linkOf(DEVICE, member.port);
      await inCustomerSide(DEVICE, member.port, [
        'ip',
        'addr',
        'add',
        `${member.address}/24`,
        'dev',
        customerEnd,
      ]);
      speakers.set(
        member.asn,
        await startSpeaker({
          namespace: memberNamespace,
          dir: path.join(root, `member-${member.asn}`),
          asn: member.asn,
          address: member.address,
          routeServer: { address: RS_ADDRESS, asn: RS_ASN },
          announce: member.announce,
        }),
      );
    }
    await eventually(
      'the three sessions Established, with every route imported',
      async () => {
        const states = await servers.readSessionStates(RS);
        const imported = states.map((state) => state.importedRoutes);
        return states.every((state) => state.bgpState === 'Established') &&
          imported.join() === MEMBERS.map((member) => member.announce.length).join()
          ? true
          : undefined;
      },
      60_000,
      500,
    );
    // What each member learned: waited for until it is what the tests expect (at most 30 s: a
    // wrong view is left for them to tell), then read again a moment later, when a route that should
    // not come would have come with the others.
    const read = async (asn: number) => {
      const shown = await speakers.get(asn)!.learned();
      return { shown, routes: shownRoutes(shown) };
    };
    const expected = async () => {
      for (const member of MEMBERS)
        if (!isDeepStrictEqual(picture((await read(member.asn)).routes), EXPECTED[member.asn]))
          return undefined;
      return true;
    };
    await eventually('every member learning its routes', expected, 30_000, 500).catch((error: Error) =>
      process.stdout.write(`      ${error.message}\n`),
    );
    await sleep(2000);
    for (const member of MEMBERS) {
      const now = await read(member.asn);
      learned.set(member.asn, now);
      process.stdout.write(
        `      AS${member.asn} learned from ${RS}:\n${now.shown.trimEnd().replace(/^/gm, '        ')}\n`,
      );
    }
    const rs = await runProgram('birdc', [
      ...['-s', path.join(servers.directoryOf(RS), 'bird.ctl')],
      ...['show', 'route', 'for', SHARED, 'all'],
    ]);
    process.stdout.write(
      `      ${RS} holds for ${SHARED}:\n${rs.stdout.trimEnd().replace(/^/gm, '        ')}\n`,
    );
  });

  after(async function () {
    this.timeout(60_000);
    for (const speaker of speakers.values()) await speaker.stop();
    if (fabric) await stopFabric(fabric);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const routesOf = (asn: number) => learned.get(asn)!.routes;

  it(`passes a route tagged ${RS_ASN}:0:C on to B but not to C`, () => {
    const atB = routesOf(B).get(KEPT_FROM_C);
    assert.equal(atB?.via, '192.0.2.21', `B learns ${KEPT_FROM_C} from A`);
    assert.equal(routesOf(C).has(KEPT_FROM_C), false, `C does not: ${learned.get(C)!.shown}`);
    // The control community went; A's own community came along.
    assert.deepEqual(atB.largeCommunities, [`(${OWN.join(', ')})`]);
    for (const { routes } of learned.values())
      for (const route of routes.values())
        assert.ok(
          route.largeCommunities.every((community) => !community.startsWith(`(${RS_ASN}, `)),
          `no control community of AS${RS_ASN} leaves the route server: ${route.prefix} ${route.largeCommunities.join(' ')}`,
        );
  });

  it('hides no path: C, kept from the best path of a prefix, learns the other one', async () => {
    // The route server holds both paths, A's the best (the shorter).
    const held = await runProgram('birdc', [
      ...['-s', path.join(servers.directoryOf(RS), 'bird.ctl')],
      ...['show', 'route', 'for', SHARED, 'primary'],
    ]);
    assert.match(held.stdout, /via 192\.0\.2\.21 /, `A's path is the best: ${held.stdout}`);
    assert.deepEqual(routesOf(B).get(SHARED)?.asPath, [A], 'B gets the best path, A’s');
    assert.deepEqual(
      { via: routesOf(C).get(SHARED)?.via, asPath: routesOf(C).get(SHARED)?.asPath },
      { via: '192.0.2.22', asPath: [B, B] },
      `C gets B's path: ${learned.get(C)!.shown}`,
    );
  });

  it('prepends the announcer twice towards the peer of 102, and only there', () => {
    assert.deepEqual(routesOf(B).get(PREPENDED)?.asPath, [A, A, A]);
    assert.deepEqual(routesOf(C).get(PREPENDED)?.asPath, [A]);
  });

  it('announces a route tagged 0:0 and 1:C to C alone', () => {
    assert.equal(routesOf(C).get(ONLY_TO_C)?.via, '192.0.2.21');
    assert.equal(routesOf(B).has(ONLY_TO_C), false);
  });

  it('gives every member exactly its own view of the routes', () => {
    for (const member of MEMBERS) assert.deepEqual(picture(routesOf(member.asn)), EXPECTED[member.asn]);
  });
});
