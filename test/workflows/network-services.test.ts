import assert from 'node:assert/strict';
import type { CloudOrder, ServiceAgenda } from '../../db/repositories/network-service-repository';
import { FakeActivities, FakeResource, refusal } from './support/fakes';
import type { Run } from './support/tier';
import { SIGNALS, dayFromToday, eventually, stepIs, withWorker } from './support/tier';

const serviceId = 'ns-1';
const READS = ['networkServiceAgenda'] as const;

const CLOUD: CloudOrder = {
  provider: 'lab-cloud',
  workflow: 'exchange_first',
  region: 'eu-central-1',
  pop: 'pop-fra',
  key: 'customer-key-1',
  bandwidth: 1000,
  capacity: 1000,
  diversity: 1,
  vlans: 'single',
  providerRef: null,
};

/** A service as ordered: an exchange LAN, or with `cloud`, a cloud service. */
function service(change: Partial<ServiceAgenda> = {}) {
  const resource = new FakeResource<ServiceAgenda>({
    state: 'requested',
    cancelRequested: false,
    billed: false,
    decommissionAt: null,
    revision: 1,
    type: 'p2p_vc',
    missing: [],
    liveConfigs: 0,
    changeRequested: false,
    cloud: null,
    handovers: [],
    ...change,
  });
  const fakes = new FakeActivities()
    .on('networkServiceAgenda', () => resource.read())
    .on('moveNetworkService', ({ event, status }) => resource.move(event, status))
    .on('recordNetworkServiceStatus', ({ status }) => resource.record(status))
    .on('orderCloudCircuit', () => ({ providerRef: 'circuit-7' }))
    .on('connectCloudHandovers', () => ({ connected: [1] }))
    .on('changeCloudBandwidth', () => undefined)
    .on('releaseCloudCircuit', () => undefined);
  return { resource, fakes };
}

const start = (run: Run, input: object = {}) =>
  run.start<string>('provisionNetworkService', { serviceId, recheckMs: 60_000, ...input });

describe('provisionNetworkService', () => {
  it('waits for its ends, saying which are missing as each comes up, then goes to production', async () => {
    const { resource, fakes } = service({ missing: ['the joining member', 'the other member'] });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the waiting note', () => resource.notes.length === 1);
      await stepIs(handle, 'waiting for the configs');
      assert.equal(resource.state, 'allocated');
      assert.equal(resource.moves[0].status[0].tag, 'allocated');
      assert.equal(resource.notes[0][0].tag, 'waiting_for_configs');
      assert.match(resource.notes[0][0].message, /the joining member and the other member have/);
      resource.set({ missing: ['the other member'] });
      await handle.signal(SIGNALS.reconsider);
      await eventually('the second note', () => resource.notes.length === 2);
      assert.deepEqual(resource.notes[1][0].attrs, { missing: ['the other member'] });
      assert.match(resource.notes[1][0].message, /the other member has/);
      resource.set({ missing: [] });
      await handle.signal(SIGNALS.reconsider);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
      // A service on the fabric alone asks nothing of a cloud provider.
      assert.deepEqual(fakes.names([...READS, 'recordNetworkServiceStatus', 'moveNetworkService']), []);
    });
  });

  it('gets a cloud service its circuit at the provider and connects the handovers before going live', async () => {
    const { resource, fakes } = service({ cloud: CLOUD });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('production', () => resource.state === 'production');
      await stepIs(handle, 'in production');
      const ready = resource.moves[0].status[0];
      assert.equal(ready.tag, 'circuit_ready');
      assert.deepEqual(ready.attrs, { provider_ref: 'circuit-7' });
      assert.deepEqual(fakes.names([...READS]), [
        'orderCloudCircuit',
        'moveNetworkService',
        'connectCloudHandovers',
        'moveNetworkService',
        'moveNetworkService',
      ]);
      assert.deepEqual(fakes.callsOf('orderCloudCircuit')[0].input, { serviceId });
    });
  });

  it('goes to error when the provider refuses the circuit, and orders again after retryProvisioning', async () => {
    const { resource, fakes } = service({ cloud: CLOUD });
    fakes.on('orderCloudCircuit', () => {
      if (fakes.callsOf('orderCloudCircuit').length === 1)
        throw refusal('lab-cloud knows no circuit with the key customer-key-1', 'UnknownCloudKey');
      return { providerRef: 'circuit-8' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('error', () => resource.state === 'error');
      await stepIs(handle, 'waiting for an operator');
      assert.equal(resource.lastStatus()!.tag, 'configuration_failed');
      assert.match(
        resource.lastStatus()!.message,
        /Getting the circuit at lab-cloud failed: lab-cloud knows no circuit/,
      );
      await handle.signal(SIGNALS.retryProvisioning);
      await eventually('production', () => resource.state === 'production');
      assert.deepEqual(resource.events(), ['fail', 'retry', 'allocate', 'start_testing', 'go_live']);
      assert.deepEqual(resource.moves[2].status[0].attrs, { provider_ref: 'circuit-8' });
    });
  });

  it('waits for the owner to answer a change request, then changes the bandwidth at the provider', async () => {
    const { resource, fakes } = service({ cloud: CLOUD });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('production', () => resource.state === 'production');
      await stepIs(handle, 'in production');
      resource.set({ state: 'production_change_pending', revision: 2, changeRequested: true });
      await handle.signal(SIGNALS.reconsider);
      await stepIs(handle, 'waiting for the owner to answer the change request');
      assert.equal(fakes.callsOf('changeCloudBandwidth').length, 0);
      resource.set({ changeRequested: false });
      await handle.signal(SIGNALS.reconsider);
      await eventually('back in production', () => resource.state === 'production');
      assert.deepEqual(resource.events().slice(3), ['complete_change']);
      assert.deepEqual(
        fakes.callsOf('changeCloudBandwidth').map((call) => call.input),
        [{ serviceId }],
      );
      await stepIs(handle, 'in production');
    });
  });

  it('gives the circuit back on its decommission day and ends after the last of its configs', async () => {
    const { resource, fakes } = service({ cloud: CLOUD });
    // The configs go the same day, just after the first look that follows the release: the
    // workflow must look again rather than move while one is left.
    let released = false;
    let looksAfterRelease = 0;
    fakes.on('releaseCloudCircuit', () => {
      released = true;
    });
    fakes.on('networkServiceAgenda', () => {
      const agenda = resource.read();
      if (released && ++looksAfterRelease === 1) resource.set({ liveConfigs: 0 });
      return agenda;
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run, { recheckMs: 200 });
      await eventually('production', () => resource.state === 'production');
      await stepIs(handle, 'in production');
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0), liveConfigs: 1 });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'decommissioned');
      assert.equal(fakes.callsOf('releaseCloudCircuit').length, 1);
      const afterRelease = fakes.calls.slice(
        fakes.calls.findIndex((call) => call.name === 'releaseCloudCircuit'),
      );
      // It looked until no config was left, then moved.
      assert.ok(afterRelease.filter((call) => call.name === 'networkServiceAgenda').length >= 2);
      assert.equal(afterRelease.at(-1)!.name, 'moveNetworkService');
      assert.equal(resource.lastStatus()!.tag, 'decommissioned');
    });
  });

  it('is cancelled while it waits for its ends, giving a cloud circuit back', async () => {
    const { resource, fakes } = service({ cloud: CLOUD, missing: ['the handover'] });
    await withWorker(fakes, async (run) => {
      const handle = await start(run);
      await eventually('the waiting note', () => resource.notes.length === 1);
      resource.set({ cancelRequested: true });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(resource.events(), ['allocate', 'cancel']);
      assert.equal(fakes.callsOf('releaseCloudCircuit').length, 1);
      assert.equal(fakes.callsOf('connectCloudHandovers').length, 0);
    });
  });
});
