import type { ServiceAttachment } from '../contract';
import type { DeviceSnapshot } from '../intent';
import { byName } from './records';

/** The OpenFlow actions that send a bare frame to `service`, tagged as it is. */
function egressActions(service: ServiceAttachment, ofports: number[]): string[] {
  const output =
    ofports.length === 1
      ? `output:${ofports[0]}`
      : `bundle(eth_src,0,hrw,ofport,members:${ofports.join(',')})`;
  const tag = (ethertype: string, vlan: number) => [
    `push_vlan:${ethertype}`,
    `set_field:${4096 + vlan}->vlan_vid`,
  ];
  if (service.vlanType === 'dot1q') return [...tag('0x8100', service.outerVlan!), output, 'pop_vlan'];
  if (service.vlanType === 'qinq')
    return [
      ...tag('0x8100', service.innerVlan!),
      ...tag('0x88a8', service.outerVlan!),
      output,
      'pop_vlan',
      'pop_vlan',
    ];
  return [output];
}

/** The device's trunk to its network's core bridge: its OpenFlow port and the segments' VLANs. */
export interface Trunk {
  ofport: number;
  vlans: ReadonlyMap<string, number>;
}

/** The priority code point a frame from an isolated service carries on the trunk. */
const ISOLATED_PCP = 1;

/**
 * The bridge's whole flow table for `snapshot`'s services (see the comment at the top): table 0
 * drops what no service admits, classifies dot1q and port services and pops qinq outer tags into
 * register 1; table 1 classifies qinq services by their inner tag. With a trunk, every frame of a
 * segment also leaves on the trunk tagged with the segment's fabric VLAN (priority code point 1
 * when its service is isolated), and what arrives on the trunk with that tag goes to the segment's
 * services here (to those that are not isolated when it came from an isolated one).
 */
export function flowTable(
  snapshot: DeviceSnapshot,
  serviceIds: ReadonlyMap<string, number>,
  ofportOf: (interfaceName: string) => number,
  trunk: Trunk | null = null,
): string[] {
  const portsOf = (parent: string) =>
    (snapshot.lags.get(parent)?.members ?? [parent]).map(ofportOf).sort((x, y) => x - y);
  const flows = ['table=0,priority=0,actions=drop', 'table=1,priority=0,actions=drop'];
  const outerPops = new Set<string>();
  const services = byName([...snapshot.services.values()]);
  const toTrunk = (service: ServiceAttachment): string[] => {
    const vlan = trunk?.vlans.get(service.segment);
    if (!trunk || vlan === undefined) return [];
    return [
      'push_vlan:0x8100',
      `set_field:${4096 + vlan}->vlan_vid`,
      ...(service.isolated ? [`set_field:${ISOLATED_PCP}->vlan_pcp`] : []),
      `output:${trunk.ofport}`,
      'pop_vlan',
    ];
  };
  for (const service of services) {
    const id = serviceIds.get(service.name)!;
    const peers = services.filter(
      (other) =>
        other.name !== service.name &&
        other.segment === service.segment &&
        !(service.isolated && other.isolated),
    );
    const actions = [
      ...(service.rateLimit !== null ? [`meter:${id}`] : []),
      ...(service.vlanType === 'port' ? [] : ['pop_vlan']),
      ...(peers.length ? ['load:0->NXM_OF_IN_PORT[]'] : []),
      ...peers.flatMap((peer) => egressActions(peer, portsOf(peer.parent))),
      ...toTrunk(service),
    ];
    // No source at all where the MACs filter and there are none: the table's default drops it all.
    const sources =
      service.macs.length || service.macFilter ? service.macs.map((mac) => `,dl_src=${mac}`) : [''];
    if (!sources.length) continue;
    for (const ofport of portsOf(service.parent)) {
      let match: string;
      if (service.vlanType === 'port') match = `table=0,priority=50,in_port=${ofport}`;
      else if (service.vlanType === 'dot1q')
        match = `table=0,priority=100,in_port=${ofport},dl_vlan=${service.outerVlan}`;
      else {
        const outer = `${ofport}/${service.outerVlan}`;
        if (!outerPops.has(outer)) {
          outerPops.add(outer);
          flows.push(
            `table=0,priority=100,in_port=${ofport},dl_vlan=${service.outerVlan},actions=pop_vlan,load:${service.outerVlan}->NXM_NX_REG1[0..11],resubmit(,1)`,
          );
        }
        match = `table=1,priority=100,in_port=${ofport},reg1=${service.outerVlan},dl_vlan=${service.innerVlan}`;
      }
      for (const source of sources)
        flows.push(
          `${match}${source},cookie=0x${id.toString(16)},actions=${actions.length ? actions.join(',') : 'drop'}`,
        );
    }
  }
  for (const [segment, vlan] of trunk?.vlans ?? []) {
    const members = services.filter((service) => service.segment === segment);
    if (!members.length) continue;
    const from = (sources: ServiceAttachment[]) =>
      ['pop_vlan', ...sources.flatMap((peer) => egressActions(peer, portsOf(peer.parent)))].join(',');
    flows.push(
      `table=0,priority=100,in_port=${trunk!.ofport},dl_vlan=${vlan},actions=${from(members)}`,
      `table=0,priority=110,in_port=${trunk!.ofport},dl_vlan=${vlan},dl_vlan_pcp=${ISOLATED_PCP},actions=${from(members.filter((m) => !m.isolated))}`,
    );
  }
  return flows;
}
