import { COUNTER_NAMES } from '../domain/statistics';
import type { CounterReading } from './contract';
import { DriverError } from './contract';

/** The eight counters of a reading, without its name and instant. */
export type Counters = Omit<CounterReading, 'interface' | 'readAt'>;

export const NO_TRAFFIC: Counters = Object.fromEntries(COUNTER_NAMES.map((name) => [name, 0n])) as Counters;

export const addCounters = (a: Counters, b: Counters): Counters =>
  Object.fromEntries(COUNTER_NAMES.map((name) => [name, a[name] + b[name]])) as Counters;

/** Every counter of `counters` scaled by `perMille` / 1000. */
export const shareOf = (counters: Counters, perMille: bigint): Counters =>
  Object.fromEntries(COUNTER_NAMES.map((name) => [name, (counters[name] * perMille) / 1000n])) as Counters;

/**
 * The parent and VLAN of a sub-interface name `<interface-or-lag>.<vlan>` (VLAN 1 to 4094), or
 * undefined for any other name; whether the parent exists is the device's to say.
 */
export function subInterfaceOf(name: string): { parent: string; vlan: number } | undefined {
  const [, parent, vlan] = /^(.+)\.(\d{1,4})$/.exec(name) ?? [];
  if (parent === undefined || Number(vlan) < 1 || Number(vlan) > 4094) return undefined;
  return { parent, vlan: Number(vlan) };
}

/** The refusal of a counter read naming something the device does not have. */
export const unknownCounterName = (device: string, name: string) =>
  new DriverError(
    'invalid-config',
    `${device} has no interface, LAG or sub-interface (VLAN 1 to 4094) ${name}`,
  );
