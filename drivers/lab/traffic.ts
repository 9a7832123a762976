import { createHash } from 'node:crypto';

/**
 * The traffic the lab's interfaces carry: a daily curve around a mean, scaled per interface by a
 * hash of its device and name, so that every interface looks different yet the same interface
 * always carries the same traffic at the same instant. Octets are the integral of the rate, in
 * closed form, so counters follow from (device, name, time) alone and only ever grow; packets,
 * errors and discards are fixed fractions of the octets and grow with them.
 */

const DAY_MS = 86_400_000;

/** How an interface's traffic is shaped, all derived from its hash. */
export interface TrafficProfile {
  /** Mean octets per second, in and out. */
  meanIn: bigint;
  meanOut: bigint;
  /** Swing of the daily curve around the mean, as a fraction of it (below 1: traffic never stops). */
  amplitude: number;
  /** Milliseconds after midnight UTC at which the curve crosses its mean on the way up. */
  phaseMs: number;
  /** Mean packet sizes in octets. */
  packetSizeIn: bigint;
  packetSizeOut: bigint;
  /** One error in so many packets, one discard in so many packets. */
  packetsPerError: bigint;
  packetsPerDiscard: bigint;
}

/** A fraction in [0, 1) from two bytes of the hash, so that each parameter varies on its own. */
const fraction = (hash: Buffer, at: number) => hash.readUInt16BE(at) / 65_536;
const between = (low: number, high: number, f: number) => low + (high - low) * f;

/** The traffic profile of an interface of `speed` Mbit/s. */
export function trafficProfile(device: string, name: string, speed: number): TrafficProfile {
  const hash = createHash('sha256').update(`${device}/${name}`).digest();
  const octetsPerSecond = (speed * 1_000_000) / 8;
  const utilisationIn = between(0.05, 0.35, fraction(hash, 0));
  const utilisationOut = utilisationIn * between(0.7, 1.3, fraction(hash, 2));
  // Peaks in the European evening, give or take three hours: the curve rises through its mean six
  // hours before its peak.
  const peakMs = between(17, 23, fraction(hash, 4)) * 3_600_000;
  return {
    meanIn: BigInt(Math.max(1, Math.round(octetsPerSecond * utilisationIn))),
    meanOut: BigInt(Math.max(1, Math.round(octetsPerSecond * utilisationOut))),
    amplitude: between(0.3, 0.7, fraction(hash, 6)),
    phaseMs: (peakMs - DAY_MS / 4 + DAY_MS) % DAY_MS,
    packetSizeIn: BigInt(Math.round(between(300, 1400, fraction(hash, 8)))),
    packetSizeOut: BigInt(Math.round(between(300, 1400, fraction(hash, 10)))),
    packetsPerError: BigInt(Math.round(between(1e7, 1e9, fraction(hash, 12)))),
    packetsPerDiscard: BigInt(Math.round(between(1e5, 1e7, fraction(hash, 14)))),
  };
}

/**
 * Octets carried at a mean of `mean` octets/s from `fromMs` to `toMs` (epoch milliseconds): the
 * integral of mean × (1 + amplitude × sin(2π (t − phase) / day)). The linear part is exact in
 * integers; the periodic part stays within a day's worth of the swing, so a double holds it to
 * well under an octet.
 */
export function octetsBetween(
  mean: bigint,
  profile: Pick<TrafficProfile, 'amplitude' | 'phaseMs'>,
  fromMs: number,
  toMs: number,
): bigint {
  if (toMs <= fromMs) return 0n;
  const linear = (mean * BigInt(toMs - fromMs)) / 1000n;
  const angle = (ms: number) => (2 * Math.PI * ((ms - profile.phaseMs) % DAY_MS)) / DAY_MS;
  const swing = (Number(mean) * profile.amplitude * DAY_MS) / (2 * Math.PI * 1000);
  const periodic = Math.round(swing * (Math.cos(angle(fromMs)) - Math.cos(angle(toMs))));
  // The rate never drops below mean × (1 − amplitude) > 0, so the sum never falls below zero; the
  // clamp only absorbs the rounding of the two parts over a millisecond or two.
  const total = linear + BigInt(periodic);
  return total > 0n ? total : 0n;
}

/** The eight counters of an interface, from the octets it has carried in and out. */
export function countersOf(profile: TrafficProfile, octetsIn: bigint, octetsOut: bigint) {
  const packetsIn = octetsIn / profile.packetSizeIn;
  const packetsOut = octetsOut / profile.packetSizeOut;
  return {
    octetsIn,
    octetsOut,
    packetsIn,
    packetsOut,
    errorsIn: packetsIn / profile.packetsPerError,
    errorsOut: packetsOut / profile.packetsPerError,
    discardsIn: packetsIn / profile.packetsPerDiscard,
    discardsOut: packetsOut / profile.packetsPerDiscard,
  };
}

export type Counters = ReturnType<typeof countersOf>;

/** Per mille of its parent's traffic that a sub-interface carries: 2 to 20 %, by its name. */
export function subInterfaceShare(device: string, name: string): bigint {
  const hash = createHash('sha256').update(`${device}/${name}`).digest();
  return BigInt(20 + Math.floor(fraction(hash, 0) * 180));
}
