import assert from 'node:assert/strict';
import { READS, config, configId, inProduction, start } from './support/network-service-config';
import { SIGNALS, eventually, lookedAgain, stepIs, withWorker } from './support/tier';

describe('provisionNetworkServiceConfig (the lifecycle framing)', () => {
  it('configures, reads back and takes a config to production, then waits there', async () => {
    const { resource, fakes } = config();
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('production', () => resource.state === 'production');
      await stepIs(handle, 'in production');
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
      assert.equal(resource.moves[0].status[0].tag, 'configured');
      assert.equal(resource.moves[0].status[0].attrs.commitId, 'commit-1');
      assert.match(resource.moves[0].status[0].message, /VLAN 100 on ae-1/);
      assert.deepEqual(fakes.names([...READS]), [
        'configureNetworkServiceConfig',
        'moveNetworkServiceConfig',
        'moveNetworkServiceConfig',
        'verifyNetworkServiceConfig',
        'moveNetworkServiceConfig',
      ]);
      assert.deepEqual(
        fakes.callsOf('configureNetworkServiceConfig').map((call) => call.input),
        [{ configId }],
      );
      const { status } = await handle.describe();
      assert.equal(status.name, 'RUNNING');
    });
  });

  it('waits for its connection, noting what it waits for when that changes, and goes on once it is in production', async () => {
    const { resource, fakes } = config({ connectionState: 'requested' });
    await withWorker(fakes, async (run) => {
      const handle = await start(run, { recheckMs: 300 });
      await eventually('the waiting note', () => resource.notes.length === 1);
      await stepIs(handle, 'waiting for the connection');
      assert.equal(resource.notes[0][0].tag, 'waiting_for_connection');
      assert.match(resource.notes[0][0].message, /connection is requested/);
      // Looks that find nothing new (the recheck's, a reconsider's) leave the note as it is.
      await eventually('a recheck', () => fakes.callsOf('networkServiceConfigAgenda').length >= 2);
      await lookedAgain(handle, () => fakes.callsOf('networkServiceConfigAgenda').length);
      assert.equal(resource.notes.length, 1);
      // The recheck notices a change that does not let it go on yet, and says so.
      resource.set({ connectionState: 'testing' });
      await eventually('the changed note', () => resource.notes.length === 2);
      assert.match(resource.notes[1][0].message, /connection is testing/);
      assert.equal(fakes.callsOf('configureNetworkServiceConfig').length, 0);
      resource.set({ connectionState: 'production' });
      await handle.signal(SIGNALS.reconsider);
      await eventually('production', () => resource.state === 'production');
      assert.equal(resource.notes.length, 2);
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
    });
  });

  it('waits for a required route-server session before going live', async () => {
    const { resource, fakes } = config({ missingFeatures: ['rs-1'] });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the missing-session note', () => resource.notes.length === 1);
      await stepIs(handle, 'waiting for route-server sessions');
      assert.equal(resource.state, 'testing');
      assert.equal(resource.notes[0][0].tag, 'feature_config_missing');
      assert.deepEqual(resource.notes[0][0].attrs, { network_features: ['rs-1'] });
      resource.set({ missingFeatures: [] });
      await handle.signal(SIGNALS.reconsider);
      await eventually('production', () => resource.state === 'production');
    });
  });

  it('carries out a change (reconsider with a new revision) and goes back to production', async () => {
    const { resource, fakes } = config();
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'production_change_pending', revision: 2 });
      await handle.signal(SIGNALS.reconsider);
      await eventually('back in production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live', 'complete_change']);
      assert.equal(fakes.callsOf('configureNetworkServiceConfig').length, 2);
      await stepIs(handle, 'in production');
      // A reconsider with nothing changed touches no device.
      await lookedAgain(handle, () => fakes.callsOf('networkServiceConfigAgenda').length);
      assert.equal(fakes.callsOf('configureNetworkServiceConfig').length, 2);
      assert.equal(resource.moves.length, 4);
    });
  });
});
