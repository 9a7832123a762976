/** A network service config behind fake activities, for the tests of its workflow. */
import type { ConfigAgenda } from '../../../db/repositories/network-service-config-repository';
import { FakeActivities, FakeResource } from './fakes';
import type { Run } from './tier';
import { eventually, stepIs } from './tier';

export const configId = 'nsc-1';
export const READS = ['networkServiceConfigAgenda'] as const;

/** A config as ordered: its connection in production, no route server required. */
export function config(change: Partial<ConfigAgenda> = {}) {
  const resource = new FakeResource<ConfigAgenda>({
    state: 'requested',
    cancelRequested: false,
    billed: false,
    decommissionAt: null,
    revision: 1,
    connectionState: 'production',
    missingFeatures: [],
    ...change,
  });
  const fakes = new FakeActivities()
    .on('networkServiceConfigAgenda', () => resource.read())
    .on('moveNetworkServiceConfig', ({ event, status }) => resource.move(event, status))
    .on('recordNetworkServiceConfigStatus', ({ status }) => resource.record(status))
    .on('configureNetworkServiceConfig', () => ({
      commitId: `commit-${resource.agenda!.revision}`,
      revision: resource.agenda!.revision,
      tags: 'VLAN 100 on ae-1',
    }))
    .on('verifyNetworkServiceConfig', () => ({ differences: [] }))
    .on('deconfigureNetworkServiceConfig', () => ({ commitId: 'teardown' }));
  return { resource, fakes };
}

export const start = (run: Run, input: object = {}) =>
  run.start<string>('provisionNetworkServiceConfig', { configId, recheckMs: 60_000, ...input });

/** Starts a config and waits until it is in production, waiting there. */
export async function inProduction(run: Run, resource: FakeResource<ConfigAgenda>) {
  const handle = await start(run);
  await eventually('production', () => resource.state === 'production');
  await stepIs(handle, 'in production');
  return handle;
}
