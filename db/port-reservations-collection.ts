import type { CollectionDefinition } from './collection';
import { eq, notEq } from './collection';
import { storedAs } from '../domain/families';

/** Port reservations as IX-API lists them: one per port a connection holds or held. */
export const portReservations: CollectionDefinition = {
  ...storedAs('port_reservation'),
  columns: [
    'id',
    'state',
    'status',
    'connection',
    'port',
    'subscriber_side_demarc',
    'exchange_side_demarc',
    'connecting_party',
    'cross_connect_id',
    'external_ref',
    'purchase_order',
    'contract_ref',
    'decommission_at',
    'charged_until',
    'current_billing_start_date',
  ],
  jsonColumns: ['status'],
  filters: {
    state: eq('state'),
    state__is_not: notEq('state'),
    connection: eq('connection'),
    port: eq('port'),
    external_ref: eq('external_ref'),
  },
  toResource: (row) => row,
};
