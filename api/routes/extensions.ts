import type Ajv from 'ajv';
import type { Sequelize } from 'sequelize';
import { eventScopeSql, events } from '../../db/events-collection';
import type { OpenApiDocument } from '../../spec';
import type { CollectionEntry, Visibility } from '../collections';
import { collectionOperations, listOperation, staticSource } from '../collections';
import type { PayloadLayout } from '../event-payloads';
import { createEventPresenter } from '../event-payloads';
import type { Caller, OperationDefinition } from '../operations';

/**
 * The extension announcing that writes take an `Idempotency-Key` header (see api/idempotency.ts);
 * the conformance suite checks retries where a server announces it under this name.
 */
export const IDEMPOTENCY_EXTENSION = 'idempotency-key';

/**
 * The extension announcing that GET /events takes `resource`, the id of the resource whose events
 * to list: a client checks for it before relying on the filter, since a server without it ignores
 * the parameter (as every unknown one) and answers every event.
 */
export const EVENTS_RESOURCE_EXTENSION = 'events-resource-filter';

/**
 * What this implementation adds to IX-API: the event log at GET /events (with its filter by
 * resource), announced by GET /extensions, and retry-safe writes with an `Idempotency-Key`. Each account reads the events
 * recorded for the accounts it acts for (about resources they own, consume or, as a circuit's B side
 * or a rule's member, take part in), each payload shown as the reads of `registry` show its
 * resources to that account.
 */
export function eventsCollection(
  registry: readonly CollectionEntry[],
  declared?: Readonly<Record<string, PayloadLayout>>,
): CollectionEntry {
  const presenter = createEventPresenter(registry, declared);
  return {
    collection: events,
    list: 'events_list',
    scope: (visibility) => (_value, params) =>
      eventScopeSql(params.bind(visibility.accounts), params.bind(presenter.types)),
    present: (event, visibility) => presenter.present(event, visibility),
  };
}

export function extensionOperations(deps: {
  sequelize: Sequelize;
  document: OpenApiDocument;
  ajv: Ajv;
  publicBaseUrl: string;
  visibility: (caller: Caller) => Promise<Visibility>;
  /** The collections whose presentation event payloads follow. */
  registry: readonly CollectionEntry[];
  /** The kinds of event declared families declare, with what their payloads hold. */
  declaredEvents?: Readonly<Record<string, PayloadLayout>>;
}): OperationDefinition[] {
  const { publicBaseUrl } = deps;
  const announce = (name: string, documentation: string) => ({
    name,
    publisher: 'IX-API provisioning service',
    documentation_url: `${publicBaseUrl}/docs#${documentation}`,
    base_url: publicBaseUrl,
    spec_url: `${publicBaseUrl}/spec`,
  });
  return [
    ...collectionOperations({ ...deps, entries: [eventsCollection(deps.registry, deps.declaredEvents)] }),
    listOperation({
      operationId: 'api_extensions_list',
      document: deps.document,
      ajv: deps.ajv,
      filters: [],
      authenticated: false,
      source: staticSource(
        [
          announce('events', 'events_list'),
          announce(IDEMPOTENCY_EXTENSION, 'section/Retrying-writes'),
          announce(EVENTS_RESOURCE_EXTENSION, 'events_list'),
        ],
        'name',
      ),
    }),
  ];
}
