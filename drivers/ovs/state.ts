import type { InterfaceState, LagConfig, ServiceAttachment } from '../contract';
import { DriverError } from '../contract';
import type { OvsFabric } from './fabric';
import { runProgram } from './program';
import { EXTERNAL_IDS } from './topology';
import type { DeviceState, InterfaceRow, Layout, PortRow, ServiceRecord } from './records';
import { IDS, COMMIT_PREFIX, KEY_PREFIX, SERVICE_PREFIX, mapOf, scalarOf, setOf, uuidOf } from './records';

/** The device's bridge, ports and interfaces from OVSDB, in one transaction. */
export async function readLayout(fabric: OvsFabric, device: string): Promise<Layout> {
  const [bridges, ports, interfaces] = await fabric.transact([
    {
      op: 'select',
      table: 'Bridge',
      where: [['external_ids', 'includes', ['map', [[EXTERNAL_IDS.device, device]]]]],
      columns: ['name', 'ports', 'external_ids'],
    },
    {
      op: 'select',
      table: 'Port',
      where: [],
      columns: ['_uuid', 'name', 'interfaces', 'bond_mode', 'lacp', 'other_config', 'external_ids'],
    },
    {
      op: 'select',
      table: 'Interface',
      where: [],
      columns: ['_uuid', 'name', 'ofport', 'error', 'link_speed', 'external_ids', 'statistics'],
    },
  ]);
  const [bridge] = bridges.rows ?? [];
  if (!bridge) throw new DriverError('invalid-config', `the ovs fabric has no device ${device}`);
  const interfaceRows = new Map<string, InterfaceRow>();
  for (const row of interfaces.rows ?? []) {
    const uuid = uuidOf(row._uuid);
    interfaceRows.set(uuid, {
      uuid,
      name: String(row.name),
      ofport: Number(scalarOf(row.ofport) || -1),
      error: scalarOf(row.error),
      linkSpeed: Number(scalarOf(row.link_speed) || 0),
      ids: mapOf(row.external_ids),
      statistics: mapOf(row.statistics),
    });
  }
  const portUuids = new Set(setOf(bridge.ports).map(uuidOf));
  const portRows: PortRow[] = [];
  const byContractName = new Map<string, InterfaceRow>();
  let trunk: InterfaceRow | null = null;
  for (const row of ports.rows ?? []) {
    const uuid = uuidOf(row._uuid);
    if (!portUuids.has(uuid)) continue;
    const members = setOf(row.interfaces)
      .map((value) => interfaceRows.get(uuidOf(value)))
      .filter((member): member is InterfaceRow => member !== undefined);
    portRows.push({
      uuid,
      name: String(row.name),
      interfaces: members,
      bondMode: scalarOf(row.bond_mode),
      lacp: scalarOf(row.lacp),
      otherConfig: mapOf(row.other_config),
      ids: mapOf(row.external_ids),
    });
    for (const member of members) {
      const name = member.ids.get(EXTERNAL_IDS.interface);
      if (name !== undefined) byContractName.set(name, member);
      if (member.ids.has(EXTERNAL_IDS.network)) trunk = member;
    }
  }
  return {
    device,
    bridge: String(bridge.name),
    ids: mapOf(bridge.external_ids),
    ports: portRows,
    interfaces: byContractName,
    trunk,
  };
}

/** The kernel's view of the exchange ends: administratively up, and carrier. */
export async function readLinks(): Promise<Map<string, { up: boolean; carrier: boolean }>> {
  const { stdout } = await runProgram('ip', ['-j', 'link', 'show']);
  const links = JSON.parse(stdout) as Array<{ ifname: string; flags: string[] }>;
  return new Map(
    links.map((link) => [
      link.ifname,
      {
        up: link.flags.includes('UP'),
        carrier: link.flags.includes('UP') && link.flags.includes('LOWER_UP'),
      },
    ]),
  );
}

/**
 * Per cookie, the source MACs its rules admit (none: any source), from the bridge's flow table. A
 * service that admits no source at all has no rules, and so no cookie here.
 */
export async function readFlowMacs(fabric: OvsFabric, bridge: string): Promise<Map<number, Set<string>>> {
  const { stdout } = await fabric.ofctl(bridge, ['dump-flows', '{}', '--no-stats']);
  const macs = new Map<number, Set<string>>();
  for (const line of stdout.split('\n')) {
    const cookie = /cookie=0x([0-9a-f]+)/.exec(line);
    if (!cookie) continue;
    const id = Number.parseInt(cookie[1], 16);
    const seen = macs.get(id) ?? new Set<string>();
    const mac = /dl_src=([0-9a-f:]{17})/.exec(line);
    if (mac) seen.add(mac[1]);
    macs.set(id, seen);
  }
  return macs;
}

/** Meter rates in kbit/s by meter id. */
export async function readMeters(fabric: OvsFabric, bridge: string): Promise<Map<number, number>> {
  const { stdout } = await fabric.ofctl(bridge, ['dump-meters', '{}']);
  const rates = new Map<number, number>();
  for (const match of stdout.matchAll(/meter=(\d+)[^\n]*\n\s*type=drop rate=(\d+)/g))
    rates.set(Number(match[1]), Number(match[2]));
  return rates;
}

export async function readState(fabric: OvsFabric, device: string): Promise<DeviceState> {
  const layout = await readLayout(fabric, device);
  const [links, macs, meters] = await Promise.all([
    readLinks(),
    readFlowMacs(fabric, layout.bridge),
    readMeters(fabric, layout.bridge),
  ]);
  const lagOf = new Map<string, string>();
  const lags = new Map<string, LagConfig>();
  for (const port of layout.ports) {
    const lag = port.ids.get(IDS.lag);
    if (lag === undefined) continue;
    const members = port.interfaces
      .map((member) => member.ids.get(EXTERNAL_IDS.interface))
      .filter((name): name is string => name !== undefined)
      .sort();
    for (const member of members) lagOf.set(member, lag);
    const lacp = port.lacp === 'active';
    lags.set(lag, {
      name: lag,
      description: port.ids.get(IDS.description) ?? '',
      mode: lacp ? 'lacp' : 'static',
      lacpTimeout: lacp ? (port.otherConfig.get('lacp-time') === 'fast' ? 'fast' : 'slow') : null,
      members,
    });
  }
  const interfaces = new Map<string, InterfaceState>();
  for (const [name, row] of layout.interfaces) {
    const link = links.get(row.name);
    const speed = Number(row.ids.get(EXTERNAL_IDS.speed) ?? row.linkSpeed / 1_000_000);
    interfaces.set(name, {
      name,
      description: row.ids.get(IDS.description) ?? '',
      enabled: link?.up ?? false,
      speed,
      lag: lagOf.get(name) ?? null,
      operUp: link?.carrier ?? false,
    });
  }
  const services = new Map<string, ServiceAttachment>();
  const serviceIds = new Map<string, number>();
  for (const [key, value] of layout.ids) {
    if (!key.startsWith(SERVICE_PREFIX)) continue;
    const name = key.slice(SERVICE_PREFIX.length);
    const record = JSON.parse(value) as ServiceRecord;
    const rate = meters.get(record.id);
    serviceIds.set(name, record.id);
    services.set(name, {
      name,
      description: record.description,
      parent: record.parent,
      vlanType: record.vlanType,
      outerVlan: record.outerVlan,
      innerVlan: record.innerVlan,
      macs: [...(macs.get(record.id) ?? [])].sort(),
      macFilter: record.macFilter ?? false,
      rateLimit: rate === undefined ? null : Math.round(rate / 1000),
      segment: record.segment,
      isolated: record.isolated,
    });
  }
  return {
    layout,
    version: Number(layout.ids.get(IDS.version) ?? 0),
    snapshot: { interfaces, lags, services, bgpSessions: new Map() },
    serviceIds,
    committed: new Set(
      [...layout.ids.keys()].filter((key) => key.startsWith(COMMIT_PREFIX) || key.startsWith(KEY_PREFIX)),
    ),
  };
}
