import type { ConfigType } from '../domain/network-service-configs';
import { CONFIG_FIELDS, TYPED_PROPERTIES } from '../domain/network-service-configs';
import { vlanConfigOf } from '../domain/vlans';
import type { Tagging } from '../domain/vlans';
import type { CollectionDefinition, FilterSql, Row } from './collection';
import { eq, idsOf, numberOrNull, ROLE_FILTERS, STATEFUL_COLUMNS, STATEFUL_FILTERS } from './collection';
import { storedAs } from '../domain/families';

/** A condition on the stored tags; the dot1q tag is stored (and filtered) as the outer tag. */
const tagFilter =
  (condition: string): FilterSql =>
  (value, params) =>
    condition.replace(':value', params.bind(value));

/**
 * Network service configs as IX-API lists them, each with exactly its type's properties: their VLAN
 * config from the stored tags, an exchange-LAN config's IP addresses and the MAC addresses from the
 * rows that name them.
 */
export const networkServiceConfigs: CollectionDefinition = {
  ...storedAs('network_service_config'),
  columns: [
    'id',
    'type',
    ...STATEFUL_COLUMNS,
    'network_service',
    'connection',
    'product_offering',
    'vlan_type',
    'outer_vlan',
    'outer_vlan_ethertype',
    'inner_vlan',
    'capacity',
    'asns',
    'listed',
    'role',
    'handover',
    'cloud_vlan',
    'decommission_at',
    'charged_until',
    'current_billing_start_date',
    `(SELECT COALESCE(JSON_ARRAYAGG(i.id ORDER BY i.version, i.id), JSON_ARRAY()) FROM ip_addresses i
       WHERE i.network_service_config = t.id) AS ips`,
    `(SELECT COALESCE(JSON_ARRAYAGG(m.mac ORDER BY m.position, m.mac), JSON_ARRAY()) FROM network_service_config_macs m
       WHERE m.network_service_config = t.id) AS macs`,
    `${idsOf('network_feature_configs', 'network_service_config')} AS network_feature_configs`,
  ],
  jsonColumns: ['status', 'role_assignments', 'asns', 'ips', 'macs', 'network_feature_configs'],
  filters: {
    ...STATEFUL_FILTERS,
    type: eq('type'),
    network_service: eq('network_service'),
    connection: eq('connection'),
    product_offering: eq('product_offering'),
    capacity: eq('capacity'),
    // The outermost tag on the wire: a qinq outer tag or a dot1q tag.
    outer_vlan: tagFilter('t.outer_vlan = :value'),
    inner_vlan: tagFilter(`t.vlan_type = 'qinq' AND t.inner_vlan = :value`),
    ...ROLE_FILTERS,
  },
  toResource: (row) => {
    const { vlan_type, outer_vlan, outer_vlan_ethertype, inner_vlan, ...config } = row;
    const tagging = {
      vlan_type,
      outer_vlan: outer_vlan === null ? null : Number(outer_vlan),
      outer_vlan_ethertype,
      inner_vlan: inner_vlan === null ? null : Number(inner_vlan),
    } as Tagging;
    const full: Row = {
      ...config,
      vlan_config: vlanConfigOf(tagging),
      capacity: numberOrNull(row.capacity),
      listed: Boolean(row.listed),
      handover: numberOrNull(row.handover),
      cloud_vlan: numberOrNull(row.cloud_vlan),
    };
    // What other types carry is left out; only exchange-LAN configs get addresses.
    const type = row.type as ConfigType;
    const own = new Set<string>(CONFIG_FIELDS[type] ?? []);
    for (const name of TYPED_PROPERTIES) if (!own.has(name)) delete full[name];
    if (type !== 'exchange_lan') delete full.ips;
    return full;
  },
};
