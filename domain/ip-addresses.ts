/**
 * IP address maths for allocating host addresses from a service's subnets: addresses as big
 * integers, prefixes, and the canonical text forms (dotted quad; IPv6 in the RFC 5952 form, lower
 * case with the longest run of zero groups shortened).
 */

export type IpVersion = 4 | 6;

export interface IpPrefix {
  version: IpVersion;
  /** The network address (host bits zero). */
  network: bigint;
  length: number;
}

const BITS: Record<IpVersion, number> = { 4: 32, 6: 128 };

function parseV4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseV6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (half: string): number[] | null => {
    if (half === '') return [];
    const groups: number[] = [];
    const parts = half.split(':');
    for (const [index, part] of parts.entries()) {
      // An embedded IPv4 address may end the text.
      if (part.includes('.') && index === parts.length - 1) {
        const v4 = parseV4(part);
        if (v4 === null) return null;
        groups.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(part)) groups.push(Number.parseInt(part, 16));
      else return null;
    }
    return groups;
  };
  const head = groupsOf(halves[0]);
  const tail = halves.length === 2 ? groupsOf(halves[1]) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

/** The IPv6 prefix ::ffff:0:0/96 that maps IPv4 addresses into IPv6 (RFC 4291 §2.5.5.2). */
const V4_MAPPED = 0xffffn;

/**
 * An address in either family, or null when `text` is not one. An IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`) is the IPv4 address it maps: written either way, it is one address, inside
 * or outside the same subnets.
 */
export function parseAddress(text: string): { version: IpVersion; value: bigint } | null {
  const v4 = parseV4(text);
  if (v4 !== null) return { version: 4, value: v4 };
  const v6 = text.includes(':') ? parseV6(text) : null;
  if (v6 === null) return null;
  if (v6 >> 32n === V4_MAPPED) return { version: 4, value: v6 & 0xffffffffn };
  return { version: 6, value: v6 };
}

/** The canonical text of an address. */
export function formatAddress(version: IpVersion, value: bigint): string {
  if (version === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const groups = [...Array(8).keys()].map((i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups (the first of equals) becomes `::`.
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > best.length) best = { start: i, length: j - i };
    i = j;
  }
  const hex = (list: number[]) => list.map((group) => group.toString(16)).join(':');
  if (best.start < 0) return hex(groups);
  return `${hex(groups.slice(0, best.start))}::${hex(groups.slice(best.start + best.length))}`;
}

/** A prefix such as `192.0.2.0/24` or `2001:db8::/64`; null when malformed or host bits are set. */
export function parsePrefix(text: string): IpPrefix | null {
  const [address, lengthText, ...rest] = text.split('/');
  if (rest.length || lengthText === undefined || !/^[0-9]{1,3}$/.test(lengthText)) return null;
  const parsed = parseAddress(address);
  if (!parsed) return null;
  const length = Number(lengthText);
  if (length > BITS[parsed.version]) return null;
  const hostBits = BigInt(BITS[parsed.version] - length);
  if (parsed.value & ((1n << hostBits) - 1n)) return null;
  return { version: parsed.version, network: parsed.value, length };
}

/** Whether `value` lies within `prefix`. */
export function prefixContains(prefix: IpPrefix, version: IpVersion, value: bigint): boolean {
  if (version !== prefix.version) return false;
  const hostBits = BigInt(BITS[prefix.version] - prefix.length);
  return value >> hostBits === prefix.network >> hostBits;
}

/**
 * The lowest host address of `prefix` that `taken` does not hold, or null when the subnet is full.
 * The network address is never a host's; in IPv4 neither is the broadcast address (except in the
 * point-to-point /31 and /32), and in IPv6 the all-zero host is the subnet-router anycast address.
 */
export function firstFreeHost(prefix: IpPrefix, taken: ReadonlySet<bigint>): bigint | null {
  const size = 1n << BigInt(BITS[prefix.version] - prefix.length);
  const pointToPoint = prefix.version === 4 && prefix.length >= 31;
  const first = pointToPoint ? prefix.network : prefix.network + 1n;
  const last = prefix.network + size - (pointToPoint || prefix.version === 6 ? 1n : 2n);
  for (let candidate = first; candidate <= last; candidate += 1n) {
    if (!taken.has(candidate)) return candidate;
  }
  return null;
}
