import { createHash } from 'node:crypto';
import type { ConfigChange, ServiceAttachment } from '../contract';
import type { DeviceSnapshot } from '../intent';

export const IDS = {
  version: 'ixapi-version',
  description: 'ixapi-description',
  lag: 'ixapi-lag',
} as const;
export const SERVICE_PREFIX = 'ixapi-service:';
export const COMMIT_PREFIX = 'ixapi-commit:';
export const KEY_PREFIX = 'ixapi-key:';

/**
 * What OVSDB keeps of a service. Reads take its MACs and rate limit from the rules and meters, which
 * live in ovs-vswitchd only; the record keeps them too (records of older commits may lack them), so
 * that `restore` can install the rules again after ovs-vswitchd restarted.
 */
export interface ServiceRecord {
  id: number;
  description: string;
  parent: string;
  vlanType: ServiceAttachment['vlanType'];
  outerVlan: number | null;
  innerVlan: number | null;
  segment: string;
  isolated: boolean;
  /**
   * Absent from records written before services said it: those let every source in while `macs`
   * is empty, as their rules were installed.
   */
  macFilter?: boolean;
  macs?: string[];
  rateLimit?: number | null;
}

export interface CommitRecord {
  key: string;
  device: string;
  changes: ConfigChange[];
  rolledBack: boolean;
  /** When it was committed (ISO 8601): the oldest commits are forgotten first. */
  at: string;
}

export interface InterfaceRow {
  uuid: string;
  name: string;
  ofport: number;
  error: string;
  linkSpeed: number;
  ids: Map<string, string>;
  /** OVS's counters of the interface (`rx_bytes`, `tx_packets`, …), as it last wrote them to OVSDB. */
  statistics: Map<string, string>;
}

export interface PortRow {
  uuid: string;
  name: string;
  interfaces: InterfaceRow[];
  bondMode: string;
  lacp: string;
  otherConfig: Map<string, string>;
  ids: Map<string, string>;
}

/** The bridge of a device as OVSDB holds it. */
export interface Layout {
  device: string;
  bridge: string;
  ids: Map<string, string>;
  ports: PortRow[];
  /** Interfaces by contract name. */
  interfaces: Map<string, InterfaceRow>;
  /** The patch port to the network's core bridge, where the fabric trunked the device. */
  trunk: InterfaceRow | null;
}

/** The device as the contract sees it, with what it takes to change it. */
export interface DeviceState {
  layout: Layout;
  version: number;
  snapshot: DeviceSnapshot;
  /** Services' numbers (their rules' cookie and their meter). */
  serviceIds: Map<string, number>;
  /** The bridge's keys of commits and commit keys, which a failed change must not add to. */
  committed: Set<string>;
}

// RFC 7047's encodings of sets, maps and UUIDs.
export type OvsdbValue = unknown;
export const setOf = (value: OvsdbValue): OvsdbValue[] =>
  Array.isArray(value) && value[0] === 'set' ? (value[1] as OvsdbValue[]) : [value];
export const uuidOf = (value: OvsdbValue): string => (value as [string, string])[1];
export const mapOf = (value: OvsdbValue): Map<string, string> =>
  new Map(((value as [string, Array<[string, string]>])[1] ?? []).map(([k, v]) => [k, String(v)]));
/** A column of at most one atom (`ofport`, `error`), as text; empty where it holds none. */
export const scalarOf = (value: OvsdbValue): string => {
  const atom = Array.isArray(value) ? setOf(value)[0] : value;
  return typeof atom === 'string' || typeof atom === 'number' ? String(atom) : '';
};

/** ovs-vsctl's syntax for a string: a quoted, escaped one, which JSON's is. */
export const quoted = (text: string) => JSON.stringify(text);

export const byName = <T extends { name: string }>(items: T[]): T[] =>
  [...items].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));

/** A LAG's port on the bridge; its contract name is kept in `external_ids` (names may hold `/`). */
export const lagPortName = (lag: string) =>
  `ixlag${createHash('sha256').update(lag).digest('hex').slice(0, 10)}`;
