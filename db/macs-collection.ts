import { normaliseMac } from '../domain/macs';
import type { CollectionDefinition } from './collection';
import { eq, instantOf, VALIDITY_FILTERS } from './collection';
import { storedAs } from '../domain/families';

/**
 * MAC addresses registered by customers. `valid_not_before=T` lists the addresses usable from T on
 * (no start, or one at or before T); `valid_not_after=T` those still valid at T (no end, or one at
 * or after T); `network_service_config` lists the addresses a config lets through.
 */
export const macs: CollectionDefinition = {
  ...storedAs('mac'),
  columns: [
    'id',
    'managing_account',
    'consuming_account',
    'external_ref',
    'address',
    'valid_not_before',
    'valid_not_after',
  ],
  filters: {
    managing_account: eq('managing_account'),
    consuming_account: eq('consuming_account'),
    external_ref: eq('external_ref'),
    address: (value, params) => `t.address = ${params.bind(normaliseMac(String(value)))}`,
    network_service_config: (value, params) =>
      `t.id IN (SELECT mac FROM network_service_config_macs WHERE network_service_config = ${params.bind(value)})`,
    ...VALIDITY_FILTERS,
  },
  toResource: (row) => ({
    ...row,
    valid_not_before: instantOf(row.valid_not_before),
    valid_not_after: instantOf(row.valid_not_after),
  }),
};
