import type { PropertyError } from './errors';
import type { State } from './states';
import type { VlanConfig } from './vlans';

/** What an exchange-LAN config order (or a change, as it would leave the config) names. */
export type ExchangeLanConfigOrder = {
  type: 'exchange_lan';
  network_service: string;
  managing_account: string;
  consuming_account: string;
  billing_account: string;
  role_assignments: string[];
  connection: string;
  vlan_config: VlanConfig;
  asns: number[];
  capacity: number | null;
  macs: string[];
  listed: boolean;
  product_offering: string | null;
  external_ref: string | null;
  purchase_order: string;
  contract_ref: string | null;
};

/** The network service a config is for. */
export interface ConfiguredService {
  id: string;
  type: string;
  state: State;
  metro_area_network: string | null;
  product_offering: string | null;
  nsc_required_contact_roles: string[];
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

/** What the rules need to know beyond the order itself; undefined where the caller may not see it. */
export interface ConfigOrderFacts {
  service: ConfiguredService | undefined;
  connection: CarryingConnection | undefined;
  offering: ConfigOffering | undefined;
  /** Roles held by the order's role assignments (of the caller's contacts). */
  assignedRoles: string[];
  billingAccountCanPay: boolean;
  /** The ids of the order's MACs that the caller may use now. */
  usableMacs: ReadonlySet<string>;
  now: Date;
}

/** States in which a connection can carry a new or changed config. */
export const CARRYING_STATES: ReadonlySet<State> = new Set<State>([
  'requested',
  'allocated',
  'testing',
  'production',
  'production_change_pending',
  'scheduled',
]);

/** ASNs no network announces: 0, AS_TRANS, the last 16-bit and the last 32-bit ASN. */
const RESERVED_ASNS: ReadonlySet<number> = new Set([0, 23456, 65535, 4294967295]);

/**
 * Everything wrong with an exchange-LAN config order against its service, connection and
 * offering, by property. An empty list means the order can be accepted (tags and addresses
 * permitting). `concerned` narrows the rules to what a change touches.
 */
export function exchangeLanConfigProblems(
  order: ExchangeLanConfigOrder,
  facts: ConfigOrderFacts,
  concerned: (property: string) => boolean = () => true,
): PropertyError[] {
  const problems: PropertyError[] = [];
  const problem = (name: string, reason: string) => {
    if (concerned(name.split('.')[0])) problems.push({ name, reason });
  };
  const { service, connection, offering } = facts;

  if (!service) problem('network_service', `no network service ${order.network_service}`);
  else if (service.type !== order.type)
    problem('network_service', `${service.id} is a ${service.type} service; this config is ${order.type}`);
  else if (service.state !== 'production')
    problem('network_service', `${service.id} is ${service.state}; it takes new configs in production only`);

  if (!connection) problem('connection', `no connection ${order.connection} of your accounts`);
  else {
    if (!CARRYING_STATES.has(connection.state))
      problem('connection', `${connection.id} is ${connection.state}; it carries no new services`);
    if (service && service.metro_area_network && connection.metro_area_network !== service.metro_area_network)
      problem(
        'connection',
        `${connection.id} is in ${connection.metro_area_network}; ${service.id} is delivered in ${service.metro_area_network}`,
      );
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

  if (order.product_offering !== null) {
    if (!offering) problem('product_offering', `no product offering ${order.product_offering}`);
    else if (service && offering.id !== service.product_offering)
      problem(
        'product_offering',
        `configs of ${service.id} use ${service.product_offering ?? 'no offering'}`,
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
    if (order.capacity !== null && offering.bandwidth_min !== null && order.capacity < offering.bandwidth_min)
      problem('capacity', `at least ${offering.bandwidth_min} Mbit/s for ${offering.id}`);
    if (order.capacity !== null && offering.bandwidth_max !== null && order.capacity > offering.bandwidth_max)
      problem('capacity', `at most ${offering.bandwidth_max} Mbit/s for ${offering.id}`);
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

  if (!order.asns.length) problem('asns', 'name the ASN(s) you peer with');
  for (const [index, asn] of order.asns.entries())
    if (RESERVED_ASNS.has(asn)) problem(`asns.${index}`, `AS${asn} is reserved and cannot peer`);
  if (new Set(order.asns).size !== order.asns.length) problem('asns', 'an ASN is named twice');

  for (const [index, mac] of order.macs.entries())
    if (!facts.usableMacs.has(mac))
      problem(`macs.${index}`, `no MAC address ${mac} of your accounts that is valid now`);
  if (new Set(order.macs).size !== order.macs.length) problem('macs', 'a MAC address is named twice');

  const missing = (service?.nsc_required_contact_roles ?? []).filter(
    (role) => !facts.assignedRoles.includes(role),
  );
  if (missing.length)
    problem(
      'role_assignments',
      `configs of this service need contacts with the role(s) ${missing.join(', ')}`,
    );
  if (!facts.billingAccountCanPay)
    problem('billing_account', 'the billing account has no billing information');
  return problems;
}
