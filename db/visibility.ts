import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';

/**
 * The accounts an API user acts for: its own and every account it manages, directly or through
 * managed accounts in turn. One recursive query; the hierarchy has no cycles (writes refuse them),
 * and the depth bound keeps a damaged hierarchy from looping.
 */
export async function accountsActingFor(
  sequelize: Sequelize,
  accountId: string,
  transaction?: Transaction,
): Promise<string[]> {
  const rows = await sequelize.query<{ id: string }>(
    `WITH RECURSIVE managed (id, depth) AS (
       SELECT id, 0 FROM accounts WHERE id = :accountId
       UNION
       SELECT a.id, m.depth + 1 FROM accounts a JOIN managed m ON a.managing_account = m.id WHERE m.depth < 32
     )
     SELECT DISTINCT id FROM managed`,
    { replacements: { accountId }, type: QueryTypes.SELECT, transaction },
  );
  return rows.map((row) => row.id);
}
