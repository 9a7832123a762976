import type { OpenApiDocument } from '../spec';
import type { CollectionEntry } from './collections';
import type { PayloadLayout } from './event-payloads';
import type { FamilyDeps, ResourceFamily } from './families';
import { checkRegistry, operationsOf } from './families';
import type { OperationDefinition } from './operations';
import { accountsFamily } from './routes/accounts';
import { catalogueFamily } from './routes/catalogue';
import { connectionsFamily } from './routes/connections';
import { contactsFamily } from './routes/contacts';
import { ipsFamily } from './routes/ips';
import { macsFamily } from './routes/macs';
import { memberJoiningRulesFamily } from './routes/member-joining-rules';
import { networkFeatureConfigsFamily } from './routes/network-feature-configs';
import { networkServiceConfigsFamily } from './routes/network-service-configs';
import { networkServicesFamily } from './routes/network-services';
import { portReservationsFamily } from './routes/port-reservations';
import { statisticsOperations } from './routes/statistics';

/**
 * Every resource family the server routes, each with its collections, how it answers writes and
 * its operations: the one registry that lists, reads, writes and the event log go by.
 */
export const RESOURCE_FAMILIES: readonly ResourceFamily[] = [
  catalogueFamily,
  accountsFamily,
  contactsFamily,
  connectionsFamily,
  portReservationsFamily,
  macsFamily,
  memberJoiningRulesFamily,
  ipsFamily,
  networkServicesFamily,
  networkServiceConfigsFamily,
  networkFeatureConfigsFamily,
];

/**
 * Every IX-API collection the server lists and reads, each with who sees what of it: the one
 * registry that lists, reads and the event log present resources by.
 */
export function collectionRegistry(
  document: OpenApiDocument,
  families: readonly ResourceFamily[] = RESOURCE_FAMILIES,
): readonly CollectionEntry[] {
  return families.flatMap((family) => family.collections(document));
}

/** The kinds of event the families declare themselves, with what their payloads hold. */
export function declaredEvents(families: readonly ResourceFamily[]): Readonly<Record<string, PayloadLayout>> {
  return Object.assign({}, ...families.map((family) => family.events ?? {})) as Record<string, PayloadLayout>;
}

/**
 * Every operation of the registry's families, their statistics included. Throws (at start-up) when
 * the registry does not match the document: an operation it does not know, one routed twice, or a
 * documented write no family handles.
 */
export function familyOperations(
  deps: FamilyDeps,
  families: readonly ResourceFamily[] = RESOURCE_FAMILIES,
): OperationDefinition[] {
  const operations = [
    ...families.flatMap((family) => operationsOf(family, deps)),
    ...statisticsOperations({
      traffic: deps.db.traffic,
      intervalSeconds: deps.settings.statsSampleIntervalSeconds,
      writes: deps.writes,
      subjects: families.flatMap((family) => family.statistics ?? []),
      clock: deps.clock,
    }),
  ];
  checkRegistry(
    deps.document,
    operations.map((operation) => operation.operationId),
  );
  return operations;
}
