import assert from 'node:assert/strict';
import { refusal } from './support/fakes';
import { READS, config, inProduction, start } from './support/network-service-config';
import { SIGNALS, dayFromToday, eventually, lookedAgain, stepIs, withWorker } from './support/tier';

describe('provisionNetworkServiceConfig in trouble (the lifecycle framing)', () => {
  it('goes to error when the device refuses for good, and configures again after retryProvisioning', async () => {
    const { resource, fakes } = config();
    fakes.on('configureNetworkServiceConfig', () => {
      if (fakes.callsOf('configureNetworkServiceConfig').length === 1)
        throw refusal('VLAN 100 is taken on ae-1');
      return { commitId: 'commit-1', revision: 1, tags: 'VLAN 100 on ae-1' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('error', () => resource.state === 'error');
      await stepIs(handle, 'waiting for an operator');
      const status = resource.lastStatus()!;
      assert.equal(status.tag, 'configuration_failed');
      assert.equal(status.severity, 3);
      assert.match(status.message, /Configuring the service failed: VLAN 100 is taken on ae-1/);
      assert.match(status.message, /signal retryProvisioning/);
      // Not retried by Temporal: one attempt.
      assert.deepEqual(
        fakes.callsOf('configureNetworkServiceConfig').map((call) => call.attempt),
        [1],
      );
      await handle.signal(SIGNALS.retryProvisioning);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), ['fail', 'retry', 'allocate', 'start_testing', 'go_live']);
      assert.equal(resource.moves[1].status[0].tag, 'retrying');
    });
  });

  it('retries a failure that may pass, without troubling anyone', async () => {
    const { resource, fakes } = config();
    fakes.on('configureNetworkServiceConfig', (_input, attempt) => {
      if (attempt === 1) throw new Error('the device did not answer');
      return { commitId: 'commit-1', revision: 1, tags: 'VLAN 100 on ae-1' };
    });
    await withWorker(fakes, async (run) => {
      await start(run);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(
        fakes.callsOf('configureNetworkServiceConfig').map((call) => call.attempt),
        [1, 2],
      );
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
    });
  });

  it('asks an operator when the device reads back otherwise, and tests again after retryTesting', async () => {
    const { resource, fakes } = config();
    fakes.on('verifyNetworkServiceConfig', () => ({
      differences:
        fakes.callsOf('verifyNetworkServiceConfig').length === 1 ? ['outerVlan is 101, not 100'] : [],
    }));
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('operator', () => resource.state === 'operator');
      await stepIs(handle, 'waiting for an operator');
      const status = resource.lastStatus()!;
      assert.equal(status.tag, 'device_mismatch');
      assert.match(status.message, /outerVlan is 101, not 100.*signal retryTesting/);
      // retryProvisioning is not what it waits for.
      await handle.signal(SIGNALS.retryProvisioning);
      await stepIs(handle, 'waiting for an operator');
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
      assert.deepEqual(fakes.names([...READS, 'moveNetworkServiceConfig']), [
        'configureNetworkServiceConfig',
        'verifyNetworkServiceConfig',
        'configureNetworkServiceConfig',
        'verifyNetworkServiceConfig',
      ]);
    });
  });

  it('goes to error when a change fails, and from there straight back to production after retryProvisioning', async () => {
    const { resource, fakes } = config();
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      fakes.on('configureNetworkServiceConfig', () => {
        if (fakes.callsOf('configureNetworkServiceConfig').length === 2) throw refusal('commit refused');
        return { commitId: 'commit-2', revision: 2, tags: 'VLAN 200 on ae-1' };
      });
      resource.set({ state: 'production_change_pending', revision: 2 });
      await handle.signal(SIGNALS.reconsider);
      await eventually('error', () => resource.state === 'error');
      assert.match(resource.lastStatus()!.message, /Changing the service failed: commit refused/);
      await handle.signal(SIGNALS.retryProvisioning);
      await eventually('production', () => resource.state === 'production');
      // No retry move on the way: the change is tried again as it is.
      assert.deepEqual(resource.events().slice(3), ['fail', 'go_live']);
      assert.equal(fakes.callsOf('configureNetworkServiceConfig').length, 3);
      await stepIs(handle, 'in production');
    });
  });

  it('takes a config off the device after retryProvisioning when teardown failed, then decommissions it', async () => {
    const { resource, fakes } = config();
    fakes.on('deconfigureNetworkServiceConfig', () => {
      if (fakes.callsOf('deconfigureNetworkServiceConfig').length === 1) throw refusal('device locked');
      return { commitId: 'teardown' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(-1) });
      await handle.signal(SIGNALS.reconsider);
      await eventually('error', () => resource.state === 'error');
      assert.match(resource.lastStatus()!.message, /Taking the service off the device failed: device locked/);
      await handle.signal(SIGNALS.retryProvisioning);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(resource.events().slice(3), ['fail', 'decommission']);
    });
  });

  it('decommissions instead when a decommission overtakes a change under way', async () => {
    const { resource, fakes } = config();
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      fakes.on('configureNetworkServiceConfig', () => {
        // The API takes a DELETE while the device is being changed.
        resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
        return { commitId: 'commit-2', revision: 2, tags: 'VLAN 200 on ae-1' };
      });
      resource.set({ state: 'production_change_pending', revision: 2 });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(resource.events().slice(3), ['decommission']);
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 1);
    });
  });

  it('is cancelled while it waits for an operator', async () => {
    const { resource, fakes } = config();
    fakes.on('configureNetworkServiceConfig', () => {
      throw refusal('no such interface');
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('error', () => resource.state === 'error');
      resource.set({ cancelRequested: true });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(resource.events(), ['fail', 'cancel']);
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 1);
    });
  });

  it('is decommissioned out of error when the API asks for it while it waits for an operator', async () => {
    const { resource, fakes } = config();
    fakes.on('configureNetworkServiceConfig', () => {
      throw refusal('no such interface');
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('error', () => resource.state === 'error');
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(resource.events(), ['fail', 'decommission']);
      assert.equal(fakes.callsOf('deconfigureNetworkServiceConfig').length, 1);
    });
  });

  it('counts only a retryProvisioning sent once the failure shows', async () => {
    const { resource, fakes } = config();
    let fail: () => void = () => undefined;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    fakes.on('configureNetworkServiceConfig', async () => {
      if (fakes.callsOf('configureNetworkServiceConfig').length > 1)
        return { commitId: 'commit-1', revision: 1, tags: 'VLAN 100 on ae-1' };
      await failing;
      throw refusal('VLAN 100 is taken on ae-1');
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the device work', () => fakes.callsOf('configureNetworkServiceConfig').length === 1);
      // Too early: nothing has failed yet.
      await handle.signal(SIGNALS.retryProvisioning);
      fail();
      await eventually('error', () => resource.state === 'error');
      await lookedAgain(handle, () => fakes.callsOf('networkServiceConfigAgenda').length);
      assert.equal(resource.state, 'error');
      assert.equal(fakes.callsOf('configureNetworkServiceConfig').length, 1);
      await stepIs(handle, 'waiting for an operator');
      await handle.signal(SIGNALS.retryProvisioning);
      await eventually('production', () => resource.state === 'production');
    });
  });
});
