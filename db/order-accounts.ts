import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { OrderAccountProperty, OrderAccounts } from '../domain/order-accounts';
import { ORDER_ACCOUNT_PROPERTIES } from '../domain/order-accounts';
import type { State } from '../domain/states';

/** What an order's account rows say: each account's state, and whether it can pay. */
export interface OrderAccountRow {
  id: string;
  state: State;
  pays: number | boolean;
}

/** The accounts an order names, as the order rules judge them, from their rows. */
export function orderAccountsFrom(
  order: Record<OrderAccountProperty, string>,
  rows: readonly OrderAccountRow[],
): OrderAccounts {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return {
    states: Object.fromEntries(
      ORDER_ACCOUNT_PROPERTIES.flatMap((property) => {
        const row = byId.get(order[property]);
        return row ? [[property, row.state]] : [];
      }),
    ),
    billingAccountCanPay: Boolean(Number(byId.get(order.billing_account)?.pays ?? 0)),
  };
}

/** The SQL that lists an order's account rows (`:accountIds`), as `orderAccountsFrom` reads them. */
export const ORDER_ACCOUNT_ROWS =
  'SELECT id, state, billing_information IS NOT NULL AS pays FROM accounts WHERE id IN (:accountIds)';

/** The accounts an order names, as the order rules judge them (one statement). */
export async function orderAccountsOf(
  sequelize: Sequelize,
  order: Record<OrderAccountProperty, string>,
  transaction?: Transaction,
): Promise<OrderAccounts> {
  const rows = await sequelize.query<OrderAccountRow>(ORDER_ACCOUNT_ROWS, {
    replacements: { accountIds: ORDER_ACCOUNT_PROPERTIES.map((property) => order[property]) },
    type: QueryTypes.SELECT,
    transaction,
  });
  return orderAccountsFrom(order, rows);
}

/** The SQL that lists the order's role assignments (`:assignments`) of contacts `:accounts` hold. */
export const ORDER_ROLE_ASSIGNMENTS = `SELECT ra.id, ra.role FROM role_assignments ra JOIN contacts c ON c.id = ra.contact
     WHERE ra.id IN (:assignments) AND (c.managing_account IN (:accounts) OR c.consuming_account IN (:accounts))`;

/**
 * Of an order's role assignments, those of contacts one of `accounts` holds (manages or consumes),
 * with the role each gives; the others count as unknown to the order rules.
 */
export async function orderRoleAssignments(
  sequelize: Sequelize,
  ids: readonly string[],
  accounts: readonly string[],
): Promise<Array<{ id: string; role: string }>> {
  if (!ids.length) return [];
  return sequelize.query<{ id: string; role: string }>(ORDER_ROLE_ASSIGNMENTS, {
    replacements: { assignments: ids, accounts: accounts.length ? accounts : [''] },
    type: QueryTypes.SELECT,
  });
}
