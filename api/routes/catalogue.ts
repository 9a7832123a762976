import * as catalogue from '../../db/catalogue';
import { ownedScope } from '../../db/scope';
import { CONFIG_TYPES } from '../../domain/network-service-configs';
import type { CollectionEntry } from '../collections';
import type { ResourceFamily } from '../families';
import type { SupportedTypes } from './discovery';

/** The read-only catalogue, one registry entry per collection. */
export const CATALOGUE_COLLECTIONS: readonly CollectionEntry[] = [
  { collection: catalogue.facilities, list: 'facilities_list', read: 'facilities_read' },
  { collection: catalogue.devices, list: 'devices_list', read: 'devices_read' },
  { collection: catalogue.pops, list: 'pops_list', read: 'pops_read' },
  { collection: catalogue.metroAreas, list: 'metro_areas_list', read: 'metro_areas_read' },
  {
    collection: catalogue.metroAreaNetworks,
    list: 'metro_area_networks_list',
    read: 'metro_area_networks_read',
  },
  {
    collection: catalogue.availabilityZones,
    list: 'availability_zones_list',
    read: 'availability_zones_read',
  },
  {
    collection: catalogue.productOfferings,
    list: 'product_offerings_list',
    read: 'product_offerings_read',
    projection: true,
  },
  // Ports belong to whoever manages or consumes them; the exchange's spare ports are its own.
  {
    collection: catalogue.ports,
    list: 'ports_list',
    read: 'ports_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
  { collection: catalogue.networkFeatures, list: 'network_features_list', read: 'network_features_read' },
  { collection: catalogue.roles, list: 'roles_list', read: 'roles_read', filtersNeedScope: true },
];

/**
 * The types of network services, configs and features this exchange serves: its LANs and the
 * virtual circuits customers order, with route servers on the LANs.
 */
export const CATALOGUE_TYPES: SupportedTypes = {
  supported_network_service_types: ['exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'],
  supported_network_service_config_types: [...CONFIG_TYPES],
  supported_network_feature_types: ['route_server'],
  supported_network_feature_config_types: ['route_server'],
};

/** The catalogue as a family: read only, with the traffic statistics of ports. */
export const catalogueFamily: ResourceFamily = {
  name: 'catalogue',
  collections: () => CATALOGUE_COLLECTIONS,
  asynchronous: false,
  statistics: ['port'],
  operations: () => ({ handlers: [] }),
};
