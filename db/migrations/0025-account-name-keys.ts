import type { QueryInterface } from 'sequelize';
import { DataTypes, QueryTypes } from 'sequelize';
import { discoverableNameKeys } from '../../domain/account-names';

const key = { type: DataTypes.CHAR(64), allowNull: true };

/**
 * No two discoverable accounts have names that read alike (domain/account-names.ts): each holds
 * the keys of its name, unique among them. Accounts are given their keys in the order they were
 * created; a later one whose name reads like an earlier one's keeps its name without keys until
 * its name or discoverability next changes, when the rule applies to it as to any change.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('accounts', 'name_key_cased', key);
  await qi.addColumn('accounts', 'name_key_caseless', key);
  const accounts = await qi.sequelize.query<{ id: string; name: string }>(
    'SELECT id, name FROM accounts WHERE discoverable ORDER BY created_at, id',
    { type: QueryTypes.SELECT },
  );
  const taken = new Set<string>();
  for (const account of accounts) {
    const keys = discoverableNameKeys(account.name, true)!;
    if (taken.has(`cased ${keys.cased}`) || taken.has(`caseless ${keys.caseless}`)) continue;
    taken.add(`cased ${keys.cased}`).add(`caseless ${keys.caseless}`);
    await qi.sequelize.query(
      'UPDATE accounts SET name_key_cased = :cased, name_key_caseless = :caseless WHERE id = :id',
      { replacements: { ...keys, id: account.id } },
    );
  }
  await qi.addIndex('accounts', ['name_key_cased'], { unique: true, name: 'accounts_name_key_cased' });
  await qi.addIndex('accounts', ['name_key_caseless'], { unique: true, name: 'accounts_name_key_caseless' });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('accounts', 'name_key_caseless');
  await qi.removeColumn('accounts', 'name_key_cased');
}
