import { accounts } from '../../db/accounts-collection';
import { contacts, roleAssignments } from '../../db/contacts-collection';
import type { AccountRepository } from '../../db/repositories/account-repository';
import type { RedactionPlan } from '../../domain/redaction';
import { redact } from '../../domain/redaction';
import type { CollectionEntry } from '../collections';
import { AuthenticationError } from '../../domain/errors';
import type { OperationDefinition } from '../operations';

/** GET /account: the caller's own account, shown in full (it is always in the caller's scope). */
export function accountOperations(deps: { accounts: AccountRepository }): OperationDefinition[] {
  return [
    {
      operationId: 'account_read',
      authenticated: true,
      async handle({ caller }) {
        const account = caller ? await deps.accounts.findById(caller.accountId) : null;
        // A token whose account is gone is no longer a valid credential.
        if (!account) throw new AuthenticationError('the account of this token no longer exists');
        return { status: 200, body: account };
      },
    },
  ];
}

/** What anybody may see of a discoverable account outside their scope. */
const DISCOVERABLE_VIEW = ['id', 'name', 'metro_area_network_presence'];

/**
 * Accounts as a collection: the caller sees the accounts it acts for in full and discoverable
 * accounts in their public form; every other account does not exist for it.
 */
export function accountsCollection(plan: RedactionPlan): CollectionEntry {
  return {
    collection: accounts,
    list: 'accounts_list',
    read: 'accounts_read',
    scope: (visibility) => (_value, params) =>
      `(t.id IN (${params.bind(visibility.accounts)}) OR t.discoverable = 1)`,
    present: (item, visibility) =>
      visibility.accounts.includes(item.id as string)
        ? item
        : redact(item, { ...plan, only: DISCOVERABLE_VIEW }),
  };
}

/** A contact is visible to the accounts that manage or consume it, and to those acting for them. */
const CONTACT_SCOPE = (accountsParam: string) =>
  `t.managing_account IN (${accountsParam}) OR t.consuming_account IN (${accountsParam})`;

export const CONTACT_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: contacts,
    list: 'contacts_list',
    read: 'contacts_read',
    scope: (visibility) => (_value, params) => CONTACT_SCOPE(params.bind(visibility.accounts)),
  },
  {
    collection: roleAssignments,
    list: 'role_assignments_list',
    read: 'role_assignments_read',
    scope: (visibility) => (_value, params) =>
      `t.contact IN (SELECT t.id FROM contacts t WHERE ${CONTACT_SCOPE(params.bind(visibility.accounts))})`,
  },
];
