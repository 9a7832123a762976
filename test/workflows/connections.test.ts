import assert from 'node:assert/strict';
import { refusal } from './support/fakes';
import { READS, connection, connectionId, inProduction, start } from './support/connection';
import { SIGNALS, eventually, stepIs, withWorker } from './support/tier';

describe('provisionConnection to production', () => {
  it('configures the ports, has the exchange cross-connect them, tests the optics and goes to production', async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      await inProduction(run, resource);
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
      const configured = resource.moves[0].status[0];
      assert.equal(configured.tag, 'ports_configured');
      assert.match(configured.message, /et-0\/0\/1 on dev-fra-edge/);
      assert.equal(configured.attrs.commitId, 'commit-1');
      assert.equal(resource.notes[0][0].tag, 'cross_connect_ordered');
      assert.deepEqual(resource.notes[0][0].attrs, { demarcs: ['demarc-1'] });
      assert.deepEqual(fakes.names([...READS]), [
        'configureConnection',
        'moveConnection',
        'recordConnectionStatus',
        'moveConnection',
        'checkConnectionOptics',
        'moveConnection',
      ]);
      assert.equal(fakes.callsOf('configureConnection')[0].input.connectionId, connectionId);
      assert.deepEqual(fakes.callsOf('checkConnectionOptics')[0].input, { connectionId });
    });
  });

  it("waits for the exchange's cross-connect, or less when an operator reports it done", async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      const handle = await start(run, { crossConnectDelayMs: 60_000 });
      await stepIs(handle, 'waiting for the cross-connect');
      assert.equal(resource.state, 'allocated');
      assert.equal(fakes.callsOf('checkConnectionOptics').length, 0);
      await handle.signal(SIGNALS.crossConnectCompleted);
      await eventually('production', () => resource.state === 'production');
    });
  });

  it("waits for the subscriber's LOA and an operator's word that the cross-connect is in place", async () => {
    const { resource, fakes } = connection({}, { cross_connect_initiator: 'subscriber' });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the pending note', () => resource.notes.length === 1);
      assert.equal(resource.notes[0][0].tag, 'cross_connect_pending');
      assert.match(resource.notes[0][0].message, /upload the LOA \(POST \/connections\/con-1\/loa\)/);
      await handle.signal(SIGNALS.crossConnectCompleted);
      await eventually('the missing-LOA note', () => resource.notes.length === 2);
      assert.equal(resource.notes[1][0].tag, 'loa_missing');
      await stepIs(handle, 'waiting for the cross-connect');
      assert.equal(resource.state, 'allocated');
      resource.set({ loaUploaded: true });
      await handle.signal(SIGNALS.reconsider);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
    });
  });

  it('asks an operator when the optics are out of range, and tests again after retryTesting', async () => {
    const { resource, fakes } = connection();
    fakes.on('checkConnectionOptics', () => ({
      outOfRange: fakes.callsOf('checkConnectionOptics').length === 1 ? ['et-0/0/1 (-31.2 dBm)'] : [],
    }));
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('operator', () => resource.state === 'operator');
      await stepIs(handle, 'waiting for an operator');
      const status = resource.lastStatus()!;
      assert.equal(status.tag, 'optics_out_of_range');
      assert.deepEqual(status.attrs, { ports: ['et-0/0/1 (-31.2 dBm)'] });
      assert.match(status.message, /signal retryTesting/);
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
      assert.equal(fakes.callsOf('checkConnectionOptics').length, 2);
      // The ports stay configured: testing again configures nothing.
      assert.equal(fakes.callsOf('configureConnection').length, 1);
    });
  });

  it('goes to error when the device refuses the ports, and configures again after retryProvisioning', async () => {
    const { resource, fakes } = connection();
    fakes.on('configureConnection', () => {
      if (fakes.callsOf('configureConnection').length === 1) throw refusal('et-0/0/1 does not exist');
      return { commitId: 'commit-2' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('error', () => resource.state === 'error');
      await stepIs(handle, 'waiting for an operator');
      const status = resource.lastStatus()!;
      assert.equal(status.tag, 'configuration_failed');
      assert.match(status.message, /et-0\/0\/1 does not exist/);
      assert.match(status.message, /signal retryProvisioning/);
      assert.deepEqual(
        fakes.callsOf('configureConnection').map((call) => call.attempt),
        [1],
      );
      await handle.signal(SIGNALS.retryProvisioning);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), ['fail', 'retry', 'allocate', 'start_testing', 'go_live']);
    });
  });

  it('retries device work that may pass until it does', async () => {
    const { resource, fakes } = connection();
    fakes.on('configureConnection', (_input, attempt) => {
      if (attempt === 1) throw new Error('connection to the device reset');
      return { commitId: 'commit-1' };
    });
    await withWorker(fakes, async (run) => {
      await inProduction(run, resource);
      assert.deepEqual(
        fakes.callsOf('configureConnection').map((call) => call.attempt),
        [1, 2],
      );
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
    });
  });
});
