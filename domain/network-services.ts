import type { Scope } from './authority';
import { actsFor } from './authority';
import type { PropertyError } from './errors';
import { PermissionDeniedError, UnableToFulfillError } from './errors';
import { accessToService } from './member-joining-rules';
import type { State } from './states';
import { GOING_STATES, isLive } from './states';
import type { OrderAccounts } from './order-accounts';
import { orderAccountProblems } from './order-accounts';

/** Service types customers order; exchange LANs belong to the exchange and are not ordered. */
export const ORDERABLE_SERVICE_TYPES = ['p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'] as const;
export type OrderableServiceType = (typeof ORDERABLE_SERVICE_TYPES)[number];

export const isOrderableServiceType = (type: unknown): type is OrderableServiceType =>
  (ORDERABLE_SERVICE_TYPES as readonly unknown[]).includes(type);

/** What an order of a service (or a change, as it would leave the service) names. */
export type ServiceOrder = {
  type: OrderableServiceType;
  product_offering: string;
  managing_account: string;
  consuming_account: string;
  billing_account: string;
  external_ref: string | null;
  purchase_order: string;
  contract_ref: string | null;
  /** p2p_vc: the B side. */
  joining_member_account: string | null;
  /** p2p_vc, mp2mp_vc, p2mp_vc. */
  display_name: string | null;
  /** p2p_vc, cloud_vc: Mbit/s; null for the offering's maximum. */
  capacity: number | null;
  /** mp2mp_vc, p2mp_vc. */
  public: boolean;
  /** cloud_vc. */
  cloud_key: string | null;
};

/** The properties each type carries besides the shared ones (the others stay at their zero). */
export const SERVICE_FIELDS: Readonly<Record<OrderableServiceType, readonly (keyof ServiceOrder)[]>> = {
  p2p_vc: ['joining_member_account', 'display_name', 'capacity'],
  mp2mp_vc: ['display_name', 'public'],
  p2mp_vc: ['display_name', 'public'],
  cloud_vc: ['cloud_key', 'capacity'],
};

/** What an order leaves out (a PUT replaces with these too). */
export const ABSENT_SERVICE: Omit<ServiceOrder, 'type'> = {
  product_offering: '',
  managing_account: '',
  consuming_account: '',
  billing_account: '',
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
  joining_member_account: null,
  display_name: null,
  capacity: null,
  public: false,
  cloud_key: null,
};

/** The order with only its type's properties (the rest at their zero). */
export function shapedOrder(order: ServiceOrder): ServiceOrder {
  const shaped: ServiceOrder = { ...ABSENT_SERVICE, type: order.type };
  const keep = new Set<keyof ServiceOrder>([
    'product_offering',
    'managing_account',
    'consuming_account',
    'billing_account',
    'external_ref',
    'purchase_order',
    'contract_ref',
    ...SERVICE_FIELDS[order.type],
  ]);
  for (const key of keep) (shaped as unknown as Record<string, unknown>)[key] = order[key];
  return shaped;
}

export interface ServiceOffering {
  id: string;
  type: string;
  resource_type: string;
  handover_metro_area_network: string | null;
  service_metro_area_network: string | null;
  service_provider: string;
  bandwidth_min: number | null;
  bandwidth_max: number | null;
  upgrade_allowed: boolean;
  downgrade_allowed: boolean;
  orderable_not_before: string | null;
  orderable_not_after: string | null;
  diversity: number | null;
  service_provider_workflow: string | null;
  cloud_key_pattern: string | null;
}

/** What the rules need beyond the order; undefined where there is nothing (or nothing to see). */
export interface ServiceOrderFacts {
  offering: ServiceOffering | undefined;
  /** The joining member's account, if the caller may know it (it acts for it, or it is discoverable). */
  joiningAccount: { id: string } | undefined;
  /** The accounts the order names: on-boarded, the billing one able to pay. */
  accounts: OrderAccounts;
  now: Date;
}

/** The stored service a change starts from. */
export interface CurrentService {
  order: ServiceOrder;
  offering: ServiceOffering | undefined;
  state: State;
}

/** States a service no longer changes from. */
export const SERVICE_GOING = GOING_STATES;

/** Refuses a capacity outside the offering's bandwidth range (a service's or a config's). */
export function bandwidthProblems(
  capacity: number | null,
  offering: Pick<ServiceOffering, 'id' | 'bandwidth_min' | 'bandwidth_max'>,
  problem: (name: string, reason: string) => void,
) {
  if (capacity === null) return;
  if (offering.bandwidth_min !== null && capacity < offering.bandwidth_min)
    problem('capacity', `at least ${offering.bandwidth_min} Mbit/s for ${offering.id}`);
  if (offering.bandwidth_max !== null && capacity > offering.bandwidth_max)
    problem('capacity', `at most ${offering.bandwidth_max} Mbit/s for ${offering.id}`);
}

/**
 * Everything wrong with a service order, by property; empty when it can be accepted. With
 * `current`, the order is a change of that service: what may not change is named, and `concerned`
 * narrows the rules to what the change touches.
 */
export function serviceOrderProblems(
  order: ServiceOrder,
  facts: ServiceOrderFacts,
  current?: CurrentService,
  concerned: (property: string) => boolean = () => true,
): PropertyError[] {
  const problems: PropertyError[] = [];
  const problem = (name: string, reason: string) => {
    if (concerned(name.split('.')[0])) problems.push({ name, reason });
  };
  const { offering } = facts;

  if (!offering) problem('product_offering', `no product offering ${order.product_offering}`);
  else {
    if (offering.type !== order.type)
      problem(
        'product_offering',
        `${offering.id} is a ${offering.type} offering; the service is ${order.type}`,
      );
    else if (offering.resource_type !== 'network_service')
      problem(
        'product_offering',
        `${offering.id} is ordered as a ${offering.resource_type}, not as a service`,
      );
    const now = facts.now.getTime();
    if (!current || current.order.product_offering !== offering.id) {
      if (offering.orderable_not_before && now < Date.parse(offering.orderable_not_before))
        problem('product_offering', `${offering.id} can be ordered from ${offering.orderable_not_before} on`);
      if (offering.orderable_not_after && now > Date.parse(offering.orderable_not_after))
        problem('product_offering', `${offering.id} could be ordered until ${offering.orderable_not_after}`);
    }
    bandwidthProblems(order.capacity, offering, problem);
    if (order.type === 'cloud_vc' && offering.type === 'cloud_vc') {
      const key = order.cloud_key ?? '';
      if (!key.trim()) problem('cloud_key', 'name the key of the circuit (or your account) at the provider');
      else if (offering.service_provider_workflow === 'provider_first' && offering.cloud_key_pattern) {
        if (!new RegExp(offering.cloud_key_pattern).test(key))
          problem(
            'cloud_key',
            `${key} is not a key of ${offering.service_provider}: ${offering.id} takes keys matching ${offering.cloud_key_pattern}`,
          );
      }
    }
  }

  if (order.type === 'p2p_vc') {
    if (!order.joining_member_account) problem('joining_member_account', 'name the account on the B side');
    else if (!facts.joiningAccount)
      problem('joining_member_account', `no account ${order.joining_member_account}`);
    else if (order.joining_member_account === order.consuming_account)
      problem('joining_member_account', 'the B side is another account than the service’s consumer');
  }

  for (const { name, reason } of orderAccountProblems(facts.accounts)) problem(name, reason);

  if (current) {
    const was = current.order;
    if (order.type === 'p2p_vc' && order.joining_member_account !== was.joining_member_account)
      problem('joining_member_account', 'the B side of a circuit stays; order a new circuit instead');
    if (order.type === 'cloud_vc' && order.cloud_key !== was.cloud_key)
      problem('cloud_key', 'the provider circuit of a service stays; order a new service instead');
    if (order.public !== was.public)
      problem('public', `the service stays ${was.public ? 'public' : 'private'}; order a new one instead`);
    if (offering && current.offering && offering.id !== current.offering.id) {
      const before = current.offering;
      if (
        offering.handover_metro_area_network !== before.handover_metro_area_network ||
        offering.service_metro_area_network !== before.service_metro_area_network ||
        offering.service_provider !== before.service_provider
      )
        problem(
          'product_offering',
          `${offering.id} is delivered elsewhere or by another provider than ${before.id}; only the bandwidth may change`,
        );
    }
    if (current.offering) {
      const before = effectiveBandwidth(was.capacity, current.offering);
      const after = offering ? effectiveBandwidth(order.capacity, offering) : before;
      if (after > before && !current.offering.upgrade_allowed)
        problem('capacity', `${current.offering.id} does not allow upgrades`);
      if (after < before && !current.offering.downgrade_allowed)
        problem('capacity', `${current.offering.id} does not allow downgrades`);
    }
  }
  return problems;
}

/** The bandwidth a capacity stands for: null is the offering's maximum (or unlimited). */
export function effectiveBandwidth(capacity: number | null, offering: ServiceOffering): number {
  return capacity ?? offering.bandwidth_max ?? Number.MAX_SAFE_INTEGER;
}

/** A change of a point-to-point circuit the B side asks for. */
export interface ChangeRequest {
  product_offering: string;
  capacity: number | null;
}

/**
 * Everything wrong with a change request of a p2p circuit, by property: an offering of the same
 * kind delivered where the current one is (it may differ in bandwidth only), a capacity it allows,
 * and an actual change.
 */
export function changeRequestProblems(
  request: ChangeRequest,
  current: CurrentService,
  offering: ServiceOffering | undefined,
): PropertyError[] {
  const problems: PropertyError[] = [];
  const before = current.offering;
  if (!offering)
    problems.push({ name: 'product_offering', reason: `no product offering ${request.product_offering}` });
  else if (offering.type !== 'p2p_vc')
    problems.push({ name: 'product_offering', reason: `${offering.id} is a ${offering.type} offering` });
  else if (
    before &&
    (offering.handover_metro_area_network !== before.handover_metro_area_network ||
      offering.service_metro_area_network !== before.service_metro_area_network ||
      offering.service_provider !== before.service_provider)
  )
    problems.push({
      name: 'product_offering',
      reason: `${offering.id} differs from ${before.id} in more than bandwidth`,
    });
  if (offering && offering.type === 'p2p_vc')
    bandwidthProblems(request.capacity, offering, (name, reason) => problems.push({ name, reason }));
  if (
    !problems.length &&
    request.product_offering === current.order.product_offering &&
    request.capacity === current.order.capacity
  )
    problems.push({ name: 'capacity', reason: 'the circuit has this bandwidth already' });
  return problems;
}

/** A config of a service, as the service's workflow sees it. */
export interface ServiceEnd {
  id: string;
  state: State;
  consuming_account: string;
  handover: number | null;
  device: string | null;
}

export interface ServiceShape {
  type: string;
  consuming_account: string;
  joining_member_account: string | null;
  diversity: number | null;
}

/**
 * What a service still waits for before it is in production, in words (empty when nothing): a
 * point-to-point circuit both its ends, a cloud service a config in production on each handover, a
 * multipoint service one member.
 */
export function missingEnds(service: ServiceShape, ends: readonly ServiceEnd[]): string[] {
  const live = ends.filter((end) => isLive(end.state));
  switch (service.type) {
    case 'p2p_vc': {
      const missing: string[] = [];
      if (!live.some((end) => end.consuming_account === service.consuming_account))
        missing.push(`the A side (${service.consuming_account})`);
      if (!live.some((end) => end.consuming_account === service.joining_member_account))
        missing.push(`the B side (${service.joining_member_account ?? 'nobody'})`);
      return missing;
    }
    case 'cloud_vc': {
      const missing: string[] = [];
      for (let handover = 1; handover <= (service.diversity ?? 1); handover++)
        if (!live.some((end) => end.handover === handover)) missing.push(`handover ${handover}`);
      return missing;
    }
    default:
      return live.length ? [] : ['a first member'];
  }
}

/** Who a service belongs to, for access decisions. */
export interface ServiceParties {
  id: string;
  type: string;
  state: State;
  managing_account: string;
  consuming_account: string;
  joining_member_account: string | null;
  public: boolean;
}

/**
 * Which side of a service a caller is on: its owner (acting for its managing account), its
 * consumer, the member a circuit joins (the B side), a member who may see it (an exchange LAN, a
 * public service, or `allowedMember`: a private one whose rules admit the caller), or none.
 */
export type ServiceSide = 'owner' | 'consumer' | 'joining' | 'member' | 'none';

export function sideOfService(parties: ServiceParties, scope: Scope, allowedMember = false): ServiceSide {
  const access = accessToService(scope, parties);
  if (access === 'change') return 'owner';
  if (access === 'read') return 'consumer';
  if (actsFor(scope, parties.joining_member_account)) return 'joining';
  if (parties.type === 'exchange_lan' || parties.public || allowedMember) return 'member';
  return 'none';
}

/** Only the managing side changes a service, and exchange LANs are the exchange's own. */
export function requireServiceOwner(parties: ServiceParties, side: ServiceSide): void {
  if (side !== 'owner')
    throw new PermissionDeniedError(`you may see network-services with id ${parties.id} but not change it`);
  if (parties.type === 'exchange_lan')
    throw new UnableToFulfillError(
      'id',
      'exchange LANs are run by the exchange; they are not changed through the API',
    );
}
