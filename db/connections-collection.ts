import { CONNECTION_OUTER_ETHERTYPES, CONNECTION_VLAN_TYPES } from '../domain/connections';
import type { CollectionDefinition, FilterSql } from './collection';
import { eq, idsOf, notEq, ROLE_FILTERS, STATEFUL_COLUMNS, STATEFUL_FILTERS } from './collection';
import { storedAs } from '../domain/families';

/** Connections whose PoP is one of those the SQL selects. */
const popIn =
  (select: string): FilterSql =>
  (value, params) =>
    `t.pop IN (${select.replace(':value', params.bind(value))})`;

/** Connections as IX-API lists them; their ports are the ports rows that name them. */
export const connections: CollectionDefinition = {
  ...storedAs('connection'),
  columns: [
    'id',
    'name',
    ...STATEFUL_COLUMNS,
    'product_offering',
    'pop',
    'mode',
    'lacp_timeout',
    'port_quantity',
    'subscriber_side_demarcs',
    'speed',
    'capacity_allocation_limit',
    'decommission_at',
    'charged_until',
    'current_billing_start_date',
    `${idsOf('ports', 'connection')} AS ports`,
    `${idsOf('port_reservations', 'connection')} AS port_reservations`,
    // Capacity the connection's live service configs booked (a config without a limit books none).
    `(SELECT COALESCE(SUM(n.capacity), 0) FROM network_service_configs n
       WHERE n.connection = t.id AND n.vlan_held) AS capacity_allocated`,
  ],
  jsonColumns: ['status', 'role_assignments', 'subscriber_side_demarcs', 'ports', 'port_reservations'],
  filters: {
    ...STATEFUL_FILTERS,
    mode: eq('mode'),
    mode__is_not: notEq('mode'),
    name: eq('name'),
    pop: eq('pop'),
    metro_area_network: popIn('SELECT id FROM pops WHERE metro_area_network = :value'),
    facility: popIn('SELECT id FROM pops WHERE facility = :value'),
    metro_area: popIn(
      'SELECT p.id FROM pops p JOIN metro_area_networks m ON m.id = p.metro_area_network WHERE m.metro_area = :value',
    ),
    // A connection can carry a network service of its own metro area network.
    supported_network_service: popIn(
      'SELECT p.id FROM pops p JOIN network_services s ON s.metro_area_network = p.metro_area_network WHERE s.id = :value',
    ),
    ...ROLE_FILTERS,
  },
  toResource: (row) => ({
    ...row,
    port_quantity: Number(row.port_quantity),
    capacity_allocated: Number(row.capacity_allocated),
    vlan_types: CONNECTION_VLAN_TYPES,
    outer_vlan_ethertypes: CONNECTION_OUTER_ETHERTYPES,
  }),
};
