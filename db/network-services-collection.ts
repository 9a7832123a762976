import type { CollectionDefinition, Row } from './collection';
import { eq, idsOf, numberOrNull, STATEFUL_FILTERS } from './collection';
import { storedAs } from '../domain/families';

/** Properties every customer-ordered service shows. */
const ORDERED_COMMON = [
  'id',
  'type',
  'state',
  'status',
  'product_offering',
  'managing_account',
  'consuming_account',
  'billing_account',
  'external_ref',
  'purchase_order',
  'contract_ref',
  'decommission_at',
  'charged_until',
  'current_billing_start_date',
  'nsc_required_contact_roles',
  'nsc_product_offerings',
] as const;

/** Which properties each type of service shows. */
const SERVICE_PROPERTIES: Record<string, readonly string[]> = {
  exchange_lan: [
    'id',
    'type',
    'name',
    'state',
    'status',
    'product_offering',
    'metro_area_network',
    'managing_account',
    'consuming_account',
    'external_ref',
    'subnet_v4',
    'subnet_v6',
    'peeringdb_ixid',
    'ixfdb_ixid',
    'nsc_required_contact_roles',
    'network_features',
  ],
  p2p_vc: [...ORDERED_COMMON, 'joining_member_account', 'display_name', 'capacity'],
  mp2mp_vc: [...ORDERED_COMMON, 'display_name', 'public', 'member_joining_rules', 'network_features'],
  p2mp_vc: [...ORDERED_COMMON, 'display_name', 'public', 'member_joining_rules', 'network_features'],
  cloud_vc: [...ORDERED_COMMON, 'cloud_key', 'capacity', 'diversity', 'provider_ref'],
};

/**
 * Who sees a service: everyone an exchange LAN and a public multipoint service; its owners (managing
 * or consuming account) and, for a point-to-point circuit, its B side; for a private multipoint
 * service also the accounts a rule allows to join. `accounts` is bound already.
 */
export const serviceScopeSql = (accounts: string) =>
  `(t.type = 'exchange_lan' OR t.managing_account IN (${accounts}) OR t.consuming_account IN (${accounts})
    OR t.joining_member_account IN (${accounts})
    OR (t.type IN ('mp2mp_vc', 'p2mp_vc') AND (t.public = 1 OR EXISTS (SELECT 1 FROM member_joining_rules r
      WHERE r.network_service = t.id AND r.type = 'allow' AND r.consuming_account IN (${accounts})))))`;

/**
 * Network services as IX-API lists them: the exchange's LANs and the virtual circuits customers
 * order, each with exactly its type's properties.
 */
export const networkServices: CollectionDefinition = {
  ...storedAs('network_service'),
  columns: [
    'id',
    'type',
    'name',
    'display_name',
    'state',
    'status',
    'product_offering',
    'metro_area_network',
    'managing_account',
    'consuming_account',
    'billing_account',
    'external_ref',
    'purchase_order',
    'contract_ref',
    'subnet_v4',
    'subnet_v6',
    'peeringdb_ixid',
    'ixfdb_ixid',
    'nsc_required_contact_roles',
    'joining_member_account',
    'capacity',
    'public',
    'cloud_key',
    'diversity',
    'provider_ref',
    'decommission_at',
    'charged_until',
    'current_billing_start_date',
    `${idsOf('network_features', 'network_service')} AS network_features`,
    `${idsOf('member_joining_rules', 'network_service')} AS member_joining_rules`,
  ],
  jsonColumns: ['status', 'nsc_required_contact_roles', 'network_features', 'member_joining_rules'],
  filters: {
    ...STATEFUL_FILTERS,
    type: eq('type'),
    product_offering: eq('product_offering'),
    // A service is available at a PoP of its metro area network; a circuit at a PoP of either end's.
    pop: (value, params) => {
      const pop = params.bind(value);
      return `(t.metro_area_network = (SELECT metro_area_network FROM pops WHERE id = ${pop})
        OR EXISTS (SELECT 1 FROM product_offerings o WHERE o.id = t.product_offering AND t.type <> 'exchange_lan'
          AND (SELECT metro_area_network FROM pops WHERE id = ${pop})
            IN (o.handover_metro_area_network, o.service_metro_area_network)))`;
    },
  },
  toResource: (row: Row) => {
    const type = String(row.type);
    const full: Row = {
      ...row,
      capacity: numberOrNull(row.capacity),
      diversity: numberOrNull(row.diversity),
      public: Boolean(Number(row.public ?? 0)),
      nsc_product_offerings: row.product_offering ? [row.product_offering] : [],
    };
    const service: Row = {};
    for (const property of SERVICE_PROPERTIES[type] ?? SERVICE_PROPERTIES.exchange_lan)
      service[property] = full[property] ?? null;
    if ('public' in service) service.public = full.public;
    return service;
  },
};
