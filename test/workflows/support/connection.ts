/** A connection behind fake activities, for the tests of its workflow. */
import type { ConnectionAgenda, ConnectionPlacement } from '../../../db/repositories/connection-repository';
import { FakeActivities, FakeResource } from './fakes';
import type { Run } from './tier';
import { eventually, stepIs } from './tier';

export const connectionId = 'con-1';
/** Reads of the stored connection, left out where the order of device work and moves matters. */
export const READS = ['connectionAgenda', 'connectionPlacement'] as const;

/** A connection as ordered: one port allocated on an edge device, the exchange doing the cross-connect. */
export function connection(
  change: Partial<ConnectionAgenda> = {},
  placementChange: Partial<ConnectionPlacement & { crossConnectDelayMs: number }> = {},
) {
  const resource = new FakeResource<ConnectionAgenda>({
    state: 'requested',
    cancelRequested: false,
    billed: false,
    decommissionAt: null,
    reservationDue: null,
    reservationsWaiting: 0,
    loaUploaded: false,
    ...change,
  });
  const placement: ConnectionPlacement & { crossConnectDelayMs: number } = {
    id: connectionId,
    state: 'requested',
    mode: 'lag_lacp',
    lacp_timeout: null,
    device: 'dev-fra-edge',
    lag_name: 'ae5',
    ports: [{ id: 'port-1', name: 'et-0/0/1' }],
    leaving: [],
    cross_connect_initiator: 'exchange',
    subscriber_side_demarcs: ['demarc-1'],
    crossConnectDelayMs: 0,
    ...placementChange,
  };
  let commits = 0;
  const fakes = new FakeActivities()
    .on('connectionAgenda', () => resource.read())
    .on('connectionPlacement', () => (resource.agenda ? structuredClone(placement) : null))
    .on('moveConnection', ({ event, status }) => resource.move(event, status))
    .on('recordConnectionStatus', ({ status }) => resource.record(status))
    .on('configureConnection', () => ({ commitId: `commit-${++commits}` }))
    .on('checkConnectionOptics', () => ({ outOfRange: [] }))
    .on('deconfigureConnection', () => ({ commitId: 'teardown' }))
    .on('releaseConnectionPorts', () => 1);
  return { resource, fakes };
}

export const start = (run: Run, input: object = {}) =>
  run.start<string>('provisionConnection', { connectionId, ...input });

/** Starts a connection and waits until it is in production, waiting there. */
export async function inProduction(run: Run, resource: FakeResource<ConnectionAgenda>) {
  const handle = await start(run);
  await eventually('production', () => resource.state === 'production');
  await stepIs(handle, 'in production');
  return handle;
}
