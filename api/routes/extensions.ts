import type Ajv from 'ajv';
import type { Sequelize } from 'sequelize';
import { events } from '../../db/events-collection';
import type { OpenApiDocument } from '../../spec';
import type { CollectionEntry, Visibility } from '../collections';
import { collectionOperations, listOperation, staticSource } from '../collections';
import type { Caller, OperationDefinition } from '../operations';

/**
 * The extension announcing that writes take an `Idempotency-Key` header (see api/idempotency.ts);
 * the conformance suite checks retries where a server announces it under this name.
 */
export const IDEMPOTENCY_EXTENSION = 'idempotency-key';

/**
 * What this implementation adds to IX-API: the event log at GET /events (each account reads the events of
 * the accounts it acts for, including those about resources they consume), announced by GET /extensions,
 * and retry-safe writes with an `Idempotency-Key`.
 */
export const EVENTS_COLLECTION: CollectionEntry = {
  collection: events,
  list: 'events_list',
  scope: (visibility) => (_value, params) => {
    const accounts = params.bind(visibility.accounts);
    return `(t.account IN (${accounts}) OR t.also_account IN (${accounts}))`;
  },
};

export function extensionOperations(deps: {
  sequelize: Sequelize;
  document: OpenApiDocument;
  ajv: Ajv;
  publicBaseUrl: string;
  visibility: (caller: Caller) => Promise<Visibility>;
}): OperationDefinition[] {
  const { publicBaseUrl } = deps;
  return [
    ...collectionOperations({ ...deps, entries: [EVENTS_COLLECTION] }),
    listOperation({
      operationId: 'api_extensions_list',
      document: deps.document,
      ajv: deps.ajv,
      filters: [],
      authenticated: false,
      source: staticSource([
        {
          name: 'events',
          publisher: 'IX-API provisioning service',
          documentation_url: `${publicBaseUrl}/docs#events_list`,
          base_url: publicBaseUrl,
          spec_url: `${publicBaseUrl}/spec`,
        },
        {
          name: IDEMPOTENCY_EXTENSION,
          publisher: 'IX-API provisioning service',
          documentation_url: `${publicBaseUrl}/docs#section/Retrying-writes`,
          base_url: publicBaseUrl,
          spec_url: `${publicBaseUrl}/spec`,
        },
      ]),
    }),
  ];
}
