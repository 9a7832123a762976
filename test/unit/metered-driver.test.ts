import assert from 'node:assert/strict';
import pino from 'pino';
import type { Sequelize } from 'sequelize';
import type { DeviceDriver } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import type { DriverCall } from '../../drivers/metered-driver';
import { DRIVER_OPERATIONS, meterDriver } from '../../drivers/metered-driver';
import { createMetricsRegistry } from '../../telemetry/metrics';
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

/** A driver whose loads make candidates on the device the intent names and whose commits fail. */
function loadingDriver(): DeviceDriver {
  const driver = fakeDriver() as unknown as Record<string, unknown>;
  driver.load = (intent: { device: string }) =>
    Promise.resolve({ id: `cand-${intent.device}`, device: intent.device, changes: [] });
  return driver as unknown as DeviceDriver;
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
      seen.map(({ driver: kind, operation, device, failure }) => ({ kind, operation, device, failure })),
      [
        { kind: 'fake', operation: 'readCounters', device: 'dev-1', failure: undefined },
        { kind: 'fake', operation: 'commit', device: undefined, failure: 'rejected' },
        { kind: 'fake', operation: 'load', device: undefined, failure: 'other' },
      ],
    );
    assert.ok(seen.every((call) => call.seconds >= 0));
  });

  it('names the device of every call, a commit by the candidate loaded for it', async () => {
    const seen: DriverCall[] = [];
    const driver = meterDriver(loadingDriver(), (call) => seen.push(call));
    const candidate = await driver.load({ device: 'edge-fra-1', interfaces: [] });
    await driver.rollback('edge-fra-2', 'commit-1');
    await driver.commit(candidate.id, 'key-1').catch(() => undefined);
    await driver.commit('cand-unknown', 'key-2').catch(() => undefined);
    assert.deepEqual(
      seen.map(({ operation, device }) => ({ operation, device })),
      [
        { operation: 'load', device: 'edge-fra-1' },
        { operation: 'rollback', device: 'edge-fra-2' },
        { operation: 'commit', device: 'edge-fra-1' },
        { operation: 'commit', device: undefined },
      ],
    );
  });

  it('never fails a call for a failing observer', async () => {
    const driver = meterDriver(fakeDriver(), () => {
      throw new Error('metrics broke');
    });
    assert.deepEqual(await driver.readLags('dev-1'), ['readLags']);
  });

  it('exports calls by driver and operation and failures by code and device', async () => {
    const registry = createMetricsRegistry();
    const sequelize = { connectionManager: {} } as unknown as Sequelize;
    const metrics = createWorkerMetrics({ registry, sequelize, logger: pino({ level: 'silent' }) });
    const driver = meterDriver(loadingDriver(), metrics.observeDriverCall);
    await driver.readOptics('dev-1', ['et-0/0/1']);
    const candidate = await driver.load({ device: 'dev-2' });
    await driver.commit(candidate.id, 'key-1').catch(() => undefined);
    await driver.commit('cand-1', 'key-1').catch(() => undefined);
    const samples = parseSamples(await registry.metrics());
    const count = 'ixapi_driver_call_duration_seconds_count';
    assert.equal(sampleOf(samples, count, { driver: 'fake', operation: 'readOptics' }), 1);
    assert.equal(sampleOf(samples, count, { driver: 'fake', operation: 'commit' }), 2);
    const failures = (operation: string, device: string) =>
      sampleOf(samples, 'ixapi_driver_call_failures_total', {
        driver: 'fake',
        operation,
        code: 'rejected',
        device,
      });
    assert.equal(failures('commit', 'dev-2'), 1);
    assert.equal(failures('commit', 'unknown'), 1);
    assert.equal(failures('readOptics', 'dev-1'), 0);
  });
});
