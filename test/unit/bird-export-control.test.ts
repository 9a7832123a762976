import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { birdConfig } from '../../drivers/bird/config';
import { ROUTE_SERVER } from '../support/bird-config';
import type { LargeCommunity, TestBird } from '../support/bird-speakers';
import { shownRoutes, startBird } from '../support/bird-speakers';
import { onPath, systemTool } from '../support/system-tools';
import { eventually } from '../support/wait';

/**
 * The export control communities (drivers/bird/export-control.ts) as BIRD itself applies them: a
 * route server's generated configuration, without sessions, runs in a BIRD of its own; static
 * routes of one announcer carry the communities, and a pipe per peer AS copies into a table of its
 * own what `rs_export(peer)` lets through, as that peer would get it. No network: BIRD 2 only.
 */

const RS_ASN = ROUTE_SERVER.asn;
const ANNOUNCER = 64501;
const PEERS = [64502, 64503, 64504] as const;
type Peer = (typeof PEERS)[number];
/** Communities that are no control ones: an RPKI tag of the route server's, one of the announcer's. */
const KEPT: LargeCommunity[] = [
  [RS_ASN, 1000, 1],
  [ANNOUNCER, 7, 7],
];

interface Case {
  what: string;
  prefix: string;
  communities: LargeCommunity[];
  /** Communities of other ASes it carries besides, which no one takes off. */
  others?: LargeCommunity[];
  /** Per peer: how many times the announcer's ASN makes the path it gets, or null for no route. */
  to: Record<Peer, number | null>;
}

const all = (length: number | null): Record<Peer, number | null> => ({
  64502: length,
  64503: length,
  64504: length,
});

const CASES: Case[] = [
  { what: 'no control community: to every peer', prefix: '185.0.1.0/24', communities: [], to: all(1) },
  {
    what: 'RS:0:peer: not to that peer',
    prefix: '185.0.2.0/24',
    communities: [[RS_ASN, 0, 64503]],
    to: { ...all(1), 64503: null },
  },
  { what: 'RS:0:0: to no one', prefix: '185.0.3.0/24', communities: [[RS_ASN, 0, 0]], to: all(null) },
  {
    what: 'RS:0:0 with RS:1:peer: to that peer only',
    prefix: '185.0.4.0/24',
    communities: [
      [RS_ASN, 0, 0],
      [RS_ASN, 1, 64503],
    ],
    to: { ...all(null), 64503: 1 },
  },
  {
    what: 'RS:1:peer alone changes nothing',
    prefix: '185.0.5.0/24',
    communities: [[RS_ASN, 1, 64503]],
    to: all(1),
  },
  {
    what: 'RS:0:peer wins over RS:1:peer',
    prefix: '185.0.6.0/24',
    communities: [
      [RS_ASN, 0, 0],
      [RS_ASN, 1, 64502],
      [RS_ASN, 1, 64503],
      [RS_ASN, 0, 64503],
    ],
    to: { ...all(null), 64502: 1 },
  },
  {
    what: 'RS:101..103:peer: the announcer prepended 1 to 3 times towards that peer',
    prefix: '185.0.7.0/24',
    communities: [
      [RS_ASN, 101, 64502],
      [RS_ASN, 103, 64503],
    ],
    to: { 64502: 2, 64503: 4, 64504: 1 },
  },
  {
    what: 'the highest prepend counts, not their sum',
    prefix: '185.0.8.0/24',
    communities: [
      [RS_ASN, 101, 64502],
      [RS_ASN, 102, 64502],
    ],
    to: { ...all(1), 64502: 3 },
  },
  {
    what: 'no route, no prepend',
    prefix: '185.0.9.0/24',
    communities: [
      [RS_ASN, 0, 64502],
      [RS_ASN, 103, 64502],
    ],
    to: { ...all(1), 64502: null },
  },
  {
    what: "another AS's communities control nothing",
    prefix: '185.0.10.0/24',
    communities: [],
    others: [
      [64999, 0, 0],
      [64999, 103, 64502],
    ],
    to: all(1),
  },
  {
    what: 'a bogon goes nowhere, whatever it carries',
    prefix: '10.1.0.0/16',
    communities: [[RS_ASN, 1, 64502]],
    to: all(null),
  },
];

const text = ([a, b, c]: LargeCommunity) => `(${a}, ${b}, ${c})`;

/** The route server's configuration without sessions, the announcer's routes and a pipe per peer. */
function evaluation(dir: string): string[] {
  const config = birdConfig({ ...ROUTE_SERVER, logFile: path.join(dir, 'bird.log') }, []);
  const route = ({ prefix, communities, others = [] }: Case) =>
    `  route ${prefix} blackhole { bgp_path.prepend(${ANNOUNCER}); ${[...communities, ...others, ...KEPT]
      .map((community) => `bgp_large_community.add(${text(community)});`)
      .join(' ')} };`;
  return [
    config,
    'protocol static announced {',
    '  ipv4;',
    ...CASES.map(route),
    '}',
    ...PEERS.flatMap((peer) => [
      `ipv4 table to_${peer};`,
      `protocol pipe pipe_${peer} {`,
      '  table master4;',
      `  peer table to_${peer};`,
      '  import none;',
      `  export where rs_export(${peer});`,
      '}',
    ]),
  ];
}

describe('export control communities, applied by BIRD', function () {
  this.timeout(30_000);
  let dir: string | undefined;
  let bird: TestBird | undefined;
  /** The routes each peer's table holds, once every pipe has been offered every route. */
  const got = new Map<Peer, ReturnType<typeof shownRoutes>>();

  before(async function () {
    systemTool(this, onPath('bird') && onPath('birdc'), 'bird and birdc (Debian package bird2)');
    dir = mkdtempSync(path.join(tmpdir(), 'bird-export-'));
    bird = await startBird(dir, evaluation(dir));
    for (const peer of PEERS) {
      await eventually(
        `every route offered to the pipe of AS${peer}`,
        async () => {
          const shown = await bird!.birdc(['show', 'protocols', 'all', `pipe_${peer}`]);
          return Number(/Export updates:\s+(\d+)/.exec(shown)?.[1]) === CASES.length ? true : undefined;
        },
        10_000,
      );
      got.set(peer, shownRoutes(await bird.birdc(['show', 'route', 'table', `to_${peer}`, 'all'])));
    }
  });

  after(async () => {
    await bird?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const { what, prefix, to, others = [] } of CASES)
    it(what, () => {
      for (const peer of PEERS) {
        const route = got.get(peer)!.get(prefix);
        const length = to[peer];
        if (length === null) {
          assert.equal(route, undefined, `AS${peer} gets no ${prefix}`);
          continue;
        }
        assert.ok(route, `AS${peer} gets ${prefix}`);
        assert.deepEqual(route.asPath, Array(length).fill(ANNOUNCER), `AS${peer}'s path of ${prefix}`);
        // The control communities go, the others stay.
        const kept = [...others, ...KEPT].map(text).sort();
        assert.deepEqual(route.largeCommunities.sort(), kept, `${prefix} at AS${peer}`);
      }
    });
});
