/**
 * What may cross a route server at all, in BIRD 2's filter language: the bogons, `rs_sane()` (the
 * checks both ways share) and `rs_import(peer_asn)`, the import filter of every member session.
 * What is passed on to each member is drivers/bird/export-control.ts's.
 */

import { RPKI_COMMUNITY_FUNCTION } from './rpki';

/** What the filters need of the route server's settings. */
export interface FilterOptions {
  /** The route server's ASN: no imported path may hold it. */
  asn: number;
  /** Whether the documentation prefixes count as bogons. */
  rejectDocumentationPrefixes: boolean;
  /** Whether `rs_rpki()` (drivers/bird/rpki.ts) is defined, for the import to check origins. */
  rpki: boolean;
}

const DEFAULT_V4 = '0.0.0.0/0';
const DEFAULT_V6 = '::/0';
/** Addresses no member may announce (RFC 6890 special-purpose, RFC 1918, multicast, reserved). */
export const BOGONS_V4 = [
  '0.0.0.0/8+',
  '10.0.0.0/8+',
  '100.64.0.0/10+',
  '127.0.0.0/8+',
  '169.254.0.0/16+',
  '172.16.0.0/12+',
  '192.0.0.0/24+',
  '192.168.0.0/16+',
  '198.18.0.0/15+',
  '224.0.0.0/4+',
  '240.0.0.0/4+',
];
export const BOGONS_V6 = [
  '::/8+',
  '0100::/64+',
  '2001:2::/48+',
  '2001:10::/28+',
  'fc00::/7+',
  'fe80::/10+',
  'fec0::/10+',
  'ff00::/8+',
];
export const DOCUMENTATION_V4 = ['192.0.2.0/24+', '198.51.100.0/24+', '203.0.113.0/24+'];
export const DOCUMENTATION_V6 = ['2001:db8::/32+', '3fff::/20+'];

const prefixSet = (prefixes: readonly string[]): string =>
  `[\n${prefixes.map((prefix) => `  ${prefix}`).join(',\n')}\n]`;

/** The bogon sets, `rs_sane()` and `rs_import(peer_asn)`. */
export function importFilters({ asn, rejectDocumentationPrefixes, rpki }: FilterOptions): string[] {
  const documentation = rejectDocumentationPrefixes;
  const v4 = [...BOGONS_V4, ...(documentation ? DOCUMENTATION_V4 : [])];
  const v6 = [...BOGONS_V6, ...(documentation ? DOCUMENTATION_V6 : [])];
  return [
    `# Bogons: special-purpose, private, multicast and reserved ranges${documentation ? ', and the documentation prefixes' : ''}.`,
    `define BOGONS_V4 = ${prefixSet(v4)};`,
    `define BOGONS_V6 = ${prefixSet(v6)};`,
    '',
    '# Whether a route may cross the route server at all: no default route, no bogon, no prefix',
    '# longer than /24 (IPv4) or /48 (IPv6) or shorter than /8 (IPv4) or /16 (IPv6), IPv6 only',
    '# from global unicast (2000::/3), an AS path of at most 64 ASNs.',
    'function rs_sane()',
    '{',
    '  if net.type = NET_IP4 then {',
    `    if net = ${DEFAULT_V4} then return false;`,
    '    if net ~ BOGONS_V4 then return false;',
    '    if net.len > 24 || net.len < 8 then return false;',
    '  } else {',
    `    if net = ${DEFAULT_V6} then return false;`,
    '    if net ~ BOGONS_V6 then return false;',
    '    if !(net ~ [ 2000::/3+ ]) then return false;',
    '    if net.len > 48 || net.len < 16 then return false;',
    '  }',
    '  if bgp_path.len > 64 then return false;',
    '  return true;',
    '}',
    '',
    "# What a member's router may announce: sane routes whose AS path starts with the member's ASN",
    "# and does not hold the route server's, with the member's address as next hop.",
    ...(rpki ? ['# Nor may its origin be RPKI-invalid (rs_rpki tags the others).'] : []),
    'function rs_import(int peer_asn)',
    '{',
    '  if !rs_sane() then return false;',
    '  if bgp_path.first != peer_asn then return false;',
    `  if bgp_path ~ [= * ${asn} * =] then return false;`,
    '  if bgp_next_hop != from then return false;',
    '  # Only the route server sets its informational communities (function 1000).',
    `  bgp_large_community.delete([(${asn}, ${RPKI_COMMUNITY_FUNCTION}, *)]);`,
    ...(rpki ? ['  if !rs_rpki() then return false;'] : []),
    '  return true;',
    '}',
  ];
}
