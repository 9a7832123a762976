import { ownedScope } from './scope';
import type { CollectionDefinition, FilterSql, Row } from './collection';
import { eq, idsOf, STATEFUL_COLUMNS, STATEFUL_FILTERS } from './collection';

/**
 * The catalogue collections: where the exchange is, what it runs there and what it sells. Every
 * filter the OpenAPI document declares for a list operation has its SQL condition here.
 */

const booleanEq =
  (column: string): FilterSql =>
  (value, params) =>
    `t.${column} = ${params.bind(value === true || value === 'true' ? 1 : 0)}`;

const RANGE_OPERATORS = { '': '=', _lt: '<', _lte: '<=', _gt: '>', _gte: '>=' } as const;

/** `name`, `name_lt`, `name_lte`, `name_gt`, `name_gte`, each an SQL condition built from an operator. */
function rangeFilters(name: string, condition: (operator: string, placeholder: string) => string) {
  const filters: Record<string, FilterSql> = {};
  for (const [suffix, operator] of Object.entries(RANGE_OPERATORS)) {
    filters[`${name}${suffix}`] = (value, params) => condition(operator, params.bind(value));
  }
  return filters;
}

/** Ports below the row `t`, for capability filters; `scope` says how a port belongs to `t`. */
const portsOf = (scope: string) => (condition: string) =>
  `EXISTS (SELECT 1 FROM ports p WHERE ${scope} AND ${condition})`;

function capabilityFilters(scope: string): Record<string, FilterSql> {
  const ports = portsOf(scope);
  return {
    capability_media_type: (value, params) => ports(`p.media_type = ${params.bind(value)}`),
    ...rangeFilters('capability_speed', (op, v) => ports(`p.speed ${op} ${v}`)),
  };
}

const FACILITY_PORTS = 'p.pop IN (SELECT id FROM pops WHERE facility = t.id)';

export const metroAreas: CollectionDefinition = {
  name: 'metro-areas',
  table: 'metro_areas',
  columns: [
    'id',
    'un_locode',
    'iata_code',
    'display_name',
    `${idsOf('facilities', 'metro_area')} AS facilities`,
    `${idsOf('metro_area_networks', 'metro_area')} AS metro_area_networks`,
  ],
  jsonColumns: ['facilities', 'metro_area_networks'],
  filters: {},
  toResource: (row) => ({ ...row }),
};

export const metroAreaNetworks: CollectionDefinition = {
  name: 'metro-area-networks',
  table: 'metro_area_networks',
  columns: ['id', 'name', 'metro_area', 'service_provider', `${idsOf('pops', 'metro_area_network')} AS pops`],
  jsonColumns: ['pops'],
  filters: { name: eq('name'), metro_area: eq('metro_area'), service_provider: eq('service_provider') },
  toResource: (row) => ({ ...row }),
};

export const facilities: CollectionDefinition = {
  name: 'facilities',
  table: 'facilities',
  columns: [
    'id',
    'name',
    'metro_area',
    'address_country',
    'address_locality',
    'address_region',
    'postal_code',
    'street_address',
    'organisation_name',
    'peeringdb_facility_id',
    'latitude',
    'longitude',
    `${idsOf('pops', 'facility')} AS pops`,
  ],
  jsonColumns: ['pops'],
  filters: {
    organisation_name: eq('organisation_name'),
    metro_area: eq('metro_area'),
    metro_area_network: (value, params) =>
      `EXISTS (SELECT 1 FROM pops f WHERE f.facility = t.id AND f.metro_area_network = ${params.bind(value)})`,
    address_country: eq('address_country'),
    address_locality: eq('address_locality'),
    postal_code: eq('postal_code'),
    ...capabilityFilters(FACILITY_PORTS),
  },
  toResource: (row) => ({ ...row }),
};

export const availabilityZones: CollectionDefinition = {
  name: 'availability-zones',
  table: 'availability_zones',
  columns: ['id', 'name'],
  filters: { name: eq('name') },
  toResource: (row) => ({ ...row }),
};

export const pops: CollectionDefinition = {
  name: 'pops',
  table: 'pops',
  columns: ['id', 'name', 'facility', 'metro_area_network', `${idsOf('devices', 'pop')} AS devices`],
  jsonColumns: ['devices'],
  filters: {
    facility: eq('facility'),
    metro_area_network: eq('metro_area_network'),
    ...capabilityFilters('p.pop = t.id'),
  },
  toResource: (row) => ({ ...row }),
};

export const devices: CollectionDefinition = {
  name: 'devices',
  table: 'devices',
  columns: ['id', 'name', 'pop', 'max_lag', '(SELECT facility FROM pops WHERE pops.id = t.pop) AS facility'],
  filters: {
    name: eq('name'),
    pop: eq('pop'),
    facility: (value, params) => `t.pop IN (SELECT id FROM pops WHERE facility = ${params.bind(value)})`,
    metro_area_network: (value, params) =>
      `t.pop IN (SELECT id FROM pops WHERE metro_area_network = ${params.bind(value)})`,
    ...capabilityFilters('p.device = t.id'),
  },
  relations: [
    {
      property: 'capabilities',
      // Free ports per speed and media type are what a device can still offer.
      sql: `SELECT device AS owner, speed, media_type, SUM(connection IS NULL) AS availability
              FROM ports WHERE device IN (:owners) GROUP BY device, speed, media_type ORDER BY speed, media_type`,
      collect: (rows: Row[]) => rows,
    },
  ],
  toResource: (row) => {
    const { max_lag, capabilities, ...device } = row;
    return {
      ...device,
      capabilities: (capabilities as Row[]).map((c) => ({
        availability: Number(c.availability),
        max_lag,
        media_type: c.media_type,
        speed: Number(c.speed),
      })),
    };
  },
};

export const ports: CollectionDefinition = {
  name: 'ports',
  table: 'ports',
  columns: [
    'id',
    ...STATEFUL_COLUMNS,
    'connection',
    'speed',
    'name',
    'media_type',
    'operational_state',
    'device',
    'pop',
  ],
  jsonColumns: ['status', 'role_assignments'],
  filters: {
    ...STATEFUL_FILTERS,
    media_type: eq('media_type'),
    pop: eq('pop'),
    name: eq('name'),
    device: eq('device'),
    speed: eq('speed'),
    connection: eq('connection'),
  },
  toResource: (row) => ({ ...row }),
};

const OFFERING_COMMON = [
  'id',
  'type',
  'name',
  'display_name',
  'resource_type',
  'handover_metro_area',
  'handover_metro_area_network',
  'service_provider',
  'physical_port_speed',
  'downgrade_allowed',
  'upgrade_allowed',
  'bandwidth_min',
  'bandwidth_max',
  'contract_terms',
  'notice_period',
  'contract_initial_period',
  'contract_initial_notice_period',
  'contract_renewal_period',
  'contract_renewal_notice_period',
  'orderable_not_before',
  'orderable_not_after',
  'exchange_logo',
  'product_logo',
  'service_provider_logo',
] as const;

/** Which columns each offering type shows besides the common ones. */
const OFFERING_FIELDS: Record<string, readonly string[]> = {
  connection: ['handover_pop', 'cross_connect_initiator', 'maximum_port_quantity', 'required_contact_roles'],
  exchange_lan: ['provider_vlans', 'service_metro_area', 'service_metro_area_network'],
  p2p_vc: ['provider_vlans', 'service_metro_area', 'service_metro_area_network'],
  mp2mp_vc: ['provider_vlans', 'service_metro_area', 'service_metro_area_network'],
  p2mp_vc: ['provider_vlans', 'service_metro_area', 'service_metro_area_network'],
  cloud_vc: [
    'provider_vlans',
    'service_metro_area',
    'service_metro_area_network',
    'delivery_method',
    'diversity',
    'service_provider_region',
    'service_provider_pop',
    'service_provider_workflow',
  ],
};

const timestamp = (value: unknown) => (value instanceof Date ? value.toISOString() : (value ?? null));

export const productOfferings: CollectionDefinition = {
  name: 'product-offerings',
  table: 'product_offerings',
  columns: [...new Set([...OFFERING_COMMON, ...Object.values(OFFERING_FIELDS).flat()])],
  jsonColumns: ['required_contact_roles'],
  filters: {
    type: eq('type'),
    resource_type: eq('resource_type'),
    name: eq('name'),
    handover_metro_area: eq('handover_metro_area'),
    handover_metro_area_network: eq('handover_metro_area_network'),
    handover_pop: eq('handover_pop'),
    service_metro_area: eq('service_metro_area'),
    service_metro_area_network: eq('service_metro_area_network'),
    service_provider: eq('service_provider'),
    downgrade_allowed: booleanEq('downgrade_allowed'),
    upgrade_allowed: booleanEq('upgrade_allowed'),
    bandwidth: (value, params) => {
      const v = params.bind(value);
      return `(t.bandwidth_min IS NULL OR t.bandwidth_min <= ${v}) AND (t.bandwidth_max IS NULL OR t.bandwidth_max >= ${v})`;
    },
    physical_port_speed: eq('physical_port_speed'),
    service_provider_region: eq('service_provider_region'),
    service_provider_pop: eq('service_provider_pop'),
    delivery_method: eq('delivery_method'),
    // A key names a circuit the customer created at the provider; it selects the provider-first
    // offerings whose key pattern it matches.
    cloud_key: (value, params) =>
      `t.type = 'cloud_vc' AND t.service_provider_workflow = 'provider_first' AND ${params.bind(value)} REGEXP t.cloud_key_pattern`,
    contract_initial_period: eq('contract_initial_period'),
    contract_initial_notice_period: eq('contract_initial_notice_period'),
    contract_renewal_period: eq('contract_renewal_period'),
    contract_renewal_notice_period: eq('contract_renewal_notice_period'),
  },
  toResource: (row) => {
    const type = String(row.type);
    const offering: Record<string, unknown> = {};
    for (const column of [...OFFERING_COMMON, ...(OFFERING_FIELDS[type] ?? [])])
      offering[column] = row[column];
    offering.downgrade_allowed = Boolean(row.downgrade_allowed);
    offering.upgrade_allowed = Boolean(row.upgrade_allowed);
    offering.orderable_not_before = timestamp(row.orderable_not_before);
    offering.orderable_not_after = timestamp(row.orderable_not_after);
    return offering;
  },
};

export const networkFeatures: CollectionDefinition = {
  name: 'network-features',
  table: 'network_features',
  columns: [
    'id',
    'type',
    'name',
    'network_service',
    'required',
    'asn',
    'fqdn',
    'looking_glass_url',
    'address_families',
    'session_mode',
    'available_bgp_session_types',
    'ip_v4',
    'ip_v6',
    'flags',
    'nfc_required_contact_roles',
  ],
  jsonColumns: ['address_families', 'available_bgp_session_types', 'flags', 'nfc_required_contact_roles'],
  filters: {
    type: eq('type'),
    required: booleanEq('required'),
    network_service: eq('network_service'),
    name: eq('name'),
  },
  toResource: (row) => ({ ...row, required: Boolean(row.required), asn: Number(row.asn) }),
};

export const roles: CollectionDefinition = {
  name: 'roles',
  table: 'roles',
  columns: ['id', 'name', 'required_fields'],
  jsonColumns: ['required_fields'],
  filters: {
    name: eq('name'),
    // Roles held by a contact the caller sees; another account's contacts match nothing.
    contact: (value, params, accounts = []) =>
      `t.id IN (SELECT ra.role FROM role_assignments ra JOIN contacts c ON c.id = ra.contact
                 WHERE ra.contact = ${params.bind(value)} AND ${ownedScope(params.bind(accounts.length ? accounts : ['']), 'c')})`,
  },
  toResource: (row) => ({ ...row }),
};
