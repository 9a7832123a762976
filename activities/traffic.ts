import type {
  NewTrafficSample,
  StoredOptics,
  TrafficRepository,
  TrafficSubject,
} from '../db/repositories/traffic-repository';
import { retentionStart } from '../domain/statistics';
import type { CounterReading, DeviceDriver } from '../drivers/contract';
import { DriverError } from '../drivers/contract';

/** What one sampling round did, for the collector's status. */
export interface SamplingRound {
  /** When the round ended (ISO 8601). */
  at: string;
  /** Subjects in service. */
  subjects: number;
  /** Samples stored. */
  sampled: number;
  /** Subjects whose device did not answer or did not know their interface. */
  missed: number;
  /** Ports whose optics were read. */
  optics: number;
  /** Samples older than every window, deleted. */
  pruned: number;
}

/** Activities that sample traffic counters, over the traffic repository and a device driver. */
export function trafficActivities(deps: {
  traffic: TrafficRepository;
  driver: DeviceDriver;
  clock: () => Date;
}) {
  const { traffic, driver, clock } = deps;

  /**
   * The counters of `names` on one device, by name. One read gives every name the same instant;
   * when the device refuses a name it does not know (a LAG not built yet), the others are read one
   * by one. A device that does not answer gives nothing this round.
   */
  async function readDevice(device: string, names: string[]): Promise<Map<string, CounterReading>> {
    const byName = (readings: CounterReading[]) => new Map(readings.map((r) => [r.interface, r]));
    try {
      return byName(await driver.readCounters(device, names));
    } catch (error) {
      if (!(error instanceof DriverError)) throw error;
      if (error.code !== 'invalid-config' || names.length === 1) return new Map();
    }
    const readings = await Promise.all(names.map((name) => readDevice(device, [name])));
    return new Map(readings.flatMap((found) => [...found]));
  }

  /**
   * The light levels of the ports among `subjects` on one device, when the driver reads optics. A
   * device that does not answer gives none this round: the API then shows the last ones for a while.
   */
  async function readOptics(
    device: string,
    subjects: TrafficSubject[],
    readAt: Date,
  ): Promise<StoredOptics[]> {
    const ports = subjects.filter((s) => s.subjectType === 'port');
    if (!driver.capabilities.optics || !ports.length) return [];
    try {
      const readings = await driver.readOptics(device, [...new Set(ports.map((p) => p.interfaceName))]);
      const byName = new Map(readings.map((r) => [r.interface, r]));
      return ports.flatMap((port) => {
        const reading = byName.get(port.interfaceName);
        return reading ? [{ port: port.subjectId, txDbm: reading.txDbm, rxDbm: reading.rxDbm, readAt }] : [];
      });
    } catch (error) {
      if (error instanceof DriverError) return [];
      throw error;
    }
  }

  return {
    /**
     * One sampling round: reads the counters of every subject in service, device by device, stores
     * one sample per subject and the light levels of each port, and deletes samples no window
     * reaches any more.
     */
    async sampleTraffic({ intervalSeconds }: { intervalSeconds: number }): Promise<SamplingRound> {
      const subjects = driver.capabilities.counters ? await traffic.subjectsInService() : [];
      const byDevice = new Map<string, TrafficSubject[]>();
      for (const subject of subjects)
        byDevice.set(subject.device, [...(byDevice.get(subject.device) ?? []), subject]);
      const samples: NewTrafficSample[] = [];
      const optics: StoredOptics[] = [];
      await Promise.all(
        [...byDevice].map(async ([device, onDevice]) => {
          const readings = await readDevice(device, [...new Set(onDevice.map((s) => s.interfaceName))]);
          for (const subject of onDevice) {
            const reading = readings.get(subject.interfaceName);
            if (!reading) continue;
            const { interface: _name, readAt, ...counters } = reading;
            samples.push({ ...subject, ...counters, sampledAt: new Date(readAt) });
          }
          optics.push(...(await readOptics(device, onDevice, clock())));
        }),
      );
      const sampled = await traffic.storeSamples(samples);
      await traffic.storeOptics(optics);
      const pruned = await traffic.pruneBefore(retentionStart(clock(), intervalSeconds));
      return {
        at: clock().toISOString(),
        subjects: subjects.length,
        sampled,
        missed: subjects.length - samples.length,
        optics: optics.length,
        pruned,
      };
    },
  };
}
