import assert from 'node:assert/strict';
import pino from 'pino';
import type { Sequelize } from 'sequelize';
import type { DeviceDriver } from '../../activities/drivers/contract';
import { DriverError } from '../../activities/drivers/contract';
import type { DriverCall } from '../../activities/drivers/metered-driver';
import { DRIVER_OPERATIONS, meterDriver } from '../../activities/drivers/metered-driver';
import { createMetricsRegistry } from '../../api/metrics';
import { createWorkerMetrics } from '../../worker/metrics';
import { parseSamples, sampleOf } from '../support/prometheus';

/** A driver whose reads answer, whose commits the device refuses and whose loads break. */
function fakeDriver(): DeviceDriver {
  const calls: Record<string, unknown> = {
    kind: 'fake',
    capabilities: { counters: true },
  };
  for (const operation of DRIVER_OPERATIONS) calls[operation] = () => Promise.resolve([operation]);
  calls.commit = () => Promise.reject(new DriverError('rejected', 'the device refused the commit'));
  calls.load = () => Promise.reject(new Error('socket closed'));
  return calls as unknown as DeviceDriver;
}

describe('metered device driver', () => {
  it('passes answers and errors through and reports every call', async () => {
    const seen: DriverCall[] = [];
    const driver = meterDriver(fakeDriver(), (call) => seen.push(call));
    assert.equal(driver.kind, 'fake');
    assert.deepEqual(await driver.readCounters('dev-1', ['et-0/0/1']), ['readCounters']);
    await assert.rejects(driver.commit('cand-1', 'key-1'), (error) => error instanceof DriverError);
    await assert.rejects(driver.load({} as never), /socket closed/);
    assert.deepEqual(
      seen.map(({ driver: kind, operation, failure }) => ({ kind, operation, failure })),
      [
        { kind: 'fake', operation: 'readCounters', failure: undefined },
        { kind: 'fake', operation: 'commit', failure: 'rejected' },
        { kind: 'fake', operation: 'load', failure: 'other' },
      ],
    );
    assert.ok(seen.every((call) => call.seconds >= 0));
  });

  it('never fails a call for a failing observer', async () => {
    const driver = meterDriver(fakeDriver(), () => {
      throw new Error('metrics broke');
    });
    assert.deepEqual(await driver.readLags('dev-1'), ['readLags']);
  });

  it('exports calls by driver and operation and failures by code', async () => {
    const registry = createMetricsRegistry();
    const sequelize = { connectionManager: {} } as unknown as Sequelize;
    const metrics = createWorkerMetrics({ registry, sequelize, logger: pino({ level: 'silent' }) });
    const driver = meterDriver(fakeDriver(), metrics.observeDriverCall);
    await driver.readOptics('dev-1', ['et-0/0/1']);
    await driver.commit('cand-1', 'key-1').catch(() => undefined);
    const samples = parseSamples(await registry.metrics());
    const count = 'ixapi_driver_call_duration_seconds_count';
    assert.equal(sampleOf(samples, count, { driver: 'fake', operation: 'readOptics' }), 1);
    assert.equal(sampleOf(samples, count, { driver: 'fake', operation: 'commit' }), 1);
    assert.equal(
      sampleOf(samples, 'ixapi_driver_call_failures_total', {
        driver: 'fake',
        operation: 'commit',
        code: 'rejected',
      }),
      1,
    );
    assert.equal(
      sampleOf(samples, 'ixapi_driver_call_failures_total', {
        driver: 'fake',
        operation: 'readOptics',
        code: 'rejected',
      }),
      0,
    );
  });
});
