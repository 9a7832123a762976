import type { Sequelize } from 'sequelize';
import type { OrderAccountProperty, OrderAccounts } from '../domain/order-accounts';
import { ORDER_ACCOUNT_PROPERTIES } from '../domain/order-accounts';
import type { ConnectionOffering, CrossConnectInitiator } from '../domain/connections';
import { instantOrNull, sqlOf } from './collection';
import type { OrderAccountRow } from './order-accounts';
import { ORDER_ACCOUNT_ROWS, ORDER_ROLE_ASSIGNMENTS, orderAccountsFrom } from './order-accounts';
import type { NewConnection } from './repositories/connection-repository';
import type { HandoverDevices } from './allocation/ports';
import { EXCHANGE_ACCOUNT } from './allocation/ports';

/** An offering an order names, as the order rules and the allocation of its ports read it. */
export interface OrderedOffering extends ConnectionOffering {
  physical_port_speed: number;
  handover_pop: string | null;
  handover_metro_area_network: string;
  /** The devices its ports may be on, read with the order's facts (none when read alone). */
  devices?: HandoverDevices;
}

/** The offering an order names, when it exists, with the facts the order rules need. */
export async function orderedOffering(
  sequelize: Sequelize,
  id: string,
): Promise<OrderedOffering | undefined> {
  const { select } = sqlOf(sequelize);
  const [row] = await select<Record<string, unknown>>('SELECT * FROM product_offerings WHERE id = :id', {
    id,
  });
  return row ? offeringOf(row) : undefined;
}

/** An offering's row as the order rules read it. */
function offeringOf(row: Record<string, unknown>): OrderedOffering {
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

const listOf = <T>(json: unknown): T[] =>
  json === null || json === undefined ? [] : ((typeof json === 'string' ? JSON.parse(json) : json) as T[]);

/**
 * What the order rules need to know of an order, read in one statement: the offering it names
 * (none when there is no such offering), the roles given by its role assignments that the caller's
 * accounts hold (others count as unknown), the states of its accounts and whether the billing
 * account can pay, how many members the smallest LAG of a device may have, and the devices its
 * ports may be on with the exchange's account that holds them spare (so that allocating them reads
 * no more than the ports).
 */
export async function connectionOrderFacts(
  sequelize: Sequelize,
  input: Pick<NewConnection, 'product_offering' | 'role_assignments' | OrderAccountProperty>,
  accounts: readonly string[],
): Promise<{
  offering: OrderedOffering | undefined;
  roles: Map<string, string>;
  accounts: OrderAccounts;
  maxLagMembers: number;
}> {
  const { select } = sqlOf(sequelize);
  const [row] = await select<Record<string, unknown>>(
    `SELECT o.*,
       (SELECT JSON_ARRAYAGG(JSON_OBJECT('id', r.id, 'role', r.role)) FROM (${ORDER_ROLE_ASSIGNMENTS}) r) AS order_roles,
       (SELECT JSON_ARRAYAGG(JSON_OBJECT('id', a.id, 'state', a.state, 'pays', a.pays))
          FROM (${ORDER_ACCOUNT_ROWS}) a) AS order_accounts,
       (SELECT MIN(max_lag) FROM devices) AS order_max_lag,
       (SELECT JSON_ARRAYAGG(JSON_OBJECT('id', d.id, 'pop', d.pop)) FROM devices d JOIN pops p ON p.id = d.pop
         WHERE d.pop = o.handover_pop
            OR (o.handover_pop IS NULL AND p.metro_area_network = o.handover_metro_area_network)) AS order_devices,
       ${EXCHANGE_ACCOUNT} AS order_exchange
     FROM (SELECT 1) one LEFT JOIN product_offerings o ON o.id = :offering`,
    {
      offering: input.product_offering,
      assignments: input.role_assignments.length ? input.role_assignments : [''],
      accounts: accounts.length ? accounts : [''],
      accountIds: ORDER_ACCOUNT_PROPERTIES.map((property) => input[property]),
    },
  );
  const roles = listOf<{ id: string; role: string }>(row.order_roles);
  return {
    offering:
      row.id === null
        ? undefined
        : {
            ...offeringOf(row),
            devices: {
              exchange: (row.order_exchange as string | null) ?? null,
              list: listOf<{ id: string; pop: string }>(row.order_devices).sort((a, b) =>
                a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
              ),
            },
          },
    roles: new Map(roles.map((assignment) => [assignment.id, assignment.role])),
    accounts: orderAccountsFrom(input, listOf<OrderAccountRow>(row.order_accounts)),
    maxLagMembers: Number(row.order_max_lag ?? 8),
  };
}
