import type { CollectionDefinition } from './collection';
import { eq, numberOrNull } from './collection';
import { ownedScope } from './scope';
import { storedAs } from '../domain/families';

/** Member joining rules as IX-API lists them; a deny rule shows no capacities. */
export const memberJoiningRules: CollectionDefinition = {
  ...storedAs('member_joining_rule'),
  columns: [
    'id',
    'type',
    'network_service',
    'consuming_account',
    'managing_account',
    'external_ref',
    'capacity_min',
    'capacity_max',
  ],
  filters: {
    network_service: eq('network_service'),
  },
  toResource: ({ capacity_min, capacity_max, ...rule }) =>
    rule.type === 'allow'
      ? { ...rule, capacity_min: numberOrNull(capacity_min), capacity_max: numberOrNull(capacity_max) }
      : rule,
};

/**
 * The rules a caller sees, on the row alias `t`: those of services an account in scope owns, and
 * those naming an account in scope as the member. The same rule as `accessToRule` in the domain.
 */
export const memberJoiningRuleScope = (accountsParam: string): string =>
  `(t.consuming_account IN (${accountsParam})
    OR EXISTS (SELECT 1 FROM network_services s WHERE s.id = t.network_service AND ${ownedScope(accountsParam, 's')}))`;
