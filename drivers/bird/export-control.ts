/**
 * What a route server passes on to each member: every member gets a path of its own per prefix
 * (no path hiding, RFC 7947 section 2.3.2.1), and the member announcing a route says, with BGP
 * large communities (RFC 8092) of the route server's ASN, to whom it goes and how long its path
 * looks there. docs/route-servers.md lists the communities.
 *
 * Path hiding: all sessions share BIRD's master tables, which are `sorted` (each prefix's routes
 * kept best first), and every session's channel is `secondary on`: where the session's export
 * filter refuses the best route of a prefix, BIRD offers it the next one, until one is accepted or
 * none is left. A member whose export refuses the best path thus learns the next best one it may
 * have, without a table per member.
 */

/**
 * The second field of the control communities `(RS_ASN, function, peer AS)` a member sets on the
 * routes it announces. `peer AS` 0 stands for every member, with `DO_NOT_ANNOUNCE` only.
 */
export const CONTROL = {
  /** `(RS_ASN, 0, peer)`: not to that peer; `(RS_ASN, 0, 0)`: to no one but those announced to. */
  doNotAnnounce: 0,
  /** `(RS_ASN, 1, peer)`: to that peer despite `(RS_ASN, 0, 0)`; alone, it changes nothing. */
  announce: 1,
  /** `(RS_ASN, 101 | 102 | 103, peer)`: the announcer's ASN prepended once, twice, three times. */
  prepend: [101, 102, 103],
} as const;

/** The "every member" of `(RS_ASN, 0, 0)`. */
export const ALL_PEERS = 0;

/** The master tables, sorted, which `secondary on` needs (declared before anything uses them). */
export const sortedTables = (): string[] => [
  "# The master tables keep every prefix's routes sorted best first, so that a session whose",
  '# export refuses the best path is offered the next one (secondary on): no path hiding.',
  'ipv4 table master4 sorted;',
  'ipv6 table master6 sorted;',
];

/** The export lines of the channel of a session with the member of `peerAsn`. */
export const exportChannel = (peerAsn: number): string[] => [
  `export where rs_export(${peerAsn});`,
  'secondary on;',
];

/**
 * `rs_export(peer_asn)`: whether a route goes to the member of `peer_asn`, and how. Not when it is
 * not sane, nor when it carries `(RS_ASN, 0, peer_asn)`, nor when it carries `(RS_ASN, 0, 0)`
 * without `(RS_ASN, 1, peer_asn)`; `(RS_ASN, 0, peer_asn)` wins over `(RS_ASN, 1, peer_asn)`.
 * Where it goes, the announcer's ASN (the path's first, as the import made sure) is prepended as
 * often as the highest of `(RS_ASN, 101..103, peer_asn)` says, and every control community of the
 * route server is taken off; its other communities (the RPKI tags) stay.
 */
export function exportFilter(asn: number): string[] {
  const carries = (fn: number, peer: number | string) => `(${asn}, ${fn}, ${peer}) ~ bgp_large_community`;
  const { doNotAnnounce, announce, prepend } = CONTROL;
  const prepends = [...prepend]
    .reverse()
    .flatMap((fn, index) => [
      `  ${index ? '} else if' : 'if'} ${carries(fn, 'peer_asn')} then {`,
      ...Array.from({ length: prepend.length - index }, () => '    bgp_path.prepend(bgp_path.first);'),
    ]);
  const controls = [doNotAnnounce, announce].map((fn) => `(${asn}, ${fn}, *)`);
  controls.push(`(${asn}, ${prepend[0]}..${prepend[prepend.length - 1]}, *)`);
  return [
    `# What the route server passes on to the member of AS peer_asn: sane routes, unless their`,
    `# announcer said otherwise: (${asn}, 0, peer) not to that peer, (${asn}, 0, 0) to no one but the`,
    `# peers of (${asn}, 1, peer); (${asn}, 0, peer) wins over (${asn}, 1, peer), which alone changes`,
    `# nothing. (${asn}, 101..103, peer) prepends the announcer's ASN 1 to 3 times towards that peer`,
    '# (the highest counts). These control communities go no further; the others stay.',
    'function rs_export(int peer_asn)',
    '{',
    '  if !rs_sane() then return false;',
    `  if ${carries(doNotAnnounce, 'peer_asn')} then return false;`,
    `  if ${carries(doNotAnnounce, ALL_PEERS)} && !(${carries(announce, 'peer_asn')}) then return false;`,
    ...prepends,
    '  }',
    `  bgp_large_community.delete([${controls.join(', ')}]);`,
    '  return true;',
    '}',
  ];
}
