/**
 * The device-driver contract. Activities never talk to a device directly: they describe the
 * configuration they intend for the parts of one device a step touches, load it as a candidate,
 * look at the difference, commit it under a business key, and roll it back when a later step fails.
 * Every driver passes the same contract tests (`test/contracts/driver-contract.ts`).
 */

export type LagMode = 'lacp' | 'static';
export type LacpTimeout = 'fast' | 'slow';

/** What a caller may set on a physical interface. Speed is a property of the port, not settable. */
export interface InterfaceSettings {
  name: string;
  description: string;
  enabled: boolean;
}

export interface InterfaceState extends InterfaceSettings {
  /** Port speed in Mbit/s. */
  speed: number;
  /** The LAG the interface belongs to, or null. */
  lag: string | null;
  /** Whether the link is up (enabled, and the far side answers). */
  operUp: boolean;
}

export interface LagConfig {
  name: string;
  description: string;
  mode: LagMode;
  /** Only for `lacp`; null for `static`. */
  lacpTimeout: LacpTimeout | null;
  /** Interface names; a member belongs to one LAG only. */
  members: string[];
}

/**
 * A service carried on an interface or LAG (its `parent`): the whole of it untagged (`port`), one
 * 802.1Q tag (`dot1q`, `outerVlan`), or two stacked tags (`qinq`, `outerVlan` and `innerVlan`).
 * Only frames from `macs` enter it, when that list is not empty, and none while it is empty where
 * `macFilter` holds; `rateLimit` caps it in Mbit/s. It joins one `segment`, where an `isolated`
 * service reaches only the services that are not isolated.
 */
export interface ServiceAttachment {
  /** Unique on the device; the lab and the activities use the config's id. */
  name: string;
  description: string;
  parent: string;
  vlanType: 'port' | 'dot1q' | 'qinq';
  /** The tag of `dot1q`, the outer tag of `qinq`; null for `port`. */
  outerVlan: number | null;
  /** The inner tag of `qinq`; null otherwise. */
  innerVlan: number | null;
  /** Lower-case, colon-separated unicast MAC addresses; a set, so reads return them sorted. */
  macs: string[];
  /**
   * Whether `macs` are the only sources the service takes, even when there are none: then no frame
   * enters it until a MAC is added. Set for a member's access to an exchange LAN, where a frame
   * from a MAC nobody named could be another member's; clear where an empty list lets every source
   * in (a circuit, which carries no MACs, or a private VLAN of the member's own).
   */
  macFilter: boolean;
  /** Mbit/s, or null for no limit. */
  rateLimit: number | null;
  /**
   * The segment the service joins: the network service (exchange LAN, point-to-point or multipoint
   * circuit) it belongs to, by id. Frames cross only between services of one segment.
   */
  segment: string;
  /**
   * An isolated service (a leaf of a point-to-multipoint service) reaches only the services of its
   * segment that are not isolated (the roots); the others reach every service of the segment.
   */
  isolated: boolean;
}

/**
 * A BGP session a route server holds with a member's router. Route servers are devices of their
 * own to the driver (named like their network feature); they carry sessions, not interfaces.
 */
export interface BgpSession {
  /** Unique on the route server; the activities use the feature config's id. */
  name: string;
  peerAsn: number;
  /** The member router's address (IPv4 or IPv6), canonical text. */
  peerAddress: string;
  /** The route server waits for the member's router to open the session. */
  passive: boolean;
  /** The cleartext MD5 password, or null for none. */
  password: string | null;
  /** The AS-SET the member's announcements are filtered with, for the session's family. */
  asSet: string | null;
  /** The most prefixes the member may announce in the session's family, or null for no limit. */
  maxPrefix: number | null;
  /** Whether the route server puts its own ASN into the paths it passes on. */
  insertIxpAsn: boolean;
  /** The route server's flags switched on for the session; a set, so reads return them sorted. */
  flags: string[];
}

/**
 * The intended configuration of the parts of one device a step is about. Parts not named are left
 * as they are; `removeLags` takes LAGs away (their members leave them), `removeServices` takes
 * services away.
 */
export interface DeviceIntent {
  device: string;
  interfaces?: InterfaceSettings[];
  lags?: LagConfig[];
  removeLags?: string[];
  services?: ServiceAttachment[];
  removeServices?: string[];
  bgpSessions?: BgpSession[];
  removeBgpSessions?: string[];
}

export interface ConfigChange {
  kind: 'interface' | 'lag' | 'service' | 'bgp_session';
  name: string;
  action: 'create' | 'update' | 'delete';
  /** The part before and after the change; null where it does not exist. */
  before: InterfaceState | LagConfig | ServiceAttachment | BgpSession | null;
  after: InterfaceState | LagConfig | ServiceAttachment | BgpSession | null;
}

export interface Candidate {
  id: string;
  device: string;
  changes: ConfigChange[];
}

export interface CommitResult {
  commitId: string;
  device: string;
  changes: ConfigChange[];
}

export interface OpticsReading {
  interface: string;
  rxDbm: number;
  txDbm: number;
  /** Receive power within the range the optics are specified for. */
  inRange: boolean;
}

/**
 * Traffic counters of one interface, LAG or sub-interface, as the device read them at `readAt`.
 * Like SNMP's Counter64 they are unsigned 64-bit integers that only grow: an interface's counters
 * stand still while it carries no traffic and carry on (never reset) when it carries some again.
 * A LAG counts the sum of its members' counters, so its counters step when members change. In and
 * out are the device's view, as SNMP's: in is what the interface received from the customer's
 * side, out what the device sent to it.
 */
export interface CounterReading {
  /** An interface, a LAG, or a sub-interface `<interface-or-lag>.<vlan>` (VLAN 1 to 4094). */
  interface: string;
  /** The instant the counters were read (ISO 8601); one instant for every name of one read. */
  readAt: string;
  octetsIn: bigint;
  octetsOut: bigint;
  packetsIn: bigint;
  packetsOut: bigint;
  errorsIn: bigint;
  errorsOut: bigint;
  discardsIn: bigint;
  discardsOut: bigint;
}

/** What a driver can do; callers skip what it cannot. */
export interface DriverCapabilities {
  lags: boolean;
  lacp: boolean;
  optics: boolean;
  rollback: boolean;
  /** Services on VLANs of interfaces and LAGs, with MAC filters and rate limits. */
  services: boolean;
  /** BGP sessions on route servers. */
  bgpSessions: boolean;
  /** Traffic counters of interfaces, LAGs and sub-interfaces. */
  counters: boolean;
}

export type DriverErrorCode =
  /** The device did not answer; try again later. */
  | 'unreachable'
  /** The device answered too late; try again later. */
  | 'timeout'
  /** The device changed since the candidate was loaded; load again. */
  | 'stale-candidate'
  /** The intent names something the device lacks or breaks a rule; trying again cannot help. */
  | 'invalid-config'
  /** The device refused the commit; trying again cannot help. */
  | 'rejected';

const RETRYABLE: ReadonlySet<DriverErrorCode> = new Set(['unreachable', 'timeout']);

export class DriverError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly code: DriverErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DriverError';
    this.retryable = RETRYABLE.has(code);
  }
}

export interface DeviceDriver {
  readonly kind: string;
  readonly capabilities: DriverCapabilities;
  /** Checks `intent` against the device and keeps it as a candidate; changes nothing yet. */
  load(intent: DeviceIntent): Promise<Candidate>;
  /** What committing the candidate would change. */
  diff(candidateId: string): Promise<ConfigChange[]>;
  /**
   * Applies a candidate atomically. Idempotent by `key`: a key committed before answers with that
   * commit and changes nothing, so a retried activity cannot apply twice.
   */
  commit(candidateId: string, key: string): Promise<CommitResult>;
  /** Restores what a commit changed; rolling back twice changes nothing the second time. */
  rollback(device: string, commitId: string): Promise<void>;
  readInterfaces(device: string, names?: readonly string[]): Promise<InterfaceState[]>;
  readLags(device: string, names?: readonly string[]): Promise<LagConfig[]>;
  readOptics(device: string, names: readonly string[]): Promise<OpticsReading[]>;
  /** Services in name order, all or the ones named; none where the driver lacks `services`. */
  readServices(device: string, names?: readonly string[]): Promise<ServiceAttachment[]>;
  /** BGP sessions of a route server in name order, all or the ones named; none without `bgpSessions`. */
  readBgpSessions(device: string, names?: readonly string[]): Promise<BgpSession[]>;
  /**
   * The traffic counters of the named interfaces, LAGs and sub-interfaces, in the order named and
   * all read at one instant; none where the driver cannot read counters. A name the device does not
   * know (or a VLAN outside 1 to 4094) is refused as `invalid-config`, and nothing is read.
   */
  readCounters(device: string, names: readonly string[]): Promise<CounterReading[]>;
}
