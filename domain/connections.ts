import type { PropertyError } from './errors';
import type { OrderAccounts } from './order-accounts';
import { orderAccountProblems } from './order-accounts';

export type ConnectionMode = 'lag_lacp' | 'lag_static' | 'flex_ethernet' | 'standalone';
export type LacpTimeout = 'slow' | 'fast';
export type CrossConnectInitiator = 'exchange' | 'subscriber';

/** What a customer asks for when ordering or changing a connection. */
export interface ConnectionOrder {
  mode: ConnectionMode;
  lacp_timeout?: LacpTimeout | null;
  port_quantity: number;
  subscriber_side_demarcs?: readonly string[] | null;
}

/** The parts of a product offering that decide whether a connection order fits it. */
export interface ConnectionOffering {
  id: string;
  type: string;
  cross_connect_initiator: CrossConnectInitiator | null;
  /** Null: no limit. */
  maximum_port_quantity: number | null;
  required_contact_roles: readonly string[];
  /** The window in which the offering can be ordered (ISO 8601 instants); null is open-ended. */
  orderable_not_before?: string | null;
  orderable_not_after?: string | null;
}

/** Facts about the order's accounts and contacts that the rules need. */
export interface OrderContext {
  /** Names of the roles the order's role assignments give. */
  assignedRoles: readonly string[];
  /** The accounts the order names: on-boarded, the billing one able to pay. */
  accounts: OrderAccounts;
  /** The most members a bundle may have on this exchange's devices. */
  maxLagMembers: number;
  /** Now, for the offering's orderable window. */
  now: Date;
}

/** What every port of this exchange carries, so what every connection accepts. */
export const CONNECTION_VLAN_TYPES: readonly string[] = ['port', 'dot1q', 'qinq'];
export const CONNECTION_OUTER_ETHERTYPES: readonly string[] = ['0x8100'];

/** Bundling modes this exchange's devices provide. */
/** The name a connection's bundle (LAG) has on its device. */
export const bundleName = (connectionId: string): string => `ae-${connectionId}`;

/** The LAG of a connection in `mode` on its device: none for a standalone port. */
export const lagNameOf = (connectionId: string, mode: ConnectionMode): string | null =>
  mode === 'standalone' ? null : bundleName(connectionId);

/** A connection's speed in Mbit/s: the speed of its ports times how many there are. */
export const connectionSpeed = (physicalPortSpeed: number, portQuantity: number): number =>
  physicalPortSpeed * portQuantity;

/** A port reservation's subscriber-side demarc names one of its connection's, or none. */
export function demarcProblems(value: string | null, demarcs: readonly string[]): PropertyError[] {
  return value !== null && !demarcs.includes(value)
    ? [
        {
          name: 'subscriber_side_demarc',
          reason: `name one of the connection's subscriber_side_demarcs (${demarcs.join(', ') || 'it has none'})`,
        },
      ]
    : [];
}

export const SUPPORTED_MODES: ReadonlySet<ConnectionMode> = new Set(['lag_lacp', 'lag_static', 'standalone']);

/**
 * Everything wrong with a connection order against its offering, by property. An empty list means
 * the order can be accepted (ports permitting).
 */
export function connectionOrderProblems(
  order: ConnectionOrder,
  offering: ConnectionOffering,
  context: OrderContext,
): PropertyError[] {
  const problems: PropertyError[] = [];
  const problem = (name: string, reason: string) => problems.push({ name, reason });

  if (offering.type !== 'connection')
    problem('product_offering', `${offering.id} is a ${offering.type} offering, not a connection offering`);

  const now = context.now.getTime();
  if (offering.orderable_not_before && now < Date.parse(offering.orderable_not_before))
    problem('product_offering', `${offering.id} can be ordered from ${offering.orderable_not_before} on`);
  if (offering.orderable_not_after && now > Date.parse(offering.orderable_not_after))
    problem('product_offering', `${offering.id} could be ordered until ${offering.orderable_not_after} only`);

  if (!SUPPORTED_MODES.has(order.mode))
    problem('mode', `${order.mode} is not offered here; choose lag_lacp, lag_static or standalone`);
  if (order.mode === 'standalone' && order.port_quantity !== 1)
    problem('port_quantity', 'a standalone connection has exactly one port');
  if (order.mode !== 'lag_lacp' && order.lacp_timeout != null)
    problem('lacp_timeout', 'only a lag_lacp connection has an LACP timeout');

  if (offering.maximum_port_quantity !== null && order.port_quantity > offering.maximum_port_quantity)
    problem(
      'port_quantity',
      `the offering allows at most ${offering.maximum_port_quantity} port(s), not ${order.port_quantity}`,
    );
  else if (order.mode !== 'standalone' && order.port_quantity > context.maxLagMembers)
    problem('port_quantity', `a bundle has at most ${context.maxLagMembers} ports here`);

  const demarcs = order.subscriber_side_demarcs ?? [];
  if (offering.cross_connect_initiator === 'exchange') {
    if (demarcs.length < 1)
      problem(
        'subscriber_side_demarcs',
        'the exchange orders the cross-connect for this offering: name at least one subscriber-side demarc',
      );
  }
  if (demarcs.length > order.port_quantity)
    problem(
      'subscriber_side_demarcs',
      `at most one demarc per port: ${demarcs.length} given for ${order.port_quantity} port(s)`,
    );
  if (demarcs.some((demarc) => !demarc.trim()))
    problem('subscriber_side_demarcs', 'a demarc cannot be empty');

  const missing = offering.required_contact_roles.filter((role) => !context.assignedRoles.includes(role));
  if (missing.length)
    problem('role_assignments', `the offering needs contacts with the role(s) ${missing.join(', ')}`);

  for (const { name, reason } of orderAccountProblems(context.accounts)) problem(name, reason);

  return problems;
}

/** The LACP timeout a connection runs with: what was ordered, or `slow`, the LACP default. */
export function effectiveLacpTimeout(
  order: Pick<ConnectionOrder, 'mode' | 'lacp_timeout'>,
): LacpTimeout | null {
  if (order.mode !== 'lag_lacp') return null;
  return order.lacp_timeout ?? 'slow';
}
