import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runProgram } from '../../drivers/ovs/program';
import { endProcess } from '../../drivers/processes';

/**
 * BIRD daemons of the tests' own beside the route servers': members' routers (speakers) that
 * announce prefixes to a route server, and what they learned from it, read back route by route.
 */

/** A BIRD the test started: its directory (config, control socket, pid file, log). */
export interface TestBird {
  dir: string;
  /** `birdc` on its control socket: the output. */
  birdc: (args: string[]) => Promise<string>;
  /** Ends it (SIGTERM, then SIGKILL) if it runs. */
  stop: () => Promise<void>;
}

/** Starts BIRD with `config` in `dir` (made if missing), in `namespace` if one is given. */
export async function startBird(
  dir: string,
  config: readonly string[],
  namespace?: string,
): Promise<TestBird> {
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, name);
  writeFileSync(file('bird.conf'), `${config.join('\n')}\n`);
  const bird = ['bird', '-c', file('bird.conf'), '-s', file('bird.ctl'), '-P', file('bird.pid')];
  await (namespace
    ? runProgram('ip', ['netns', 'exec', namespace, ...bird])
    : runProgram(bird[0], bird.slice(1)));
  return {
    dir,
    birdc: async (args) => (await runProgram('birdc', ['-s', file('bird.ctl'), ...args])).stdout,
    stop: async () => {
      const pid = existsSync(file('bird.pid')) ? Number(readFileSync(file('bird.pid'), 'utf8')) : 0;
      if (pid > 0) await endProcess(pid, 5000, 'bird');
    },
  };
}

/** A large community `(global, function, parameter)`. */
export type LargeCommunity = readonly [number, number, number];

/** A prefix a speaker announces, with the large communities it sets and extra copies of its ASN. */
export interface Announcement {
  prefix: string;
  largeCommunities?: readonly LargeCommunity[];
  /** How many times more the speaker's ASN leads the path (to make the path longer). */
  prepend?: number;
}

/** A member's router: an IPv4 BGP session `routeserver` with the route server, announcing routes. */
export interface Speaker extends TestBird {
  asn: number;
  address: string;
  /** `show route protocol routeserver all`: every route it learned from the route server. */
  learned: () => Promise<string>;
}

export interface SpeakerOptions {
  namespace: string;
  dir: string;
  asn: number;
  /** Its address on the exchange LAN (its router id too). */
  address: string;
  routeServer: { address: string; asn: number };
  announce: readonly Announcement[];
}

/** The BIRD configuration of a speaker: its static routes, with their attributes, and the session. */
export function speakerConfig({ dir, asn, address, routeServer, announce }: SpeakerOptions): string[] {
  const route = ({ prefix, largeCommunities = [], prepend = 0 }: Announcement) => {
    const attributes = [
      ...Array.from({ length: prepend }, () => `bgp_path.prepend(${asn});`),
      ...largeCommunities.map((community) => `bgp_large_community.add((${community.join(', ')}));`),
    ];
    return `  route ${prefix} blackhole${attributes.length ? ` { ${attributes.join(' ')} }` : ''};`;
  };
  return [
    `router id ${address};`,
    `log "${dir}/bird.log" all;`,
    'protocol device {}',
    'protocol static announced {',
    '  ipv4;',
    ...announce.map(route),
    '}',
    'protocol bgp routeserver {',
    `  local ${address} as ${asn};`,
    `  neighbor ${routeServer.address} as ${routeServer.asn};`,
    '  connect delay time 1; connect retry time 2; error wait time 1, 4;',
    '  ipv4 { import all; export where proto = "announced"; };',
    '}',
  ];
}

/** Starts a speaker's BIRD in its namespace. */
export async function startSpeaker(options: SpeakerOptions): Promise<Speaker> {
  const bird = await startBird(options.dir, speakerConfig(options), options.namespace);
  return {
    ...bird,
    asn: options.asn,
    address: options.address,
    learned: () => bird.birdc(['show', 'route', 'protocol', 'routeserver', 'all']),
  };
}

/** The lines `birdc show route all` shows for `prefix`: its line and the attributes below it. */
export function routeOf(shown: string, prefix: string): string {
  const lines = shown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`${prefix} `));
  assert.ok(start >= 0, `no ${prefix} in\n${shown}`);
  const end = lines.findIndex((line, index) => index > start && /^\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** A route as `birdc show route all` shows it: where it leads, its AS path and large communities. */
export interface ShownRoute {
  prefix: string;
  /** The next hop (`via …`), or null for one without (a blackhole). */
  via: string | null;
  asPath: number[];
  largeCommunities: string[];
}

/** Every route of `birdc show route all` output, by prefix (the first route shown of each). */
export function shownRoutes(shown: string): Map<string, ShownRoute> {
  const routes = new Map<string, ShownRoute>();
  for (const match of shown.matchAll(/^(\S+\/\d+)\s/gm)) {
    const prefix = match[1];
    if (routes.has(prefix)) continue;
    const text = routeOf(shown, prefix);
    const path = /BGP\.as_path:(.*)$/m.exec(text)?.[1].trim() ?? '';
    routes.set(prefix, {
      prefix,
      via: /\bvia (\S+)/.exec(text)?.[1] ?? null,
      asPath: path ? path.split(/\s+/).map(Number) : [],
      largeCommunities: [...(/BGP\.large_community:(.*)$/m.exec(text)?.[1] ?? '').matchAll(/\([^)]*\)/g)].map(
        ([community]) => community,
      ),
    });
  }
  return routes;
}

/** A pattern of the large-community line of a route that holds `community` (`(a, b, c)`). */
export const communityLine = (community: string) =>
  new RegExp(`BGP\\.large_community: .*${community.replace(/[()]/g, '\\$&')}`);
