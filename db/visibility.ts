import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { Scope } from '../domain/authority';
import { accessToAccount, canSee } from '../domain/authority';

/**
 * The accounts below the account `anchor` selects (an SQL condition on `accounts`), itself included:
 * directly or through managed accounts in turn, as the table `managed` of a recursive query. The
 * hierarchy has no cycles (writes refuse them), and the depth bound keeps a damaged hierarchy from
 * looping.
 */
export const managedCte = (anchor: string) =>
  `managed (id, depth) AS (
     SELECT id, 0 FROM accounts WHERE ${anchor}
     UNION
     SELECT a.id, m.depth + 1 FROM accounts a JOIN managed m ON a.managing_account = m.id WHERE m.depth < 32
   )`;

export const managedTree = (anchor: string) => `WITH RECURSIVE ${managedCte(anchor)}`;

async function accountTree(
  sequelize: Sequelize,
  anchor: string,
  replacements: Record<string, unknown>,
  transaction?: Transaction,
): Promise<string[]> {
  const rows = await sequelize.query<{ id: string }>(
    `${managedTree(anchor)} SELECT DISTINCT id FROM managed`,
    {
      replacements,
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows.map((row) => row.id);
}

/** The accounts an API user acts for: its own and every account it manages, recursively. */
export function accountsActingFor(
  sequelize: Sequelize,
  accountId: string,
  transaction?: Transaction,
): Promise<string[]> {
  return accountTree(sequelize, 'id = :accountId', { accountId }, transaction);
}

/** A login as its access tokens carry it: the API key, its account, and the login's family of tokens. */
export interface Login {
  apiKey: string;
  accountId: string;
  familyId: string;
}

/**
 * What an authenticated request needs to know of its caller, in one query: the accounts it acts for
 * (as `accountsActingFor`), or none when its API key has been revoked or is gone, or its login has
 * been revoked (a spent refresh token of the login presented again revokes every token of it).
 */
export function accountsOfActiveLogin(sequelize: Sequelize, login: Login): Promise<string[]> {
  return accountTree(
    sequelize,
    `id = :accountId AND EXISTS (
       SELECT 1 FROM api_keys k WHERE k.api_key = :apiKey AND k.account_id = :accountId AND k.revoked_at IS NULL
     ) AND NOT EXISTS (
       SELECT 1 FROM refresh_tokens r WHERE r.family_id = :familyId AND r.revoked_at IS NOT NULL
     )`,
    { ...login },
  );
}

/**
 * The account `id` names, as far as a caller with `scope` may know it: one it acts for or a
 * discoverable one, matched exactly. Any other answers undefined, as an account that does not exist
 * does, so a reference to it in a body tells nothing of its existence.
 */
export async function accountSeenBy(
  sequelize: Sequelize,
  id: string,
  scope: Scope,
  transaction?: Transaction,
): Promise<{ id: string } | undefined> {
  const [row] = await sequelize.query<{ id: string; discoverable: number | boolean }>(
    'SELECT id, discoverable FROM accounts WHERE id = :id',
    { replacements: { id }, type: QueryTypes.SELECT, transaction },
  );
  if (!row || row.id !== id) return undefined;
  return canSee(accessToAccount({ id, discoverable: Boolean(Number(row.discoverable)) }, scope))
    ? { id }
    : undefined;
}
