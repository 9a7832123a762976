import type { DeclaredFamily } from './declared-family';
import type { PropertyError } from './errors';
import { validityProblems } from './validity';

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
  return [...problems, ...validityProblems(input, now)];
}

/** A MAC registration is made and deleted, never changed: a new window is a new registration. */
export const MAC_WRITES = ['create', 'destroy'] as const;

const INSTANT = { type: 'string', format: 'date-time', maxLength: 40, nullable: true };

/**
 * MAC address registrations, owned (the managing side registers and deletes, the consuming side
 * reads): never changed (a new validity window is a new registration), registered once per
 * consuming account, counted against the quota of the managing account's tree, and kept while a
 * live network service config lets them through.
 */
export const MAC_FAMILY: DeclaredFamily<MacInput & Record<string, unknown>> = {
  resource: 'mac',
  collection: 'macs',
  table: 'macs',
  title: { schema: 'MacAddress', noun: 'MAC address' },
  standard: true,
  properties: {
    external_ref: { schema: { type: 'string', maxLength: 128, nullable: true }, filter: true },
    address: {
      schema: { type: 'string', pattern: '^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$', maxLength: 17 },
      required: true,
      filter: true,
      normalise: normaliseMac,
    },
    valid_not_before: { schema: INSTANT, filter: 'window-start' },
    valid_not_after: { schema: INSTANT, filter: 'window-end' },
  },
  visibility: 'owned',
  writes: MAC_WRITES,
  problems: (input, { now }) => macProblems(input, now),
  quota: 'macs',
  unique: {
    property: 'address',
    within: 'consuming_account',
    taken: (address) => `${address} is registered for this account already`,
  },
  heldBy: {
    filter: 'network_service_config',
    link: { table: 'network_service_config_macs', held: 'mac', holder: 'network_service_config' },
    holders: { table: 'network_service_configs', collection: 'network-service-configs', property: 'macs' },
    // Only live configs hold on to their MACs: one whose configs are all going may be deleted (it
    // leaves their lists at once; their devices keep it until they are decommissioned).
    inUse: (mac, configs) => {
      const them = configs.length > 1 ? 'them' : 'it';
      return `${mac.address} is in use on ${configs.join(', ')}; take it off ${them} (change its macs) or decommission ${them} first`;
    },
  },
};
