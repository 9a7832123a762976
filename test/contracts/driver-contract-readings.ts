import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CounterReading, DeviceDriver } from '../../drivers/contract';
import type { ContractScope } from './driver-contract-support';
import { COUNTERS, countersOf, expectDriverError } from './driver-contract-support';

/** The contract for what a driver reads of its device besides configuration: optics and counters. */
export function describeReadingContract(scope: ContractScope): void {
  let driver: DeviceDriver;
  let device: string;
  let a: string, b: string;
  before(() => ({ driver, device, a, b } = scope));
  const { apply } = scope;

  it('reads the optics of its interfaces (none where it cannot)', async () => {
    const readings = await driver.readOptics(device, [a, b]);
    if (!driver.capabilities.optics) {
      assert.deepEqual(readings, []);
      return;
    }
    assert.deepEqual(
      readings.map((r) => r.interface),
      [a, b],
    );
    for (const reading of readings) {
      assert.ok(Number.isFinite(reading.rxDbm) && Number.isFinite(reading.txDbm));
      assert.equal(typeof reading.inRange, 'boolean');
    }
  });

  /** Reads counters again until the device's clock has moved on from `after`. */
  const readLater = async (names: string[], after: string): Promise<CounterReading[]> => {
    for (let attempt = 0; ; attempt += 1) {
      const readings = await driver.readCounters(device, names);
      if (readings[0].readAt > after || attempt >= 200) return readings;
      await sleep(10);
    }
  };

  it('reads counters that only grow, all of one read at one instant (none where it cannot)', async () => {
    if (!driver.capabilities.counters) {
      assert.deepEqual(await driver.readCounters(device, [a]), []);
      return;
    }
    await apply({ interfaces: [{ name: a, description: 'counted', enabled: true }] });
    const first = await driver.readCounters(device, [a, b]);
    assert.deepEqual(
      first.map((r) => r.interface),
      [a, b],
    );
    assert.equal(new Set(first.map((r) => r.readAt)).size, 1, 'one instant for the whole read');
    for (const reading of first)
      for (const value of countersOf(reading)) assert.ok(typeof value === 'bigint' && value >= 0n);
    const later = await readLater([a, b], first[0].readAt);
    assert.ok(later[0].readAt > first[0].readAt, 'the device clock moves on');
    for (const [index, reading] of later.entries())
      for (const [at, value] of countersOf(reading).entries())
        assert.ok(value >= countersOf(first[index])[at], `${reading.interface} ${COUNTERS[at]} went down`);
    assert.deepEqual(countersOf(later[1]), countersOf(first[1]), 'a disabled interface carries no traffic');
    assert.deepEqual(await driver.readCounters(device, []), []);
  });

  it('counts a LAG as the sum of its members', async () => {
    if (!driver.capabilities.counters || !driver.capabilities.lags) return;
    await apply({
      interfaces: [a, b].map((name) => ({ name, description: 'counted', enabled: true })),
      lags: [
        { name: 'contract-counted', description: '', mode: 'static', lacpTimeout: null, members: [a, b] },
      ],
    });
    const [lag, first, second, service] = await driver.readCounters(device, [
      'contract-counted',
      a,
      b,
      'contract-counted.100',
    ]);
    for (const name of COUNTERS) assert.equal(lag[name], first[name] + second[name], name);
    assert.equal(service.interface, 'contract-counted.100', 'a sub-interface of the LAG');
  });

  it('reads sub-interfaces of its interfaces and LAGs on VLANs 1 to 4094', async () => {
    if (!driver.capabilities.counters) return;
    await apply({ interfaces: [{ name: a, description: 'counted', enabled: true }] });
    const readings = await driver.readCounters(device, [`${a}.1`, `${a}.4094`, a]);
    assert.deepEqual(
      readings.map((r) => r.interface),
      [`${a}.1`, `${a}.4094`, a],
    );
    for (const name of [`${a}.0`, `${a}.4095`, `${a}.x`, `no-such-interface.10`])
      await expectDriverError(driver.readCounters(device, [name]), 'invalid-config');
  });

  it('refuses to read counters of an interface it does not know', async () => {
    if (!driver.capabilities.counters) return;
    const error = await expectDriverError(
      driver.readCounters(device, [a, 'no-such-interface']),
      'invalid-config',
    );
    assert.equal(error.retryable, false);
  });
}
