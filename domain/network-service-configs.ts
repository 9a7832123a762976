import type { JoiningTerms } from './member-joining-rules';
import { standingOn } from './member-joining-rules';
import { unknownAssignments } from './contacts';
import type { Conflict, PropertyError } from './errors';
import { bandwidthProblems, SERVICE_GOING } from './network-services';
import type { State } from './states';
import { ACCEPTING_STATES } from './states';
import type { VlanConfig } from './vlans';
import type { OrderAccounts } from './order-accounts';
import { orderAccountProblems } from './order-accounts';

/** The types of config this exchange provisions: access to its LANs and to customers' circuits. */
export const CONFIG_TYPES = ['exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

export const isConfigType = (type: unknown): type is ConfigType =>
  (CONFIG_TYPES as readonly unknown[]).includes(type);

/** Point-to-multipoint: a root reaches everyone, a leaf only the roots. */
export type P2mpRole = 'root' | 'leaf';

/**
 * What a config order (or a change, as it would leave the config) names. One shape serves every
 * type: the properties a type does not carry keep the value `absentConfigOrder` gives them.
 */
export type ConfigOrder = {
  type: ConfigType;
  network_service: string;
  managing_account: string;
  consuming_account: string;
  billing_account: string;
  role_assignments: string[];
  connection: string;
  vlan_config: VlanConfig;
  external_ref: string | null;
  purchase_order: string;
  contract_ref: string | null;
  /** Every type but cloud_vc: Mbit/s, null for no rate limit. */
  capacity: number | null;
  /** Every type but cloud_vc. */
  product_offering: string | null;
  /** exchange_lan. */
  asns: number[];
  /** exchange_lan. */
  listed: boolean;
  /** exchange_lan, mp2mp_vc. */
  macs: string[];
  /** p2mp_vc. */
  role: P2mpRole | null;
  /** cloud_vc: which of the service's redundant handovers, 1..diversity. */
  handover: number | null;
  /**
   * cloud_vc: the provider VLAN picked; null for all unmatched ones (or the only one). An order or
   * replacement that leaves it out means null (`absentConfigOrder`), as a single-VLAN offering wants.
   */
  cloud_vlan: number | null;
};

/** The properties only some types carry. */
export const TYPED_PROPERTIES = [
  'capacity',
  'product_offering',
  'asns',
  'listed',
  'macs',
  'role',
  'handover',
  'cloud_vlan',
] as const;
export type TypedProperty = (typeof TYPED_PROPERTIES)[number];

/** Which of them each type carries, and so shows. */
export const CONFIG_FIELDS: Readonly<Record<ConfigType, readonly TypedProperty[]>> = {
  exchange_lan: ['capacity', 'product_offering', 'asns', 'listed', 'macs'],
  p2p_vc: ['capacity', 'product_offering'],
  mp2mp_vc: ['capacity', 'product_offering', 'macs'],
  p2mp_vc: ['capacity', 'product_offering', 'role'],
  cloud_vc: ['handover', 'cloud_vlan'],
};

/** What an order of `type` leaves out: a PUT replaces with these, a PATCH keeps what it does not name. */
export function absentConfigOrder(type: ConfigType): ConfigOrder {
  return {
    type,
    network_service: '',
    managing_account: '',
    consuming_account: '',
    billing_account: '',
    role_assignments: [],
    connection: '',
    vlan_config: { vlan_type: 'port' },
    external_ref: null,
    purchase_order: '',
    contract_ref: null,
    capacity: null,
    product_offering: null,
    asns: [],
    listed: false,
    macs: [],
    role: type === 'p2mp_vc' ? 'leaf' : null,
    handover: null,
    cloud_vlan: null,
  };
}

/** The order with the shared properties and its type's own, as the type's schema describes it. */
export function ownProperties(order: ConfigOrder): Partial<ConfigOrder> {
  const own: Record<string, unknown> = { ...order };
  for (const name of TYPED_PROPERTIES) if (!CONFIG_FIELDS[order.type].includes(name)) delete own[name];
  return own;
}

/** The network service a config is for. */
export interface ConfiguredService {
  id: string;
  type: string;
  state: State;
  metro_area_network: string | null;
  product_offering: string | null;
  nsc_required_contact_roles: string[];
  /** The offerings the service's configs may name. */
  nsc_product_offerings: string[];
  managing_account: string;
  consuming_account: string;
  /** p2p_vc: the account on the B side. */
  joining_member_account: string | null;
  /** Multipoint: every account no rule denies may join. */
  public: boolean;
  /** cloud_vc: how many redundant handovers the circuit has. */
  diversity: number | null;
  /** Where the service's offering hands over (a p2p circuit's A side) ... */
  handover_metro_area_network: string | null;
  /** ... and where it delivers the service (a p2p circuit's B side). */
  service_metro_area_network: string | null;
  provider_vlans: 'single' | 'multi' | null;
}

/** The connection a config is delivered over, with what its other configs take of it. */
export interface CarryingConnection {
  id: string;
  state: State;
  metro_area_network: string;
  vlan_types: readonly string[];
  outer_vlan_ethertypes: readonly string[];
  /** Mbit/s over all its ports. */
  speed: number;
  capacity_allocation_limit: number | null;
  /** Capacity the connection's other live configs have booked, in Mbit/s. */
  capacityBookedElsewhere: number;
}

export interface ConfigOffering {
  id: string;
  type: string;
  bandwidth_min: number | null;
  bandwidth_max: number | null;
  orderable_not_before: string | null;
  orderable_not_after: string | null;
}

/** A member joining rule of a multipoint service, for one account. */
/** The rule that names an account on a multipoint service (one at most). */
export type JoiningRule = JoiningTerms;

/** What the rules need to know beyond the order itself; undefined where there is nothing to see. */
export interface ConfigOrderFacts {
  service: ConfiguredService | undefined;
  connection: CarryingConnection | undefined;
  offering: ConfigOffering | undefined;
  /** Roles held by the order's role assignments (of the caller's contacts). */
  assignedRoles: string[];
  /** The order's role assignments that are of the caller's contacts. */
  knownAssignments: ReadonlySet<string>;
  /** The accounts the order names: on-boarded, the billing one able to pay. */
  accounts: OrderAccounts;
  /** The ids of the order's MACs that the caller may use now. */
  usableMacs: ReadonlySet<string>;
  /**
   * The order's MACs (id to address) whose address another account's config on the same service
   * uses: on one LAN an address is one member's at a time (a second would take its traffic).
   */
  macsHeldByOthers: ReadonlyMap<string, string>;
  /** The accounts the caller acts for. */
  actingAccounts: readonly string[];
  /** The service's joining rule for the order's consuming account, if it has one. */
  memberRule: JoiningRule | undefined;
  /** Whether a rule of the service allows one of the caller's accounts to join it. */
  callerAllowed: boolean;
  now: Date;
}

/** ASNs no network announces: 0, AS_TRANS, the last 16-bit and the last 32-bit ASN. */
const RESERVED_ASNS: ReadonlySet<number> = new Set([0, 23456, 65535, 4294967295]);

/** The side of a point-to-point circuit an account's config is: A (the service's consumer) or B. */
export function p2pSide(
  service: { consuming_account: string; joining_member_account: string | null },
  account: string,
): 'A' | 'B' | null {
  if (account === service.consuming_account) return 'A';
  if (account === service.joining_member_account) return 'B';
  return null;
}

/**
 * Whether the caller may order configs of a service at all; a service it may not is unknown to it,
 * as it is in the list of services: a circuit to its two sides, a cloud service to its owners, a
 * private multipoint service to its owners and the accounts a rule allows.
 */
function knownToCaller(service: ConfiguredService, facts: ConfigOrderFacts): boolean {
  const acts = (account: string | null) => account !== null && facts.actingAccounts.includes(account);
  const owner = acts(service.managing_account) || acts(service.consuming_account);
  switch (service.type) {
    case 'exchange_lan':
      return true;
    case 'p2p_vc':
      return owner || acts(service.joining_member_account);
    case 'cloud_vc':
      return owner;
    default:
      return owner || service.public || facts.callerAllowed;
  }
}

/**
 * The metro area networks a config of the service may be delivered in: an exchange LAN's own; a
 * circuit's handover network on its A side and service network on its B side; either for a
 * multipoint service; the handover network of a cloud service. Empty when nothing is said.
 */
function deliveryNetworks(order: ConfigOrder, service: ConfiguredService): string[] {
  const { handover_metro_area_network: handover, service_metro_area_network: delivered } = service;
  const networks = (() => {
    switch (service.type) {
      case 'exchange_lan':
        return [service.metro_area_network];
      case 'p2p_vc': {
        const side = p2pSide(service, order.consuming_account);
        return side === 'A' ? [handover] : side === 'B' ? [delivered] : [];
      }
      case 'cloud_vc':
        return [handover];
      default:
        return [handover, delivered];
    }
  })();
  return [...new Set(networks.filter((network): network is string => network !== null))];
}

/**
 * Everything wrong with a config order against its service, connection and offering, by property:
 * the rules every type shares, then those of the order's type. An empty list means the order can be
 * accepted (tags, addresses and the service's other configs permitting). `concerned` narrows the
 * rules to what a change touches; a rule that also depends on other properties names them too.
 */
export function configProblems(
  order: ConfigOrder,
  facts: ConfigOrderFacts,
  concerned: (property: string) => boolean = () => true,
): PropertyError[] {
  const problems: PropertyError[] = [];
  const problem = (name: string, reason: string, dependsOn: readonly string[] = []) => {
    if ([name.split('.')[0], ...dependsOn].some(concerned)) problems.push({ name, reason });
  };
  const { connection, offering } = facts;
  const service = facts.service && knownToCaller(facts.service, facts) ? facts.service : undefined;
  const carries = (property: TypedProperty) => CONFIG_FIELDS[order.type].includes(property);

  // The service.
  if (!service) problem('network_service', `no network service ${order.network_service}`);
  else if (service.type !== order.type)
    problem('network_service', `${service.id} is a ${service.type} service; this config is ${order.type}`);
  else if (service.type === 'exchange_lan' && service.state !== 'production')
    problem('network_service', `${service.id} is ${service.state}; it takes new configs in production only`);
  else if (SERVICE_GOING.includes(service.state))
    problem('network_service', `${service.id} is ${service.state}; it takes no new configs`);
  // The sections of a type hold to a service of that type.
  const ours = service && service.type === order.type ? service : undefined;

  // The connection.
  if (!connection) problem('connection', `no connection ${order.connection} of your accounts`);
  else {
    if (!ACCEPTING_STATES.has(connection.state))
      problem('connection', `${connection.id} is ${connection.state}; it carries no new services`);
    const networks = ours ? deliveryNetworks(order, ours) : [];
    if (ours && networks.length && !networks.includes(connection.metro_area_network)) {
      const where = ours.type === 'p2p_vc' ? `this side of ${ours.id} is` : `${ours.id} is`;
      // A circuit's side follows the consuming account, so a change of it is held to this too.
      problem(
        'connection',
        `${connection.id} is in ${connection.metro_area_network}; ${where} delivered in ${networks.join(' or ')}`,
        ['consuming_account'],
      );
    }
    const vlan = order.vlan_config;
    if (!connection.vlan_types.includes(vlan.vlan_type))
      problem(
        'vlan_config.vlan_type',
        `${connection.id} takes ${connection.vlan_types.join(', ')}, not ${vlan.vlan_type}`,
      );
    const ethertype =
      vlan.vlan_type === 'dot1q'
        ? vlan.vlan_ethertype
        : vlan.vlan_type === 'qinq'
          ? vlan.outer_vlan_ethertype
          : undefined;
    if (ethertype !== undefined && !connection.outer_vlan_ethertypes.includes(ethertype))
      problem(
        vlan.vlan_type === 'dot1q' ? 'vlan_config.vlan_ethertype' : 'vlan_config.outer_vlan_ethertype',
        `${connection.id} takes the ethertype(s) ${connection.outer_vlan_ethertypes.join(', ')}`,
      );
  }

  // What another type carries stays out.
  const absent = absentConfigOrder(order.type);
  for (const name of TYPED_PROPERTIES)
    if (!carries(name) && JSON.stringify(order[name]) !== JSON.stringify(absent[name]))
      problem(
        name,
        name === 'macs'
          ? 'only exchange_lan and mp2mp_vc configs carry MAC addresses'
          : `${order.type} configs have no ${name}`,
      );

  // The offering and the capacity.
  if (order.product_offering !== null && carries('product_offering')) {
    if (!offering) problem('product_offering', `no product offering ${order.product_offering}`);
    else if (service && !service.nsc_product_offerings.includes(offering.id))
      problem(
        'product_offering',
        `configs of ${service.id} use ${service.nsc_product_offerings.join(' or ') || 'no offering'}`,
      );
  }
  if (offering) {
    const now = facts.now.getTime();
    if (order.product_offering !== null) {
      if (offering.orderable_not_before && now < Date.parse(offering.orderable_not_before))
        problem('product_offering', `${offering.id} can be ordered from ${offering.orderable_not_before} on`);
      if (offering.orderable_not_after && now > Date.parse(offering.orderable_not_after))
        problem('product_offering', `${offering.id} could be ordered until ${offering.orderable_not_after}`);
    }
    bandwidthProblems(order.capacity, offering, problem);
  }
  if (connection && order.capacity !== null) {
    const limit = connection.capacity_allocation_limit ?? connection.speed;
    const free = limit - connection.capacityBookedElsewhere;
    if (order.capacity > free)
      problem(
        'capacity',
        `${connection.id} has ${Math.max(0, free)} of ${limit} Mbit/s left for services, not ${order.capacity}`,
      );
  }

  // What each type asks besides.
  switch (order.type) {
    case 'exchange_lan':
      if (!order.asns.length) problem('asns', 'name the ASN(s) you peer with');
      for (const [index, asn] of order.asns.entries())
        if (RESERVED_ASNS.has(asn)) problem(`asns.${index}`, `AS${asn} is reserved and cannot peer`);
      if (new Set(order.asns).size !== order.asns.length) problem('asns', 'an ASN is named twice');
      break;
    case 'p2p_vc':
      if (ours && !p2pSide(ours, order.consuming_account))
        problem(
          'consuming_account',
          `the ends of ${ours.id} are consumed by ${ours.consuming_account} (A side) and ${
            ours.joining_member_account ?? 'nobody yet'
          } (B side)`,
        );
      break;
    case 'mp2mp_vc':
    case 'p2mp_vc':
      if (ours) {
        const admission = standingOn(ours, order.consuming_account, facts.memberRule);
        if (!admission.admitted)
          problem('network_service', `the rules of ${ours.id} do not admit ${order.consuming_account}`, [
            'consuming_account',
          ]);
        else if (
          admission.capacity_min !== null &&
          order.capacity !== null &&
          order.capacity < admission.capacity_min
        )
          problem(
            'capacity',
            `${ours.id} admits ${order.consuming_account} with at least ${admission.capacity_min} Mbit/s`,
            ['consuming_account'],
          );
      }
      break;
    case 'cloud_vc':
      if (order.handover === null) problem('handover', 'name the handover, from 1 on');
      else if (ours && order.handover > (ours.diversity ?? 1))
        problem(
          'handover',
          `${ours.id} has ${ours.diversity ?? 1} handover(s); name one from 1 to ${ours.diversity ?? 1}`,
        );
      if (ours && order.cloud_vlan !== null && ours.provider_vlans !== 'multi')
        problem(
          'cloud_vlan',
          `the provider of ${ours.id} hands over a single VLAN: leave cloud_vlan null or out`,
        );
      break;
  }

  if (carries('macs')) {
    for (const [index, mac] of order.macs.entries())
      if (!facts.usableMacs.has(mac))
        problem(`macs.${index}`, `no MAC address ${mac} of your accounts that is valid now`);
    for (const held of macsHeldProblems(order.macs, facts.macsHeldByOthers)) problem(held.name, held.reason);
    if (new Set(order.macs).size !== order.macs.length) problem('macs', 'a MAC address is named twice');
  }

  for (const unknown of unknownAssignments(order.role_assignments, facts.knownAssignments))
    problem(unknown.name, unknown.reason);
  const missing = (service?.nsc_required_contact_roles ?? []).filter(
    (role) => !facts.assignedRoles.includes(role),
  );
  if (missing.length)
    problem(
      'role_assignments',
      `configs of this service need contacts with the role(s) ${missing.join(', ')}`,
    );
  for (const { name, reason } of orderAccountProblems(facts.accounts)) problem(name, reason);
  return problems;
}

/** Another live config of the same service, as the rules between a service's configs see it. */
export interface SiblingConfig {
  id: string;
  consuming_account: string;
  handover: number | null;
  cloud_vlan: number | null;
  /** The device its connection is on. */
  device: string;
}

/** What stands against a config among the service's other live configs. */
export interface SiblingClashes {
  /** Problems of the order itself, by property. */
  problems: PropertyError[];
  /** Configs that hold what the order asks for. */
  conflicts: Conflict[];
  reasons: string[];
}

/**
 * The rules between a service's configs, checked with the service's other live configs in view
 * (the caller holds the service still while it does): one end on each side of a point-to-point
 * circuit; one config for each handover and provider VLAN of a cloud service (a null VLAN counted as
 * a value of its own); and with diversity, the handovers on distinct devices.
 */
export function siblingClashes(
  order: Pick<ConfigOrder, 'type' | 'consuming_account' | 'handover' | 'cloud_vlan'>,
  service: {
    id: string;
    consuming_account: string;
    joining_member_account: string | null;
    diversity: number | null;
  },
  device: string,
  others: readonly SiblingConfig[],
): SiblingClashes {
  const clashes: SiblingClashes = { problems: [], conflicts: [], reasons: [] };
  const conflict = (other: SiblingConfig, property: string, reason: string) => {
    clashes.conflicts.push({
      resource_type: 'network-service-configs',
      resource_id: other.id,
      resource_property: property,
      remote_resource_type: 'network-services',
      remote_resource_id: service.id,
    });
    clashes.reasons.push(reason);
  };
  if (order.type === 'p2p_vc') {
    const side = p2pSide(service, order.consuming_account);
    for (const other of others)
      if (side && p2pSide(service, other.consuming_account) === side)
        conflict(other, 'consuming_account', `${other.id} is the ${side} side of ${service.id} already`);
  }
  if (order.type === 'cloud_vc') {
    for (const other of others) {
      if (other.handover === order.handover && other.cloud_vlan === order.cloud_vlan)
        conflict(
          other,
          'handover',
          `${other.id} is handover ${order.handover} of ${service.id} for ${
            order.cloud_vlan === null ? 'the unmatched provider VLANs' : `provider VLAN ${order.cloud_vlan}`
          } already`,
        );
      else if ((service.diversity ?? 1) > 1 && other.handover !== order.handover && other.device === device)
        clashes.problems.push({
          name: 'connection',
          reason: `handover ${other.handover} of ${service.id} uses ${device} (${other.id}); handover ${order.handover} needs a connection on another device`,
        });
    }
  }
  return clashes;
}

/**
 * The problems of naming MACs whose addresses another member uses on the service (`held`, by MAC
 * id): one per address, naming `macs` and the address. Who holds it is not said: the address is all
 * the caller gave.
 */
export function macsHeldProblems(
  macs: readonly string[],
  held: ReadonlyMap<string, string>,
): PropertyError[] {
  return [...new Set(macs.map((mac) => held.get(mac)))]
    .filter((address): address is string => address !== undefined)
    .map((address) => ({
      name: 'macs',
      reason: `${address} is in use on this service by another member; a MAC address is one member's`,
    }));
}
