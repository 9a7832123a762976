import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { QuotaDemand, QuotaName, QuotaUsage, Quotas } from '../../domain/quotas';
import { OPEN_ORDER_STATES, quotasAt, requireWithinQuotas } from '../../domain/quotas';
import { ENDED_STATES } from '../../domain/states';
import { isReadCommitted } from '../transactions';
import { managedCte } from '../visibility';

/** The tables of stateful resources an account orders itself, each counted while its order is open. */
const ORDERED_TABLES = [
  'connections',
  'network_services',
  'network_service_configs',
  'network_feature_configs',
];

/**
 * What an account registers by itself, by the quota it counts against: a row counts while it exists
 * (a delete removes it). Of IP addresses only those customers register count, never those the
 * exchange allocates to configs (which the quotas of orders bound); IX-API deletes no IP address, so
 * a registration counts for good.
 */
const REGISTERED: Partial<Record<QuotaName, string>> = {
  contacts: 'contacts WHERE managing_account IN (:tree)',
  macs: 'macs WHERE managing_account IN (:tree)',
  ips: 'ip_addresses WHERE managing_account IN (:tree) AND network_service IS NULL',
  member_joining_rules: 'member_joining_rules WHERE managing_account IN (:tree)',
};

/**
 * The accounts from `:account` up to the first the exchange holds itself, with their depth (the
 * account 0): the table `chain`. Its top customer is the top of the tree `:account` belongs to.
 */
const CHAIN = `chain (id, managing_account, is_exchange, depth) AS (
     SELECT id, managing_account, is_exchange, 0 FROM accounts WHERE id = :account
     UNION ALL
     SELECT a.id, a.managing_account, a.is_exchange, c.depth + 1 FROM accounts a
       JOIN chain c ON a.id = c.managing_account WHERE c.is_exchange = 0 AND c.depth < 32
   )`;
const TOP = '(SELECT id FROM chain WHERE is_exchange = 0 ORDER BY depth DESC LIMIT 1)';

/**
 * Counts what an account tree holds and refuses, in the transaction of the write, an order that
 * would take it beyond a quota (domain/quotas.ts decides). A tree is an account the exchange does
 * not manage itself (a customer) with every account it manages, directly or below; what a resource
 * counts against is the tree of its managing account.
 */
export function createQuotaGuard(deps: { sequelize: Sequelize; quotas: Quotas }) {
  const { sequelize, quotas } = deps;
  const select = <T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction: Transaction,
  ) => sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });

  /**
   * Moves the turn of the tree `account` belongs to (its topmost manager below the exchange's own
   * account), in one statement: the row is written, so the orders of one tree wait for each other
   * here and, on a Galera cluster, certification lets only one of two at once commit. Nothing moves
   * when the account is the exchange's or does not exist: nothing limits those.
   */
  async function takeTurn(account: string, transaction: Transaction): Promise<void> {
    await sequelize.query(
      `INSERT INTO quota_turns (account, turn) WITH RECURSIVE ${CHAIN}
       SELECT id, 1 FROM chain WHERE is_exchange = 0 ORDER BY depth DESC LIMIT 1
       ON DUPLICATE KEY UPDATE turn = turn + 1`,
      { replacements: { account }, transaction },
    );
  }

  /**
   * The top of the tree `account` belongs to (none where nothing limits it) and what the tree holds,
   * for the quotas named, in one statement.
   */
  async function usageOf(
    account: string,
    names: QuotaName[],
    transaction: Transaction,
  ): Promise<{ top: string | null; usage: QuotaUsage }> {
    const counts: Array<[QuotaName, string]> = [];
    // A port is held from its reservation until the reservation ends (decommissioned, cancelled).
    if (names.includes('ports'))
      counts.push([
        'ports',
        `SELECT COUNT(*) FROM port_reservations r JOIN connections c ON c.id = r.connection
         WHERE c.managing_account IN (:tree) AND r.state NOT IN (:ended)`,
      ]);
    // An order is open until it first goes into production or ends. The reservations a connection
    // is ordered with belong to its order; one ordered later for a live bundle is an order of its own.
    if (names.includes('open_orders'))
      counts.push([
        'open_orders',
        `SELECT ${ORDERED_TABLES.map(
          (table) => `(SELECT COUNT(*) FROM ${table} WHERE managing_account IN (:tree)
             AND state IN (:open) AND current_billing_start_date IS NULL)`,
        ).join(' + ')}
         + (SELECT COUNT(*) FROM port_reservations r JOIN connections c ON c.id = r.connection
             WHERE c.managing_account IN (:tree) AND r.state IN (:open)
             AND r.current_billing_start_date IS NULL AND c.current_billing_start_date IS NOT NULL)`,
      ]);
    for (const [name, rows] of Object.entries(REGISTERED) as Array<[QuotaName, string]>)
      if (names.includes(name)) counts.push([name, `SELECT COUNT(*) FROM ${rows}`]);
    const [row] = await select<Record<string, number | string>>(
      `WITH RECURSIVE ${CHAIN}, ${managedCte(`id = ${TOP}`)}
       SELECT ${TOP} AS top, (SELECT COUNT(DISTINCT id) FROM managed) AS tree
         ${counts.map(([name, sql]) => `, (${sql.replaceAll('IN (:tree)', 'IN (SELECT id FROM managed)')}) AS ${name}`).join('')}`,
      { account, ended: ENDED_STATES, open: OPEN_ORDER_STATES },
      transaction,
    );
    const usage: QuotaUsage = Object.fromEntries(counts.map(([name]) => [name, Number(row[name])]));
    if (names.includes('sub_accounts')) usage.sub_accounts = Number(row.tree) - 1;
    return { top: (row.top as string | null) ?? null, usage };
  }

  return {
    /**
     * Refuses an order for `account` (the managing account of what it creates, or the manager of a
     * new account) that would take its tree beyond a quota, with an unable-to-fulfill naming the
     * quota; nothing else happens in the transaction then. The tree's turn is written first and
     * stays locked until the transaction ends, so orders of one tree are counted one after the
     * other and concurrent ones never exceed a quota together, also through different nodes of a
     * Galera cluster. Call it first in the transaction, so that the
     * lock is always taken before the rows the order locks next, in one from `allocatingTransaction`
     * (READ COMMITTED), so that the counts see what the orders before committed.
     */
    async requireRoom(account: string, demand: QuotaDemand, transaction: Transaction): Promise<void> {
      if (!isReadCommitted(transaction))
        throw new Error('quotas are checked in transactions from allocatingTransaction() only');
      const names = quotasAt(quotas, demand);
      if (!names.length) return;
      await takeTurn(account, transaction);
      const { top, usage } = await usageOf(account, names, transaction);
      if (!top) return;
      requireWithinQuotas(quotas, usage, demand, { root: top, orderedFor: account });
    },
  };
}

export type QuotaGuard = ReturnType<typeof createQuotaGuard>;
