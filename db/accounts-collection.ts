import type { CollectionDefinition, FilterSql } from './collection';
import { eq, notEq } from './collection';
import { storedAs } from '../domain/families';

/**
 * A filter on a property a discoverable account does not show matches only accounts the caller
 * acts for, so it never tells anything about the hidden values of others. (Filters on properties
 * the document marks sensitive are held so by the collection's registry entry as well.)
 */
const inScope =
  (filter: FilterSql): FilterSql =>
  (value, params, accounts = []) =>
    `${filter(value, params, accounts)} AND t.id IN (${params.bind(accounts.length ? accounts : [''])})`;
const inScopeEq = (column: string): FilterSql => inScope(eq(column));

/** The accounts a caller sees whole: those it acts for. `accounts` is bound already. */
export const accountsSeenWhole = (accounts: string) => `t.id IN (${accounts})`;

/** Accounts as IX-API lists them; JSON columns hold the address, billing information and presence. */
export const accounts: CollectionDefinition = {
  ...storedAs('account'),
  columns: [
    'id',
    'name',
    'legal_name',
    'address',
    'billing_information',
    'discoverable',
    'external_ref',
    'managing_account',
    'metro_area_network_presence',
    'state',
    'status',
  ],
  jsonColumns: ['address', 'billing_information', 'metro_area_network_presence', 'status'],
  filters: {
    // Only `name` is public; every other filter looks at what only the accounts in scope show.
    state: inScope(eq('state')),
    state__is_not: inScope(notEq('state')),
    managing_account: inScopeEq('managing_account'),
    external_ref: inScopeEq('external_ref'),
    name: eq('name'),
    // Accounts that may be used as a billing account: those with billing information.
    billable: inScope((value) =>
      Number(value) ? 't.billing_information IS NOT NULL' : 't.billing_information IS NULL',
    ),
  },
  toResource: (row) => ({ ...row, discoverable: Boolean(row.discoverable) }),
};
