import type { Sequelize } from 'sequelize';
import type { OrderAccountProperty, OrderAccounts } from '../domain/order-accounts';
import type { CrossConnectInitiator } from '../domain/connections';
import { instantOrNull, sqlOf } from './collection';
import { orderAccountsOf, orderRoleAssignments } from './order-accounts';
import type { NewConnection, OrderedOffering } from './repositories/connection-repository';

/** The offering an order names, when it exists, with the facts the order rules need. */
export async function orderedOffering(
  sequelize: Sequelize,
  id: string,
): Promise<OrderedOffering | undefined> {
  const { select } = sqlOf(sequelize);
  const [row] = await select<Record<string, unknown>>('SELECT * FROM product_offerings WHERE id = :id', {
    id,
  });
  if (!row) return undefined;
  return {
    id: row.id as string,
    type: row.type as string,
    cross_connect_initiator: (row.cross_connect_initiator as CrossConnectInitiator | null) ?? null,
    maximum_port_quantity: row.maximum_port_quantity === null ? null : Number(row.maximum_port_quantity),
    required_contact_roles: row.required_contact_roles
      ? (JSON.parse(row.required_contact_roles as string) as string[])
      : [],
    orderable_not_before: instantOrNull(row.orderable_not_before),
    orderable_not_after: instantOrNull(row.orderable_not_after),
    physical_port_speed: Number(row.physical_port_speed),
    handover_pop: (row.handover_pop as string | null) ?? null,
    handover_metro_area_network: row.handover_metro_area_network as string,
  };
}

/**
 * What the order rules need to know about an order's role assignments and accounts:
 * the roles given by the assignments the caller's accounts hold (others count as unknown).
 */
export async function connectionOrderFacts(
  sequelize: Sequelize,
  input: Pick<NewConnection, 'role_assignments' | OrderAccountProperty>,
  accounts: readonly string[],
): Promise<{ roles: Map<string, string>; accounts: OrderAccounts; maxLagMembers: number }> {
  const { select } = sqlOf(sequelize);
  const assignments = await orderRoleAssignments(sequelize, input.role_assignments, accounts);
  const orderAccounts = await orderAccountsOf(sequelize, input);
  const [lag] = await select<{ max_lag: number | null }>('SELECT MIN(max_lag) AS max_lag FROM devices', {});
  return {
    roles: new Map(assignments.map((a) => [a.id, a.role])),
    accounts: orderAccounts,
    maxLagMembers: Number(lag?.max_lag ?? 8),
  };
}
