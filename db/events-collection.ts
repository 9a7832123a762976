import type { CollectionDefinition } from './collection';

/** The event log (an extension of IX-API): what happened, in order, per account. */
export const events: CollectionDefinition = {
  name: 'events',
  table: 'events',
  key: 'serial',
  changeColumn: 'serial',
  columns: ['serial', 'type', 'payload', 'timestamp', 'account'],
  jsonColumns: ['payload'],
  filters: {
    serial_gt: (value, params) => `t.serial > ${params.bind(value)}`,
    type: (value, params) => `t.type = ${params.bind(value)}`,
  },
  toResource: (row) => ({
    serial: Number(row.serial),
    type: row.type,
    payload: row.payload,
    timestamp: row.timestamp instanceof Date ? row.timestamp.toISOString() : row.timestamp,
    account: row.account,
  }),
};
