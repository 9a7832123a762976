import type { FlagSetting } from '../domain/network-feature-configs';
import { flagsInForce } from '../domain/network-feature-configs';
import type { CollectionDefinition } from './collection';
import { eq, numberOrNull, ROLE_FILTERS, STATEFUL_COLUMNS, STATEFUL_FILTERS } from './collection';
import { storedAs } from '../domain/families';

/**
 * Network feature configs as IX-API lists them: a member's sessions with route servers, with the
 * flags in force (the route server's mandatory flags on, named or not).
 */
export const networkFeatureConfigs: CollectionDefinition = {
  ...storedAs('network_feature_config'),
  columns: [
    'id',
    'type',
    ...STATEFUL_COLUMNS,
    'network_feature',
    'network_service_config',
    'asn',
    'password',
    'as_set_v4',
    'as_set_v6',
    'max_prefix_v4',
    'max_prefix_v6',
    'insert_ixp_asn',
    'session_mode',
    'bgp_session_type',
    'ip',
    'flags',
    // The route server's flags, whose mandatory ones are on in every session.
    '(SELECT f.flags FROM network_features f WHERE f.id = t.network_feature) AS offered_flags',
    'decommission_at',
    'charged_until',
    'current_billing_start_date',
  ],
  jsonColumns: ['status', 'role_assignments', 'flags', 'offered_flags'],
  filters: {
    ...STATEFUL_FILTERS,
    type: eq('type'),
    service_config: eq('network_service_config'),
    network_feature: eq('network_feature'),
    ...ROLE_FILTERS,
  },
  toResource: ({ offered_flags, ...row }) => ({
    ...row,
    flags: flagsInForce(
      row.flags as FlagSetting[],
      (offered_flags ?? []) as Array<{ name: string; mandatory: boolean }>,
    ),
    asn: Number(row.asn),
    max_prefix_v4: numberOrNull(row.max_prefix_v4),
    max_prefix_v6: numberOrNull(row.max_prefix_v6),
    insert_ixp_asn: row.insert_ixp_asn === null ? null : Boolean(row.insert_ixp_asn),
  }),
};
