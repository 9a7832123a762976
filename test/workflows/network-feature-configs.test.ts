import assert from 'node:assert/strict';
import type { FeatureConfigAgenda } from '../../db/repositories/network-feature-config-repository';
import { FakeActivities, FakeResource, refusal } from './support/fakes';
import type { Run } from './support/tier';
import { SIGNALS, dayFromToday, eventually, lookedAgain, stepIs, withWorker } from './support/tier';

const featureConfigId = 'nfc-1';
const READS = ['networkFeatureConfigAgenda'] as const;

/** A route-server session as ordered, over a network service config in production. */
function session(change: Partial<FeatureConfigAgenda> = {}) {
  const resource = new FakeResource<FeatureConfigAgenda>({
    state: 'requested',
    cancelRequested: false,
    billed: false,
    decommissionAt: null,
    revision: 1,
    configState: 'production',
    ...change,
  });
  const fakes = new FakeActivities()
    .on('networkFeatureConfigAgenda', () => resource.read())
    .on('moveNetworkFeatureConfig', ({ event, status }) => resource.move(event, status))
    .on('recordNetworkFeatureConfigStatus', ({ status }) => resource.record(status))
    .on('configureNetworkFeatureConfig', () => ({
      commitId: `commit-${resource.agenda!.revision}`,
      revision: resource.agenda!.revision,
      routeServer: 'rs1.fra',
    }))
    .on('verifyNetworkFeatureConfig', () => ({ differences: [] }))
    .on('deconfigureNetworkFeatureConfig', () => ({ commitId: 'teardown' }));
  return { resource, fakes };
}

const start = (run: Run, input: object = {}) =>
  run.start<string>('provisionNetworkFeatureConfig', { featureConfigId, recheckMs: 60_000, ...input });

describe('provisionNetworkFeatureConfig', () => {
  it('waits for its network service config to be on the device, then configures the route server and goes live', async () => {
    const { resource, fakes } = session({ configState: 'requested' });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the waiting note', () => resource.notes.length === 1);
      await stepIs(handle, 'waiting for the network service config');
      assert.equal(resource.notes[0][0].tag, 'waiting_for_config');
      assert.match(resource.notes[0][0].message, /network service config is requested/);
      assert.equal(fakes.callsOf('configureNetworkFeatureConfig').length, 0);
      // Allocated is enough: the VLAN is on the device.
      resource.set({ configState: 'allocated' });
      await handle.signal(SIGNALS.reconsider);
      await eventually('production', () => resource.state === 'production');
      await stepIs(handle, 'in production');
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
      assert.equal(resource.moves[0].status[0].tag, 'configured');
      assert.match(resource.moves[0].status[0].message, /rs1\.fra/);
      assert.deepEqual(fakes.names([...READS, 'recordNetworkFeatureConfigStatus']), [
        'configureNetworkFeatureConfig',
        'moveNetworkFeatureConfig',
        'moveNetworkFeatureConfig',
        'verifyNetworkFeatureConfig',
        'moveNetworkFeatureConfig',
      ]);
      assert.deepEqual(fakes.callsOf('verifyNetworkFeatureConfig')[0].input, { featureConfigId });
    });
  });

  it('asks an operator when the route server holds the session otherwise, and configures and tests again after retryTesting', async () => {
    const { resource, fakes } = session();
    fakes.on('verifyNetworkFeatureConfig', () => ({
      differences:
        fakes.callsOf('verifyNetworkFeatureConfig').length === 1 ? ['maxPrefix is 10, not 100'] : [],
    }));
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('operator', () => resource.state === 'operator');
      await stepIs(handle, 'waiting for an operator');
      assert.equal(resource.lastStatus()!.tag, 'route_server_mismatch');
      assert.match(resource.lastStatus()!.message, /maxPrefix is 10, not 100.*signal retryTesting/);
      await handle.signal(SIGNALS.retryTesting);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), [
        'allocate',
        'start_testing',
        'escalate',
        'retry',
        'allocate',
        'start_testing',
        'go_live',
      ]);
      assert.equal(fakes.callsOf('configureNetworkFeatureConfig').length, 2);
    });
  });

  it('configures each new revision once while staying in production', async () => {
    const { resource, fakes } = session();
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('production', () => resource.state === 'production');
      await stepIs(handle, 'in production');
      resource.set({ revision: 2 });
      await handle.signal(SIGNALS.reconsider);
      await eventually('the new revision', () => fakes.callsOf('configureNetworkFeatureConfig').length === 2);
      // Looks finding the same revision configure nothing.
      await lookedAgain(handle, () => fakes.callsOf('networkFeatureConfigAgenda').length);
      await stepIs(handle, 'in production');
      assert.equal(fakes.callsOf('configureNetworkFeatureConfig').length, 2);
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
    });
  });

  it('goes to error when the route server refuses, and configures again after retryProvisioning', async () => {
    const { resource, fakes } = session();
    fakes.on('configureNetworkFeatureConfig', () => {
      if (fakes.callsOf('configureNetworkFeatureConfig').length === 1) throw refusal('peer address unknown');
      return { commitId: 'commit-1', revision: 1, routeServer: 'rs1.fra' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('error', () => resource.state === 'error');
      assert.match(resource.lastStatus()!.message, /Configuring the session failed: peer address unknown/);
      await handle.signal(SIGNALS.retryProvisioning);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), ['fail', 'retry', 'allocate', 'start_testing', 'go_live']);
    });
  });

  it('takes the session off the route server on its decommission day', async () => {
    const { resource, fakes } = session();
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('production', () => resource.state === 'production');
      await stepIs(handle, 'in production');
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(fakes.callsOf('deconfigureNetworkFeatureConfig')[0].input, { featureConfigId });
      assert.equal(resource.lastStatus()!.tag, 'decommissioned');
    });
  });

  it('is cancelled while it waits for its network service config', async () => {
    const { resource, fakes } = session({ configState: 'requested' });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the waiting note', () => resource.notes.length === 1);
      resource.set({ cancelRequested: true });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(fakes.names([...READS, 'recordNetworkFeatureConfigStatus']), [
        'deconfigureNetworkFeatureConfig',
        'moveNetworkFeatureConfig',
      ]);
    });
  });
});
