import assert from 'node:assert/strict';
import type { Reconciliation, SupervisionRound } from '../../activities/device-supervision';
import type { FabricSupervisorStatus } from '../../workflows/fabric-supervision';
import { FakeActivities, refusal } from './support/fakes';
import { queryUntil, withWorker } from './support/tier';

const STATUS_QUERY = 'fabricSupervisorStatus';
const supervision = (restarted: string[] = []): SupervisionRound => ({
  at: new Date().toISOString(),
  restarted,
  restored: restarted.length ? ['rules of sw1'] : [],
  failures: [],
});
const reconciliation = (devices: number): Reconciliation => ({
  at: new Date().toISOString(),
  devices,
  changed: [],
  refused: [],
});

describe('superviseFabric', () => {
  it('brings back what died and then reconciles the devices, once per interval from the start, keeping count across runs', async () => {
    const fakes: FakeActivities = new FakeActivities()
      .on('superviseDevices', () =>
        supervision(fakes.callsOf('superviseDevices').length === 2 ? ['ovs-vswitchd'] : []),
      )
      .on('reconcileDevices', () => reconciliation(fakes.callsOf('reconcileDevices').length));
    await withWorker(fakes, async (run) => {
      const handle = await run.start<never>('superviseFabric', {
        intervalSeconds: 1,
        rounds: 7,
        restarts: ['ovsdb-server'],
      });
      const status = await queryUntil<FabricSupervisorStatus>(handle, STATUS_QUERY, (s) => s.rounds >= 10);
      assert.equal(status.intervalSeconds, 1);
      assert.equal(status.lastError, null);
      assert.deepEqual(status.restarts, ['ovsdb-server', 'ovs-vswitchd'], 'restarts add up across runs');
      assert.ok(status.lastReconciliation!.devices >= 3);
      // Each round supervises first and reconciles after, and the first round comes at once.
      const names = fakes.calls.map((call) => call.name).slice(0, 6);
      assert.deepEqual(names, [
        'superviseDevices',
        'reconcileDevices',
        'superviseDevices',
        'reconcileDevices',
        'superviseDevices',
        'reconcileDevices',
      ]);
      const events = (await handle.fetchHistory()).events ?? [];
      const firstTimer = events.findIndex((event) => event.timerStartedEventAttributes);
      const firstActivity = events.findIndex((event) => event.activityTaskScheduledEventAttributes);
      assert.ok(firstActivity >= 0 && firstActivity < firstTimer, 'the first round comes before any wait');
    });
  });

  it('takes a round that fails for a status saying why, and carries on with the next', async () => {
    const fakes: FakeActivities = new FakeActivities()
      .on('superviseDevices', () => supervision())
      .on('reconcileDevices', () => {
        if (fakes.callsOf('reconcileDevices').length <= 3) throw refusal('the database is away', 'Away');
        return reconciliation(2);
      });
    await withWorker(fakes, async (run) => {
      const handle = await run.start<never>('superviseFabric', { intervalSeconds: 1 });
      const failed = await queryUntil<FabricSupervisorStatus>(handle, STATUS_QUERY, (s) => s.rounds === 1);
      assert.equal(failed.lastError, 'the database is away');
      const next = await queryUntil<FabricSupervisorStatus>(
        handle,
        STATUS_QUERY,
        (s) => s.lastError === null,
      );
      assert.equal(next.lastReconciliation!.devices, 2);
    });
  });
});
