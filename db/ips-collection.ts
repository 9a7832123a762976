import type { CollectionDefinition } from './collection';
import { eq, instantOf, VALIDITY_FILTERS } from './collection';
import { storedAs } from '../domain/families';

/**
 * IP addresses: those the exchange allocated to network service configs from its services'
 * subnets, and those customers registered themselves. `valid_not_before=T` lists the addresses
 * usable from T on, `valid_not_after=T` those still valid at T (as for MAC addresses).
 */
export const ipAddresses: CollectionDefinition = {
  ...storedAs('ip'),
  columns: [
    'id',
    'managing_account',
    'consuming_account',
    'external_ref',
    'version',
    'address',
    'prefix_length',
    'fqdn',
    'valid_not_before',
    'valid_not_after',
  ],
  filters: {
    managing_account: eq('managing_account'),
    consuming_account: eq('consuming_account'),
    external_ref: eq('external_ref'),
    network_service: eq('network_service'),
    network_service_config: eq('network_service_config'),
    // Route-server sessions use the addresses of their configs; none hold one of their own.
    network_feature: () => '1 = 0',
    network_feature_config: () => '1 = 0',
    version: eq('version'),
    fqdn: eq('fqdn'),
    prefix_length: eq('prefix_length'),
    ...VALIDITY_FILTERS,
  },
  toResource: (row) => ({
    ...row,
    version: Number(row.version),
    prefix_length: Number(row.prefix_length),
    valid_not_before: instantOf(row.valid_not_before),
    valid_not_after: instantOf(row.valid_not_after),
  }),
};
