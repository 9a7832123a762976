import { isIP } from 'node:net';
import { DriverError } from '../contract';

/**
 * RPKI origin validation (RFC 6811) in a route server's BIRD 2 configuration: a `protocol rpki` per
 * validator cache filling two ROA tables over RTR (RFC 8210), and `rs_rpki()`, which the import
 * filter of every member session calls: an invalid origin is dropped, a valid or unknown one is
 * tagged with an informational large community of the route server (docs/route-servers.md).
 */

/** A validator cache BIRD fetches validated ROA payloads from. */
export interface RpkiCache {
  /** An IPv4 or IPv6 address, or a DNS name. */
  host: string;
  port: number;
}

/**
 * The RTR timers, in seconds: RFC 8210's defaults (section 6). A cache may send its own in its End
 * of Data PDU, and BIRD then follows the cache's.
 */
export const RTR_TIMERS = { refresh: 3600, retry: 600, expire: 7200 } as const;

/** BIRD's ROA tables (`roa4`, `roa6` are keywords in BIRD's grammar, so not names). */
export const ROA_TABLES = { v4: 'roa_v4', v6: 'roa_v6' } as const;

/**
 * The large communities `RS_ASN:1000:<n>` the route server puts on what it accepts, in the
 * Euro-IX informational range (1000 to 1999): RPKI valid and RPKI not found. Members' own
 * communities of that function are removed on import (drivers/bird/filters.ts), with RPKI or
 * without, so that only the route server sets them.
 */
export const RPKI_COMMUNITY_FUNCTION = 1000;
export const RPKI_COMMUNITIES = { valid: 1, notFound: 2 } as const;

/** BIRD's name of the `protocol rpki` of the cache at `index` (in RPKI_RTR's order). */
export const rpkiProtocolName = (index: number): string => `rpki_${index + 1}`;

const DNS_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

/** The `remote` of a cache: an address as it is, a DNS name as a string (BIRD resolves it). */
function remote({ host, port }: RpkiCache): string {
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new DriverError('invalid-config', `RPKI cache ${host}: port ${port} is not 1 to 65535`);
  if (isIP(host)) return `remote ${host} port ${port};`;
  if (!DNS_NAME.test(host))
    throw new DriverError(
      'invalid-config',
      `RPKI cache ${JSON.stringify(host)} is neither an address nor a DNS name`,
    );
  return `remote "${host}" port ${port};`;
}

/** The ROA tables, one `protocol rpki` per cache and `rs_rpki()`; nothing without caches. */
export function rpkiDefinitions(asn: number, caches: readonly RpkiCache[]): string[] {
  if (!caches.length) return [];
  const { v4, v6 } = ROA_TABLES;
  const { refresh, retry, expire } = RTR_TIMERS;
  const tag = (n: number) => `bgp_large_community.add((${asn}, ${RPKI_COMMUNITY_FUNCTION}, ${n}));`;
  const check = (table: string) => [
    `    case roa_check(${table}, net, bgp_path.last) {`,
    '      ROA_INVALID: return false;',
    `      ROA_VALID: ${tag(RPKI_COMMUNITIES.valid)}`,
    `      else: ${tag(RPKI_COMMUNITIES.notFound)}`,
    '    }',
  ];
  const lines = [
    '# RPKI: validated ROA payloads from the validator caches over RTR, into these ROA tables.',
    `roa4 table ${v4};`,
    `roa6 table ${v6};`,
  ];
  caches.forEach((cache, index) =>
    lines.push(
      '',
      `protocol rpki ${rpkiProtocolName(index)} {`,
      `  roa4 { table ${v4}; };`,
      `  roa6 { table ${v6}; };`,
      `  ${remote(cache)}`,
      `  refresh ${refresh};`,
      `  retry ${retry};`,
      `  expire ${expire};`,
      '}',
    ),
  );
  lines.push(
    '',
    "# The route's origin (the last AS of its path) checked against the ROAs: an invalid one is",
    `# dropped; valid is tagged (${asn}, ${RPKI_COMMUNITY_FUNCTION}, ${RPKI_COMMUNITIES.valid}), not found (${asn}, ${RPKI_COMMUNITY_FUNCTION}, ${RPKI_COMMUNITIES.notFound}); rs_import takes members' own off first.`,
    'function rs_rpki()',
    '{',
    '  if net.type = NET_IP4 then {',
    ...check(v4),
    '  } else {',
    ...check(v6),
    '  }',
    '  return true;',
    '}',
  );
  return lines;
}
