import type { OpenApiDocument } from '../spec';
import type { CollectionEntry } from './collections';
import { redactionPlanFor } from './redaction-plans';
import { accountsCollection } from './routes/accounts';
import { CATALOGUE_COLLECTIONS } from './routes/catalogue';
import { CONNECTION_COLLECTIONS } from './routes/connections';
import { CONTACT_COLLECTIONS } from './routes/contacts';
import { IP_COLLECTIONS } from './routes/ips';
import { MAC_COLLECTIONS } from './routes/macs';
import { MEMBER_JOINING_RULE_COLLECTIONS } from './routes/member-joining-rules';
import { NETWORK_FEATURE_CONFIG_COLLECTIONS } from './routes/network-feature-configs';
import { NETWORK_SERVICE_CONFIG_COLLECTIONS } from './routes/network-service-configs';
import { networkServiceCollections } from './routes/network-services';
import { PORT_RESERVATION_COLLECTIONS } from './routes/port-reservations';

/**
 * Every IX-API collection the server lists and reads, each with who sees what of it: the one
 * registry that lists, reads and the event log present resources by.
 */
export function collectionRegistry(document: OpenApiDocument): readonly CollectionEntry[] {
  return [
    ...CATALOGUE_COLLECTIONS,
    accountsCollection(redactionPlanFor(document, 'Account')),
    ...CONTACT_COLLECTIONS,
    ...CONNECTION_COLLECTIONS,
    ...PORT_RESERVATION_COLLECTIONS,
    ...MAC_COLLECTIONS,
    ...MEMBER_JOINING_RULE_COLLECTIONS,
    ...IP_COLLECTIONS,
    ...networkServiceCollections(document),
    ...NETWORK_SERVICE_CONFIG_COLLECTIONS,
    ...NETWORK_FEATURE_CONFIG_COLLECTIONS,
  ];
}
