import type { CollectionDefinition } from './collection';

/**
 * The event log (an extension of IX-API): what happened, in order, per account. An event is
 * recorded for one or two accounts (`account`, `also_account`); the API shapes each for its reader.
 */
export const events: CollectionDefinition = {
  name: 'events',
  table: 'events',
  key: 'serial',
  changeColumn: 'serial',
  appendOnly: true,
  columns: ['serial', 'type', 'payload', 'timestamp', 'account', 'also_account'],
  jsonColumns: ['payload'],
  filters: {
    serial_gt: (value, params) => `t.serial > ${params.bind(value)}`,
    type: (value, params) => `t.type = ${params.bind(value)}`,
    // The id of the resource an event is about, as the writers stored it (domain/events.ts).
    resource: (value, params) => `t.resource = ${params.bind(value)}`,
  },
  toResource: (row) => ({
    serial: Number(row.serial),
    type: row.type,
    payload: row.payload,
    timestamp: row.timestamp instanceof Date ? row.timestamp.toISOString() : row.timestamp,
    account: row.account,
    also_account: row.also_account,
  }),
};

/**
 * The events a caller reads, on `t`: those recorded for an account it acts for, of a kind the API
 * knows how to show. `accounts` and `types` are bound already.
 */
export const eventScopeSql = (accounts: string, types: string) =>
  `((t.account IN (${accounts}) OR t.also_account IN (${accounts})) AND t.type IN (${types}))`;
