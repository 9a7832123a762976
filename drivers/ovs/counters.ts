import type { ServiceAttachment } from '../contract';
import type { Counters } from '../counters';
import { addCounters, NO_TRAFFIC } from '../counters';
import type { OvsFabric } from './fabric';
import type { InterfaceRow, ServiceRecord } from './records';

/**
 * Per service number, what its classifying rules took in (the flow statistics of the rules with
 * its cookie; a qinq service's outer-tag rule carries none) and what its meter dropped of that.
 */
export async function serviceTraffic(
  fabric: OvsFabric,
  bridge: string,
): Promise<Map<number, ServiceTraffic>> {
  const [flows, meters] = await Promise.all([
    fabric.ofctl(bridge, ['dump-flows', '{}']),
    fabric.ofctl(bridge, ['meter-stats', '{}']),
  ]);
  const traffic = new Map<number, ServiceTraffic>();
  const of = (id: number): ServiceTraffic => {
    const known = traffic.get(id) ?? { packets: 0n, octets: 0n, droppedPackets: 0n, droppedOctets: 0n };
    traffic.set(id, known);
    return known;
  };
  for (const line of flows.stdout.split('\n')) {
    const cookie = /cookie=0x([0-9a-f]+)/.exec(line);
    const packets = /\bn_packets=(\d+)/.exec(line);
    const octets = /\bn_bytes=(\d+)/.exec(line);
    if (!cookie || !packets || !octets || BigInt(`0x${cookie[1]}`) === 0n) continue;
    const service = of(Number.parseInt(cookie[1], 16));
    service.packets += BigInt(packets[1]);
    service.octets += BigInt(octets[1]);
  }
  // A service's meter has one band, which drops what passes the rate.
  for (const match of meters.stdout.matchAll(
    /meter:(\d+) [^\n]*\n\s*0: packet_count:(\d+) byte_count:(\d+)/g,
  )) {
    const service = of(Number(match[1]));
    service.droppedPackets += BigInt(match[2]);
    service.droppedOctets += BigInt(match[3]);
  }
  return traffic;
}

/** What a service's rules took in and its meter dropped, since the rules and meter were made. */
export interface ServiceTraffic {
  packets: bigint;
  octets: bigint;
  droppedPackets: bigint;
  droppedOctets: bigint;
}

/**
 * An interface's counters from OVS's statistics of it: the kernel's counters of the exchange end,
 * so "in" is what the customer side sent into the fabric. OVSDB carries them as JSON numbers,
 * exact up to 2^53 octets and rounded beyond.
 */
export function interfaceCounters(row: InterfaceRow): Counters {
  const count = (key: string) => BigInt(row.statistics.get(key) ?? 0);
  return {
    octetsIn: count('rx_bytes'),
    octetsOut: count('tx_bytes'),
    packetsIn: count('rx_packets'),
    packetsOut: count('tx_packets'),
    errorsIn: count('rx_errors'),
    errorsOut: count('tx_errors'),
    discardsIn: count('rx_dropped'),
    discardsOut: count('tx_dropped'),
  };
}

/** The octets a service's tags take on the wire. */
const TAG_OCTETS: Record<ServiceAttachment['vlanType'], bigint> = { port: 0n, dot1q: 4n, qinq: 8n };

/** Whether frames a service takes in are copied to `to`: the rule of `flowTable`'s peers. */
const sendsTo = (from: ServiceRecord & { name: string }, to: ServiceRecord & { name: string }) =>
  from.name !== to.name && from.segment === to.segment && !(from.isolated && to.isolated);

/**
 * A sub-interface's counters: the services of `parent` on outer tag `vlan` together. In is what
 * their rules took in (tags included), discards in what their meters dropped of it. Out follows
 * from the hub a segment is: every frame a peer's rules took in and its meter let pass is sent to
 * each service it reaches, its tags swapped for that service's.
 */
export function subInterfaceCounters(
  services: ReadonlyArray<ServiceRecord & { name: string }>,
  traffic: ReadonlyMap<number, ServiceTraffic>,
  { parent, vlan }: { parent: string; vlan: number },
): Counters {
  const none: ServiceTraffic = { packets: 0n, octets: 0n, droppedPackets: 0n, droppedOctets: 0n };
  const atLeastZero = (value: bigint) => (value > 0n ? value : 0n);
  let counters = NO_TRAFFIC;
  for (const own of services) {
    if (own.parent !== parent || own.vlanType === 'port' || own.outerVlan !== vlan) continue;
    const taken = traffic.get(own.id) ?? none;
    let packetsOut = 0n;
    let octetsOut = 0n;
    for (const peer of services) {
      if (!sendsTo(peer, own)) continue;
      const sent = traffic.get(peer.id) ?? none;
      const packets = atLeastZero(sent.packets - sent.droppedPackets);
      const bare = atLeastZero(sent.octets - sent.droppedOctets - packets * TAG_OCTETS[peer.vlanType]);
      packetsOut += packets;
      octetsOut += bare + packets * TAG_OCTETS[own.vlanType];
    }
    counters = addCounters(counters, {
      ...NO_TRAFFIC,
      octetsIn: taken.octets,
      packetsIn: taken.packets,
      discardsIn: taken.droppedPackets,
      octetsOut,
      packetsOut,
    });
  }
  return counters;
}
