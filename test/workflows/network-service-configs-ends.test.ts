import assert from 'node:assert/strict';
import { refusal } from './support/fakes';
import { READS, config, inProduction, start } from './support/network-service-config';
import { SIGNALS, dayFromToday, eventually, lookedAgain, stepIs, withWorker } from './support/tier';

describe('provisionNetworkServiceConfig: how it ends (the lifecycle framing)', () => {
  it('decommissions on a decommission day that has come: off the device, then decommissioned', async () => {
    const { resource, fakes } = config();
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(resource.events().slice(3), ['decommission']);
      assert.equal(resource.lastStatus()!.tag, 'decommissioned');
      assert.deepEqual(fakes.names([...READS]).slice(-2), [
        'deconfigureNetworkServiceConfig',
        'moveNetworkServiceConfig',
      ]);
    });
  });

  it('decommissions a config whose DELETE got in while it went live, after the move to production had gone through', async () => {
    const { resource, fakes } = config();
    let deleted = false;
    fakes.on('moveNetworkServiceConfig', async ({ event, status }) => {
      if (event === 'go_live' && !deleted) {
        // The first attempt went live but its answer was lost; a DELETE came in before the retry.
        deleted = true;
        await resource.move(event, status);
        resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
      }
      return resource.move(event, status);
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(resource.events().slice(-2), ['go_live', 'decommission']);
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 1);
    });
  });

  it('waits for a decommission day ahead, until an operator signals decommissionNow', async () => {
    const { resource, fakes } = config();
    const day = dayFromToday(2);
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'decommission_requested', decommissionAt: day });
      await handle.signal(SIGNALS.reconsider);
      await stepIs(handle, `decommissioning on ${day}`);
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 0);
      await handle.signal(SIGNALS.decommissionNow);
      assert.equal(await handle.result(), 'decommissioned');
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 1);
    });
  });

  it('is cancelled while it waits: taken off the device, then cancelled', async () => {
    const { resource, fakes } = config({ connectionState: 'allocated' });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the waiting note', () => resource.notes.length === 1);
      resource.set({ cancelRequested: true });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(resource.events(), ['cancel']);
      assert.equal(resource.lastStatus()!.tag, 'cancelled');
      assert.equal(fakes.callsOf('configureNetworkServiceConfig').length, 0);
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 1);
    });
  });

  it('goes on taking a cancelled config off the device when the API writes to it while an operator is awaited', async () => {
    const { resource, fakes } = config({ connectionState: 'allocated' });
    fakes.on('deconfigureNetworkServiceConfig', () => {
      if (fakes.callsOf('deconfigureNetworkServiceConfig').length === 1) throw refusal('device locked');
      return { commitId: 'teardown' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the waiting note', () => resource.notes.length === 1);
      resource.set({ cancelRequested: true });
      await handle.signal(SIGNALS.reconsider);
      await eventually('error', () => resource.state === 'error');
      await stepIs(handle, 'waiting for an operator');
      // Another write reaches the resource (the cancellation is still asked): the workflow looks
      // again and keeps waiting for the operator, instead of failing its task over and over.
      resource.set({ revision: 2 });
      await lookedAgain(handle, () => fakes.callsOf('networkServiceConfigAgenda').length);
      await stepIs(handle, 'waiting for an operator');
      await handle.signal(SIGNALS.retryProvisioning);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(resource.events(), ['fail', 'cancel']);
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 2);
    });
  });

  it('cancels at once a config whose cancellation was asked before it started', async () => {
    const { resource, fakes } = config({ cancelRequested: true });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(fakes.names([...READS]), [
        'deconfigureNetworkServiceConfig',
        'moveNetworkServiceConfig',
      ]);
      assert.deepEqual(resource.events(), ['cancel']);
    });
  });

  it('ends as deleted when the config is gone, at the start or while it waits', async () => {
    const gone = config();
    gone.resource.agenda = null;
    await withWorker(gone.fakes, async (run) => {
      assert.equal(await (await start(run)).result(), 'deleted');
      assert.deepEqual(gone.fakes.names([...READS]), []);
    });
    const later = config({ connectionState: 'requested' });
    await withWorker(later.fakes, async (run) => {
      const handle = await start(run);
      await eventually('the waiting note', () => later.resource.notes.length === 1);
      later.resource.agenda = null;
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'deleted');
      assert.deepEqual(later.fakes.names([...READS, 'recordNetworkServiceConfigStatus']), []);
    });
  });

  it('ends at once on a config that has ended, and provisions nothing for one billed already', async () => {
    const ended = config({ state: 'decommissioned', billed: true });
    await withWorker(ended.fakes, async (run) => {
      assert.equal(await (await start(run)).result(), 'decommissioned');
      assert.deepEqual(ended.fakes.names([...READS]), []);
    });
    // As a run continued as new starts: in production, with the revision the device carries.
    const live = config({ state: 'production', billed: true });
    await withWorker(live.fakes, async (run) => {
      const handle = await start(run, { configuredRevision: 1 });
      await stepIs(handle, 'in production');
      assert.deepEqual(live.fakes.names([...READS]), []);
      // A cancellation asked for once billing started is not one: the config stays.
      live.resource.set({ cancelRequested: true });
      await lookedAgain(handle, () => live.fakes.callsOf('networkServiceConfigAgenda').length);
      await stepIs(handle, 'in production');
      assert.deepEqual(live.fakes.names([...READS]), []);
    });
  });
});
