/**
 * Visibility as SQL, on the row alias `t`: the same rules as domain/authority.ts, applied inside the
 * query so that invisible rows never reach a list, an `id` filter or a pagination count.
 */

/** A resource with managing and consuming accounts is visible to either side. */
export const ownedScope = (accountsParam: string, alias = 't'): string =>
  `(${alias}.managing_account IN (${accountsParam}) OR ${alias}.consuming_account IN (${accountsParam}))`;

/** A role assignment is visible with its contact. */
export const roleAssignmentScope = (accountsParam: string): string =>
  `t.contact IN (SELECT c.id FROM contacts c WHERE ${ownedScope(accountsParam, 'c')})`;

/** A port reservation is visible with its connection. */
export const portReservationScope = (accountsParam: string): string =>
  `t.connection IN (SELECT c.id FROM connections c WHERE ${ownedScope(accountsParam, 'c')})`;

/** An account is visible to the accounts it is, and to everyone when it is discoverable. */
export const accountScope = (accountsParam: string): string =>
  `(t.id IN (${accountsParam}) OR t.discoverable = 1)`;
