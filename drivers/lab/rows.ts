import type { BgpSession, InterfaceState, LagConfig, ServiceAttachment } from '../contract';
import { octetsBetween, trafficProfile } from './traffic';

export interface InterfaceRow {
  name: string;
  description: string;
  enabled: number | boolean;
  speed: number;
  lag: string | null;
  rx_dbm: number;
  tx_dbm: number;
  /** Since when the interface carries traffic (it is enabled), or null. */
  traffic_since: Date | string | null;
  /** Octets carried before `traffic_since` (DECIMAL, read as text). */
  octets_in: string | number;
  octets_out: string | number;
}

export interface LagRow {
  name: string;
  description: string;
  mode: string;
  lacp_timeout: string | null;
  members: string;
}

export interface ServiceRow {
  name: string;
  description: string;
  parent: string;
  vlan_type: string;
  outer_vlan: number | null;
  inner_vlan: number | null;
  /** JSON: the MAC list, or `{ macs, macFilter }` (see `storedMacs`). */
  macs: string;
  rate_limit: number | string | null;
  segment: string;
  isolated: number | boolean;
}

export interface BgpSessionRow {
  name: string;
  peer_asn: number | string;
  peer_address: string;
  passive: number | boolean;
  password: string | null;
  as_set: string | null;
  max_prefix: number | string | null;
  insert_ixp_asn: number | boolean;
  flags: string;
}

export const toInterface = (row: InterfaceRow): InterfaceState => ({
  name: row.name,
  description: row.description,
  enabled: Boolean(row.enabled),
  speed: Number(row.speed),
  lag: row.lag,
  // The lab's far sides always answer: a link is up when it is enabled.
  operUp: Boolean(row.enabled),
});

export const toLag = (row: LagRow): LagConfig => ({
  name: row.name,
  description: row.description,
  mode: row.mode as LagConfig['mode'],
  lacpTimeout: row.lacp_timeout as LagConfig['lacpTimeout'],
  members: JSON.parse(row.members) as string[],
});

const numberOrNull = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

/**
 * What the `macs` column holds of a service: its MACs and whether they filter even when there are
 * none, as one JSON object, so that the flag needs no column of its own.
 */
export const storedMacs = (service: Pick<ServiceAttachment, 'macs' | 'macFilter'>): string =>
  // Commits recorded before the flag hold services without it; rolling them back keeps their meaning.
  JSON.stringify({ macs: service.macs, macFilter: service.macFilter ?? false });

/**
 * A service's MACs and filter from its `macs` column. Rows written before the flag hold the bare
 * list, which filtered only when it was not empty: they read as `macFilter` false, as committed.
 */
function macsOf(column: string): Pick<ServiceAttachment, 'macs' | 'macFilter'> {
  const stored = JSON.parse(column) as string[] | Pick<ServiceAttachment, 'macs' | 'macFilter'>;
  return Array.isArray(stored) ? { macs: stored, macFilter: false } : stored;
}

export const toService = (row: ServiceRow): ServiceAttachment => ({
  name: row.name,
  description: row.description,
  parent: row.parent,
  vlanType: row.vlan_type as ServiceAttachment['vlanType'],
  outerVlan: numberOrNull(row.outer_vlan),
  innerVlan: numberOrNull(row.inner_vlan),
  ...macsOf(row.macs),
  rateLimit: numberOrNull(row.rate_limit),
  segment: row.segment,
  isolated: Boolean(row.isolated),
});

export const toBgpSession = (row: BgpSessionRow): BgpSession => ({
  name: row.name,
  peerAsn: Number(row.peer_asn),
  peerAddress: row.peer_address,
  passive: Boolean(row.passive),
  password: row.password,
  asSet: row.as_set,
  maxPrefix: numberOrNull(row.max_prefix),
  insertIxpAsn: Boolean(row.insert_ixp_asn),
  flags: JSON.parse(row.flags) as string[],
});

const epochMs = (value: Date | string) => new Date(value).getTime();

/** The octets an interface has carried in and out up to `nowMs`, with its traffic profile. */
export function carried(device: string, row: InterfaceRow, nowMs: number) {
  const profile = trafficProfile(device, row.name, Number(row.speed));
  let octetsIn = BigInt(String(row.octets_in));
  let octetsOut = BigInt(String(row.octets_out));
  if (row.traffic_since !== null) {
    const since = epochMs(row.traffic_since);
    octetsIn += octetsBetween(profile.meanIn, profile, since, nowMs);
    octetsOut += octetsBetween(profile.meanOut, profile, since, nowMs);
  }
  return { profile, octetsIn, octetsOut };
}
