import type { PropertyError } from './errors';

/** What a request says of a MAC address. */
export interface MacInput {
  address: string;
  valid_not_before: string | null;
  valid_not_after: string | null;
}

/** The one spelling a MAC address is stored and compared in: lower-case hex, colon-separated. */
export const normaliseMac = (address: string): string => address.trim().toLowerCase();

/**
 * Everything wrong with a MAC address registration, by property: the address must be one a port
 * can send from (unicast, not all zeros), and the validity window must end in the future and after
 * it begins.
 */
export function macProblems(input: MacInput, now: Date): PropertyError[] {
  const problems: PropertyError[] = [];
  const address = normaliseMac(input.address);
  const firstOctet = Number.parseInt(address.slice(0, 2), 16);
  if (firstOctet % 2 === 1)
    problems.push({
      name: 'address',
      reason: 'a multicast (or broadcast) address cannot be registered; use a unicast one',
    });
  else if (/^00(:00){5}$/.test(address))
    problems.push({ name: 'address', reason: 'the all-zero address is not a station address' });
  const before = input.valid_not_before === null ? null : Date.parse(input.valid_not_before);
  const after = input.valid_not_after === null ? null : Date.parse(input.valid_not_after);
  if (after !== null && after <= now.getTime())
    problems.push({ name: 'valid_not_after', reason: 'must be in the future' });
  else if (after !== null && before !== null && after <= before)
    problems.push({ name: 'valid_not_after', reason: 'must be after valid_not_before' });
  return problems;
}
