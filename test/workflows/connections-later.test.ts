import assert from 'node:assert/strict';
import { eventually as eventuallyFound } from '../support/wait';
import { refusal } from './support/fakes';
import { READS, connection, connectionId, inProduction, start } from './support/connection';
import { SIGNALS, dayFromToday, eventually, lookedAgain, stepIs, withWorker } from './support/tier';

describe('provisionConnection: changes, decommission, cancellation', () => {
  it('carries out a change on the device, gives leaving ports back, and goes back to production', async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'production_change_pending' });
      await handle.signal(SIGNALS.reconsider);
      await eventually('back in production', () => resource.events().length === 4);
      assert.equal(resource.state, 'production');
      assert.deepEqual(resource.events().slice(3), ['complete_change']);
      assert.deepEqual(fakes.names([...READS]).slice(-3), [
        'configureConnection',
        'releaseConnectionPorts',
        'moveConnection',
      ]);
      assert.deepEqual(fakes.callsOf('releaseConnectionPorts')[0].input, { connectionId, leavingOnly: true });
      await stepIs(handle, 'in production');
    });
  });

  it('takes a waiting port reservation into the bundle as a change', async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      fakes.on('configureConnection', () => {
        resource.set({ reservationsWaiting: 0 });
        return { commitId: 'commit-2' };
      });
      resource.set({ reservationsWaiting: 1 });
      await handle.signal(SIGNALS.reconsider);
      await eventually('the change done', () => resource.events().length === 5);
      assert.deepEqual(resource.events().slice(3), ['request_change', 'complete_change']);
      assert.equal(resource.moves[3].status[0].tag, 'change_started');
      assert.equal(fakes.callsOf('configureConnection').length, 2);
    });
  });

  it('decommissions on a decommission day that has come: off the device, ports back, decommissioned', async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(fakes.names([...READS]).slice(-3), [
        'deconfigureConnection',
        'releaseConnectionPorts',
        'moveConnection',
      ]);
      assert.deepEqual(fakes.callsOf('releaseConnectionPorts').at(-1)!.input, { connectionId });
      assert.equal(resource.lastStatus()!.tag, 'decommissioned');
      assert.equal(resource.state, 'decommissioned');
    });
  });

  it('waits for a decommission day ahead, until an operator signals decommissionNow', async () => {
    const { resource, fakes } = connection();
    const day = dayFromToday(2);
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'decommission_requested', decommissionAt: day });
      await handle.signal(SIGNALS.reconsider);
      await stepIs(handle, `decommissioning on ${day}`);
      assert.equal(fakes.callsOf('deconfigureConnection').length, 0);
      await handle.signal(SIGNALS.decommissionNow);
      assert.equal(await handle.result(), 'decommissioned');
      assert.equal(fakes.callsOf('deconfigureConnection').length, 1);
    });
  });

  it('takes the ports off the device after retryProvisioning when teardown was refused', async () => {
    const { resource, fakes } = connection();
    fakes.on('deconfigureConnection', () => {
      if (fakes.callsOf('deconfigureConnection').length === 1) throw refusal('commit refused');
      return { commitId: 'teardown' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(-3) });
      await handle.signal(SIGNALS.reconsider);
      await eventually('error', () => resource.state === 'error');
      assert.match(resource.lastStatus()!.message, /commit refused.*signal retryProvisioning/);
      await handle.signal(SIGNALS.retryProvisioning);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(resource.events().slice(3), ['fail', 'decommission']);
      assert.equal(fakes.callsOf('releaseConnectionPorts').length, 1);
    });
  });

  it('is cancelled while it waits for the cross-connect: off the device, ports back, cancelled', async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      const handle = await start(run, { crossConnectDelayMs: 60_000 });
      await stepIs(handle, 'waiting for the cross-connect');
      resource.set({ cancelRequested: true });
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(resource.events(), ['allocate', 'cancel']);
      assert.equal(resource.lastStatus()!.tag, 'cancelled');
      assert.deepEqual(fakes.names([...READS]).slice(-3), [
        'deconfigureConnection',
        'releaseConnectionPorts',
        'moveConnection',
      ]);
      assert.equal(fakes.callsOf('checkConnectionOptics').length, 0);
    });
  });

  it('ends as deleted when the connection is deleted while it waits, without touching the device', async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      const handle = await start(run, { crossConnectDelayMs: 60_000 });
      await stepIs(handle, 'waiting for the cross-connect');
      resource.agenda = null;
      await handle.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'deleted');
      assert.equal(fakes.callsOf('deconfigureConnection').length, 0);
      assert.equal(fakes.callsOf('releaseConnectionPorts').length, 0);
    });
  });

  it('goes on taking a cancelled connection off the device when the API writes to it while an operator is awaited', async () => {
    const { resource, fakes } = connection();
    fakes.on('deconfigureConnection', () => {
      if (fakes.callsOf('deconfigureConnection').length === 1) throw refusal('commit refused');
      return { commitId: 'teardown' };
    });
    await withWorker(fakes, async (run) => {
      const handle = await start(run, { crossConnectDelayMs: 60_000 });
      await stepIs(handle, 'waiting for the cross-connect');
      resource.set({ cancelRequested: true });
      await handle.signal(SIGNALS.reconsider);
      await eventually('error', () => resource.state === 'error');
      await stepIs(handle, 'waiting for an operator');
      // Another write reaches the connection, its cancellation still asked: it is read, and the
      // workflow keeps waiting for the operator instead of failing its task over and over.
      await lookedAgain(handle, () => fakes.callsOf('connectionAgenda').length);
      await stepIs(handle, 'waiting for an operator');
      await handle.signal(SIGNALS.retryProvisioning);
      assert.equal(await handle.result(), 'cancelled');
      assert.deepEqual(resource.events(), ['allocate', 'fail', 'cancel']);
      assert.equal(fakes.callsOf('deconfigureConnection').length, 2);
    });
  });

  it('ends as deleted for a connection that is gone, and at once for one that has ended', async () => {
    const gone = connection();
    gone.resource.agenda = null;
    const ended = connection({ state: 'cancelled' });
    await withWorker(gone.fakes, async (run) => {
      assert.equal(await (await start(run)).result(), 'deleted');
      assert.deepEqual(gone.fakes.names([...READS]), []);
    });
    await withWorker(ended.fakes, async (run) => {
      assert.equal(await (await start(run)).result(), 'cancelled');
      assert.deepEqual(ended.fakes.names([...READS]), []);
    });
  });

  it('wakes in production on the day a port reservation ends, unasked', async () => {
    const tomorrow = dayFromToday(1);
    const { resource, fakes } = connection({ reservationDue: tomorrow });
    await withWorker(fakes, async (run) => {
      const handle = await inProduction(run, resource);
      const { timer, set } = await eventuallyFound('a timer', async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        const started = events.find((event) => event.timerStartedEventAttributes);
        return started && { timer: started.timerStartedEventAttributes!, set: started.eventTime! };
      });
      const fires = Number(set.seconds) + Number(timer.startToFireTimeout!.seconds);
      // The timer fires at the start of that day (UTC), give or take the second it was set in.
      assert.ok(Math.abs(fires - Date.parse(`${tomorrow}T00:00:00Z`) / 1000) <= 2, `fires at ${fires}`);
    });
  });

  it('moves a run begun before the lifecycle framing onto it once that run reaches production', async () => {
    const { resource, fakes } = connection();
    await withWorker(fakes, async (run) => {
      const handle = await run.start<string>('connectionBeganBeforeFraming', { connectionId });
      await eventually('production', () => resource.state === 'production');
      const first = run.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId);
      await eventuallyFound('the first run continued as new', async () =>
        (await first.describe()).status.name === 'CONTINUED_AS_NEW' ? true : undefined,
      );
      const latest = run.client.workflow.getHandle(handle.workflowId);
      await stepIs(latest, 'in production');
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live']);
      resource.set({ state: 'decommission_requested', decommissionAt: dayFromToday(0) });
      await latest.signal(SIGNALS.reconsider);
      assert.equal(await handle.result(), 'decommissioned');
      assert.deepEqual(resource.events(), ['allocate', 'start_testing', 'go_live', 'decommission']);
    });
  });
});
