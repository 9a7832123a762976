import type Ajv from 'ajv';
import type { Sequelize } from 'sequelize';
import { events } from '../../db/events-collection';
import type { OpenApiDocument } from '../../spec';
import type { CollectionEntry } from '../collections';
import { collectionOperations, listOperation, staticSource } from '../collections';
import type { OperationDefinition } from '../operations';

/**
 * What this implementation adds to IX-API: the event log at GET /events (each account reads its
 * own events), announced by GET /extensions.
 */
export const EVENTS_COLLECTION: CollectionEntry = {
  collection: events,
  list: 'events_list',
  scope: (caller) => (_value, params) => `t.account = ${params.bind(caller.accountId)}`,
};

export function extensionOperations(deps: {
  sequelize: Sequelize;
  document: OpenApiDocument;
  ajv: Ajv;
  publicBaseUrl: string;
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
      ]),
    }),
  ];
}
