import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { BgpSession } from '../contract';
import { DriverError } from '../contract';
import { exportChannel, exportFilter, sortedTables } from './export-control';
import { importFilters } from './filters';
import type { RpkiCache } from './rpki';
import { rpkiDefinitions } from './rpki';

/**
 * BIRD 2 configurations of route servers, generated from the route server's own settings and its
 * BGP sessions. Pure: the same settings and sessions always give the same text (sessions in name
 * order, no timestamps), so that two configurations diff meaningfully. docs/route-servers.md shows
 * a generated configuration and says how each session property maps onto it.
 */

/** What BIRD does when a member announces more prefixes than its session's `maxPrefix`. */
export type MaxPrefixAction = 'restart' | 'block' | 'disable' | 'warn';

/** The route server's own settings: what its configuration needs beside the sessions. */
export interface RouteServerSettings {
  /** The route server's device name (its network feature's). */
  name: string;
  /** The route server's ASN (the exchange's). */
  asn: number;
  /** BIRD's router id: an IPv4 address, usually the route server's IPv4 address on the LAN. */
  routerId: string;
  /** The route server's addresses on the exchange LAN; a session needs one of its family. */
  ipv4: string | null;
  ipv6: string | null;
  /** What exceeding `maxPrefix` does (default `restart`: the session is torn down and reopened). */
  maxPrefixAction?: MaxPrefixAction;
  /**
   * Whether the documentation prefixes (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
   * 2001:db8::/32) count as bogons (default true). Labs whose members announce them turn it off.
   */
  rejectDocumentationPrefixes?: boolean;
  /**
   * The RPKI validator caches whose ROAs every member session's import is checked against (none
   * by default: no origin validation).
   */
  rpkiCaches?: readonly RpkiCache[];
  /** The file BIRD logs to, or null for BIRD's default (syslog). */
  logFile?: string | null;
}

/** The marker of the comment line that holds a session as JSON, read back by `sessionsOfConfig`. */
const SESSION_MARK = '# ixapi-session ';
/** Longest symbol BIRD 2 takes, with room to spare (BIRD refuses 66 characters). */
const MAX_SYMBOL = 60;
const PREFIX = 's_';

const invalid = (message: string): never => {
  throw new DriverError('invalid-config', message);
};

/**
 * The BIRD protocol name of a session: `s_` and the session name with every character BIRD's
 * identifiers do not allow (anything but letters, digits and `_`) replaced by `_`. Where that
 * changed the name, or it would be too long, the first 8 hexadecimal digits of the SHA-256 of the
 * session name follow, so that two names never meet in one protocol name: `nfc-7m2k` becomes
 * `s_nfc_7m2k_<hash>`, `rs_1` stays `s_rs_1`. The `s_` keeps names off BIRD's keywords and hex
 * literals.
 */
export function protocolName(sessionName: string): string {
  const plain = sessionName.replace(/[^A-Za-z0-9_]/g, '_');
  const name = PREFIX + plain;
  if (plain === sessionName && name.length <= MAX_SYMBOL) return name;
  const hash = createHash('sha256').update(sessionName, 'utf8').digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_SYMBOL - 9)}_${hash}`;
}

/**
 * A string as a BIRD 2 string literal. BIRD's strings know no escapes: a literal runs from one
 * double quote to the next on the same line, and every character between stands for itself. A
 * double quote, a line break or another control character cannot be written in one and is refused.
 */
export function birdString(text: string, what: string): string {
  // eslint-disable-next-line no-control-regex
  if (/["\u0000-\u001f\u007f]/.test(text))
    invalid(`${what} holds a double quote or a control character, which a BIRD string cannot hold`);
  return `"${text}"`;
}

/** Text for a comment: one line, no control characters. */
// eslint-disable-next-line no-control-regex
const commentText = (text: string): string => text.replace(/[\u0000-\u001f\u007f]/g, '?');

const checkAsn = (asn: number, what: string): void => {
  if (!Number.isInteger(asn) || asn < 1 || asn > 4294967294) invalid(`${what} ${asn} is not an ASN`);
};

const family = (address: string): 4 | 6 => {
  const version = isIP(address);
  if (version !== 4 && version !== 6) return invalid(`${JSON.stringify(address)} is not an IP address`);
  return version;
};

const rpkiOn = (settings: RouteServerSettings): boolean => (settings.rpkiCaches?.length ?? 0) > 0;

/** The filters every session shares: sanity, the member's checks on import, export control. */
const filters = (settings: RouteServerSettings): string[] => [
  ...importFilters({
    asn: settings.asn,
    rejectDocumentationPrefixes: settings.rejectDocumentationPrefixes ?? true,
    rpki: rpkiOn(settings),
  }),
  '',
  ...exportFilter(settings.asn),
];

/** One session's `protocol bgp`. */
function protocol(settings: RouteServerSettings, session: BgpSession): string[] {
  const name = protocolName(session.name);
  const where = `BGP session ${session.name}`;
  checkAsn(session.peerAsn, `${where}: peer ASN`);
  const version = family(session.peerAddress);
  const local = version === 4 ? settings.ipv4 : settings.ipv6;
  if (!local)
    invalid(
      `${where}: the route server ${settings.name} has no IPv${version} address for peer ${session.peerAddress}`,
    );
  const action = settings.maxPrefixAction ?? 'restart';
  const lines = [
    `# session ${commentText(session.name)}: AS${session.peerAsn} at ${session.peerAddress}`,
    `# AS-SET: ${session.asSet === null ? 'none' : commentText(session.asSet)}${
      session.asSet === null
        ? ''
        : ' (not expanded: IRR data needs network access the service does not have; imports are checked for bogons, first AS and next hop)'
    }`,
    `# flags: ${session.flags.length ? [...session.flags].sort().map(commentText).join(', ') : 'none'}`,
    `# ${session.insertIxpAsn ? `AS${settings.asn} inserted into the AS paths passed on (no rs client)` : `transparent (rs client): AS${settings.asn} left out of the AS paths passed on`}`,
    `${SESSION_MARK}${JSON.stringify({ ...session, flags: [...session.flags].sort() })}`,
    `protocol bgp ${name} {`,
    `  description ${birdString(`${session.name} AS${session.peerAsn}`, `${where}: its name`)};`,
    `  local ${local} as ${settings.asn};`,
    `  neighbor ${session.peerAddress} as ${session.peerAsn};`,
  ];
  if (!session.insertIxpAsn) lines.push('  rs client;');
  if (session.passive) lines.push('  passive on;');
  if (session.password !== null)
    lines.push(`  password ${birdString(session.password, `${where}: the password`)};`);
  lines.push(`  ipv${version} {`);
  if (session.maxPrefix === 0) lines.push('    # max prefix 0: nothing is accepted', '    import none;');
  else {
    if (session.maxPrefix !== null) lines.push(`    import limit ${session.maxPrefix} action ${action};`);
    // The routes as received, kept so that BIRD checks them again when the ROAs change.
    if (rpkiOn(settings)) lines.push('    import table on;');
    lines.push(`    import where rs_import(${session.peerAsn});`);
  }
  lines.push(
    ...exportChannel(session.peerAsn).map((line) => `    ${line}`),
    '    next hop keep;',
    '  };',
    '}',
  );
  return lines;
}

/** The complete BIRD 2 configuration of a route server holding `sessions`. */
export function birdConfig(settings: RouteServerSettings, sessions: readonly BgpSession[]): string {
  checkAsn(settings.asn, `route server ${settings.name}: ASN`);
  if (family(settings.routerId) !== 4) invalid(`route server ${settings.name}: router id is not IPv4`);
  if (settings.ipv4 !== null && family(settings.ipv4) !== 4)
    invalid(`route server ${settings.name}: ${settings.ipv4} is not an IPv4 address`);
  if (settings.ipv6 !== null && family(settings.ipv6) !== 6)
    invalid(`route server ${settings.name}: ${settings.ipv6} is not an IPv6 address`);
  const sorted = [...sessions].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  const names = new Map<string, string>();
  for (const session of sorted) {
    const name = protocolName(session.name);
    const other = names.get(name);
    if (other !== undefined)
      invalid(`BGP sessions ${other} and ${session.name} would both be BIRD protocol ${name}`);
    names.set(name, session.name);
  }
  const lines = [
    `# BIRD 2 configuration of route server ${commentText(settings.name)} (AS${settings.asn}),`,
    '# generated by ixapi-provisioning from its BGP sessions: every commit rewrites it whole.',
    `# Sessions: ${sorted.length}, in name order.`,
    '',
    `router id ${settings.routerId};`,
  ];
  if (settings.logFile) lines.push(`log ${birdString(settings.logFile, 'the log file')} all;`);
  lines.push(
    '',
    ...sortedTables(),
    '',
    '# Interfaces, so that BGP finds its directly connected neighbours.',
    'protocol device {',
    '}',
    '',
  );
  const rpki = rpkiDefinitions(settings.asn, settings.rpkiCaches ?? []);
  if (rpki.length) lines.push(...rpki, '');
  lines.push(...filters(settings));
  for (const session of sorted) lines.push('', ...protocol(settings, session));
  return `${lines.join('\n')}\n`;
}

/** The sessions a generated configuration holds, in name order (read from their comment lines). */
export function sessionsOfConfig(config: string): BgpSession[] {
  const sessions: BgpSession[] = [];
  for (const line of config.split('\n'))
    if (line.startsWith(SESSION_MARK))
      sessions.push(JSON.parse(line.slice(SESSION_MARK.length)) as BgpSession);
  return sessions.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}
