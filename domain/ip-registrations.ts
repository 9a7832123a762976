import type { PropertyError } from './errors';
import { validityProblems } from './validity';
import type { IpPrefix } from './ip-addresses';
import { formatAddress, parseAddress, prefixContains } from './ip-addresses';

/** What a request says of an IP address. */
export type IpInput = {
  managing_account: string;
  consuming_account: string;
  external_ref: string | null;
  version: number;
  address: string;
  prefix_length: number;
  fqdn: string | null;
  valid_not_before: string | null;
  valid_not_after: string | null;
};

/** What the exchange decides of an address it allocated; its holder sets only the rest. */
export const EXCHANGE_SET = [
  'managing_account',
  'consuming_account',
  'version',
  'address',
  'prefix_length',
] as const satisfies ReadonlyArray<keyof IpInput>;

/**
 * What the holder of an address the exchange allocated tried to change of what the exchange decides
 * (`EXCHANGE_SET`), by property: only fqdn, the validity window and external_ref are the holder's.
 */
export function exchangeSetProblems(
  next: IpInput,
  current: Pick<IpInput, (typeof EXCHANGE_SET)[number]>,
): PropertyError[] {
  return EXCHANGE_SET.filter((name) =>
    name === 'address'
      ? canonicalAddress(String(next.address)) !== current.address
      : next[name] !== current[name],
  ).map((name) => ({
    name,
    reason: 'the exchange allocated this address; only fqdn, the validity window and external_ref change',
  }));
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

/** The canonical spelling of an address, or the text as given when it is not an address. */
export function canonicalAddress(text: string): string {
  const parsed = parseAddress(text.trim());
  return parsed ? formatAddress(parsed.version, parsed.value) : text;
}

/**
 * Everything wrong with an IP address as a request would leave it, by property: an address of
 * the version given, a prefix length that fits it, a host name for `fqdn`, a validity window that
 * ends in the future and after it begins, and (for addresses customers register) none of the
 * exchange's own subnets, whose addresses only the exchange hands out.
 */
export function ipProblems(
  input: IpInput,
  now: Date,
  exchangeSubnets: readonly IpPrefix[] = [],
): PropertyError[] {
  const problems: PropertyError[] = [];
  const parsed = parseAddress(input.address.trim());
  if (!parsed) problems.push({ name: 'address', reason: `${input.address} is not an IPv4 or IPv6 address` });
  else if (parsed.version !== input.version)
    problems.push({ name: 'version', reason: `${input.address} is an IPv${parsed.version} address` });
  else {
    if (input.prefix_length > (parsed.version === 4 ? 32 : 128))
      problems.push({
        name: 'prefix_length',
        reason: `an IPv${parsed.version} prefix is at most /${parsed.version === 4 ? 32 : 128}`,
      });
    const inside = exchangeSubnets.find((prefix) => prefixContains(prefix, parsed.version, parsed.value));
    if (inside)
      problems.push({
        name: 'address',
        reason: `${input.address} is in a subnet of the exchange (${formatAddress(inside.version, inside.network)}/${inside.length}); the exchange allocates those with network service configs`,
      });
  }
  if (input.fqdn !== null) {
    const name = input.fqdn.replace(/\.$/, '');
    if (!name.includes('.') || !name.split('.').every((label) => LABEL.test(label)))
      problems.push({ name: 'fqdn', reason: `${input.fqdn} is not a fully qualified host name` });
  }
  return [...problems, ...validityProblems(input, now)];
}
