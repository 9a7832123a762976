import assert from 'node:assert/strict';
import type { CounterReading, DeviceDriver } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import { trafficActivities } from '../../activities/traffic';
import type {
  NewTrafficSample,
  StoredOptics,
  TrafficRepository,
  TrafficSubject,
} from '../../db/repositories/traffic-repository';

const NOW = new Date('2026-03-10T12:00:00Z');

const reading = (name: string, octets: bigint): CounterReading => ({
  interface: name,
  readAt: NOW.toISOString(),
  octetsIn: octets,
  octetsOut: octets,
  packetsIn: octets / 100n,
  packetsOut: octets / 100n,
  errorsIn: 0n,
  errorsOut: 0n,
  discardsIn: 0n,
  discardsOut: 0n,
});

/** A sampling round over fake subjects and devices: `devices` says how each device answers. */
async function round(
  subjects: TrafficSubject[],
  devices: Record<string, (names: readonly string[]) => CounterReading[]>,
  counters = true,
) {
  const stored: NewTrafficSample[] = [];
  const optics: StoredOptics[] = [];
  const reads: string[][] = [];
  let prunedBefore: Date | undefined;
  const traffic = {
    subjectsInService: () => Promise.resolve(subjects),
    storeSamples: (samples: readonly NewTrafficSample[]) => {
      stored.push(...samples);
      return Promise.resolve(samples.length);
    },
    storeOptics: (readings: readonly StoredOptics[]) => {
      optics.push(...readings);
      return Promise.resolve();
    },
    pruneBefore: (instant: Date) => {
      prunedBefore = instant;
      return Promise.resolve(0);
    },
  } as unknown as TrafficRepository;
  const driver = {
    capabilities: { lags: true, lacp: true, optics: true, rollback: true, counters },
    readCounters: (device: string, names: readonly string[]) => {
      reads.push([device, ...names]);
      return Promise.resolve().then(() => devices[device](names));
    },
    // Light levels where the device answers for its counters: -2 dBm sent, -3 dBm received.
    readOptics: (device: string, names: readonly string[]) =>
      Promise.resolve().then(() =>
        devices[device](names).map((r) => ({ interface: r.interface, txDbm: -2, rxDbm: -3, inRange: true })),
      ),
  } as unknown as DeviceDriver;
  const result = await trafficActivities({ traffic, driver, clock: () => NOW }).sampleTraffic({
    intervalSeconds: 300,
  });
  return { result, stored, optics, reads, prunedBefore };
}

const subject = (subjectType: 'port' | 'connection', subjectId: string, device: string, name: string) => ({
  subjectType,
  subjectId,
  device,
  interfaceName: name,
  managingAccount: 'acc-holder',
  consumingAccount: 'acc-holder',
});

describe('traffic sampling', () => {
  it('reads each device once for all its subjects and stores one sample per subject', async () => {
    const { result, stored, optics, reads, prunedBefore } = await round(
      [
        subject('port', 'port-1', 'dev-a', 'et-0/0/1'),
        subject('port', 'port-2', 'dev-a', 'et-0/0/2'),
        subject('connection', 'conn-1', 'dev-a', 'ae-conn-1'),
        subject('connection', 'conn-2', 'dev-b', 'et-0/0/9'),
        subject('port', 'port-9', 'dev-b', 'et-0/0/9'),
      ],
      {
        'dev-a': (names) => names.map((name, index) => reading(name, BigInt(index + 1) * 1000n)),
        'dev-b': (names) => names.map((name) => reading(name, 5n)),
      },
    );
    assert.deepEqual(reads.sort(), [
      ['dev-a', 'et-0/0/1', 'et-0/0/2', 'ae-conn-1'],
      ['dev-b', 'et-0/0/9'],
    ]);
    assert.deepEqual(stored.map((s) => [s.subjectId, s.octetsIn]).sort(), [
      ['conn-1', 3000n],
      ['conn-2', 5n],
      ['port-1', 1000n],
      ['port-2', 2000n],
      ['port-9', 5n],
    ]);
    assert.ok(stored.every((s) => s.sampledAt.getTime() === NOW.getTime()));
    assert.deepEqual(result, {
      at: NOW.toISOString(),
      subjects: 5,
      sampled: 5,
      missed: 0,
      optics: 3,
      pruned: 0,
    });
    assert.deepEqual(
      optics.map((o) => [o.port, o.txDbm, o.rxDbm, o.readAt.getTime()]).sort(),
      ['port-1', 'port-2', 'port-9'].map((port) => [port, -2, -3, NOW.getTime()]),
      'the light levels of ports only, read once per device',
    );
    assert.equal(prunedBefore?.toISOString(), '2025-03-10T11:50:00.000Z');
  });

  it('reads names one by one when a device refuses one it does not know, and misses a device that does not answer', async () => {
    const { result, stored, optics } = await round(
      [
        subject('port', 'port-1', 'dev-a', 'et-0/0/1'),
        subject('connection', 'conn-1', 'dev-a', 'ae-not-built-yet'),
        subject('port', 'port-7', 'dev-down', 'et-0/0/7'),
      ],
      {
        'dev-a': (names) => {
          if (names.includes('ae-not-built-yet')) throw new DriverError('invalid-config', 'no such LAG');
          return names.map((name) => reading(name, 1n));
        },
        'dev-down': () => {
          throw new DriverError('unreachable', 'down');
        },
      },
    );
    assert.deepEqual(
      stored.map((s) => s.subjectId),
      ['port-1'],
    );
    assert.equal(result.missed, 2);
    assert.deepEqual(
      optics.map((o) => o.port),
      ['port-1'],
      'a device that does not answer gives no light levels',
    );
  });

  it('samples nothing with a driver that cannot read counters', async () => {
    const { result, reads } = await round([subject('port', 'port-1', 'dev-a', 'et-0/0/1')], {}, false);
    assert.deepEqual(reads, []);
    assert.equal(result.subjects, 0);
  });

  it('lets other failures through, for Temporal to retry', async () => {
    await assert.rejects(
      round([subject('port', 'port-1', 'dev-a', 'et-0/0/1')], {
        'dev-a': () => {
          throw new Error('database gone');
        },
      }),
      /database gone/,
    );
  });
});
