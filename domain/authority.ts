import { NotFoundError, PermissionDeniedError, ValidationError } from './errors';

/**
 * Who may see and change what. An API user acts for its own account and every account that account
 * manages, directly or through managed accounts in turn. These rules decide what a caller may do with
 * one resource; the database applies the same rules as SQL conditions when it lists.
 */
export interface Scope {
  /** The account the caller authenticated as. */
  accountId: string;
  /** Its own account and every account it manages, recursively. */
  accounts: readonly string[];
}

/**
 * What a caller may do with a resource:
 * - `change`: see all of it and change it;
 * - `read`: see all of it (it consumes the resource, somebody else manages it);
 * - `discover`: see its public form only (a discoverable account outside the caller's scope);
 * - `none`: the resource does not exist for the caller.
 */
export type Access = 'change' | 'read' | 'discover' | 'none';

export const actsFor = (scope: Scope, accountId: string | null | undefined): boolean =>
  typeof accountId === 'string' && scope.accounts.includes(accountId);

/** A resource with a managing and a consuming account (contacts, and every service resource). */
export interface Owned {
  managing_account: string | null;
  consuming_account: string | null;
}

/** The managing side changes a resource; the consuming side only sees it. */
export function accessToOwned(resource: Owned, scope: Scope): Access {
  if (actsFor(scope, resource.managing_account)) return 'change';
  if (actsFor(scope, resource.consuming_account)) return 'read';
  return 'none';
}

/** An account is the caller's to change when the caller acts for it; others may only discover it. */
export function accessToAccount(account: { id: string; discoverable: boolean }, scope: Scope): Access {
  if (actsFor(scope, account.id)) return 'change';
  return account.discoverable ? 'discover' : 'none';
}

export const canSee = (access: Access): boolean => access !== 'none';

/**
 * Refuses a change the caller is not entitled to: a resource it cannot see is not found (nothing
 * leaks about its existence), one it can see but not change is forbidden.
 */
export function requireChange(access: Access, what: string): void {
  if (access === 'none') throw new NotFoundError(`no ${what}`);
  if (access !== 'change') throw new PermissionDeniedError(`you may see ${what} but not change it`);
}

/**
 * A reference to an account in a request body (`managing_account`, `consuming_account`,
 * `billing_account`) must name an account the caller acts for. An account the caller cannot act for
 * gets the same answer whether or not it exists.
 */
export function requireActingAccount(scope: Scope, property: string, accountId: unknown): void {
  if (typeof accountId === 'string' && actsFor(scope, accountId)) return;
  throw new ValidationError([
    {
      name: property,
      reason: `must be an account you act for (your own or one you manage); ${JSON.stringify(accountId)} is not`,
    },
  ]);
}

/**
 * The hierarchy stays a forest: an account may not be managed by itself or by any account it
 * manages. `managedBy` are the accounts the changed account acts for (itself included).
 */
export function requireNoCycle(accountId: string, newManager: string, managedBy: readonly string[]): void {
  if (newManager === accountId || managedBy.includes(newManager)) {
    throw new ValidationError([
      {
        name: 'managing_account',
        reason: `${newManager} is managed by ${accountId} (or is it), so it cannot manage it: the hierarchy would loop`,
      },
    ]);
  }
}

/**
 * Who manages an account changes only from above: an account cannot change its own manager, and
 * the new manager must be an account the caller acts for that does not sit below the account.
 * `actingFor` answers the accounts the changed account acts for (itself included); it is asked
 * only for a change of manager.
 */
export async function requireManagerChange(
  current: { id: string; managing_account: string | null },
  next: string | null | undefined,
  scope: Scope,
  actingFor: () => Promise<readonly string[]>,
): Promise<void> {
  if (next === current.managing_account) return;
  if (current.id === scope.accountId)
    throw new ValidationError([
      {
        name: 'managing_account',
        reason: 'an account cannot change who manages it; its managing account can',
      },
    ]);
  requireActingAccount(scope, 'managing_account', next);
  requireNoCycle(current.id, next as string, await actingFor());
}
