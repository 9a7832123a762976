import type { LagConfig } from '../contract';
import type { DeviceSnapshot } from '../intent';
import type { OvsFabric } from './fabric';
import { ProgramError, runProgram } from './program';
import { EXTERNAL_IDS } from './topology';
import { failureOf } from './failure';
import { flowTable } from './flows';
import type { DeviceState, Layout, PortRow, ServiceRecord } from './records';
import { COMMIT_PREFIX, IDS, KEY_PREFIX, lagPortName, quoted, SERVICE_PREFIX } from './records';
import { readLayout, readLinks, readMeters, readState } from './state';

/**
 * Makes the device hold `after`: one OVSDB transaction for ports, LAGs, descriptions, service
 * records, the version and `bridgeIds`; then the links' states, the meters and the flow table.
 * A change OVS refuses is a `rejected` DriverError with OVS's message; what it took of the
 * change is undone as far as OVS lets it (the device then holds `current` again).
 */
export async function render(
  fabric: OvsFabric,
  current: DeviceState,
  after: DeviceSnapshot,
  bridgeIds: Record<string, string>,
  { restoring = false, drop = [] }: { restoring?: boolean; drop?: string[] } = {},
): Promise<void> {
  const { layout } = current;
  const { device, bridge } = layout;
  const commands: string[][] = [];
  const interfaceIds = (name: string): string[] => {
    const row = layout.interfaces.get(name)!;
    const ids = new Map(row.ids);
    ids.set(IDS.description, after.interfaces.get(name)!.description);
    return [...ids].map(([k, v]) => `external_ids:${quoted(k)}=${quoted(v)}`);
  };

  // Ports: a LAG's members in one port, every other interface in a port of its own.
  const wanted = new Map<string, { lag: LagConfig | null; members: string[] }>();
  for (const lag of after.lags.values())
    wanted.set(lagPortName(lag.name), { lag, members: [...lag.members].sort() });
  for (const state of after.interfaces.values())
    if (state.lag === null)
      wanted.set(layout.interfaces.get(state.name)!.name, { lag: null, members: [state.name] });
  const membersOf = (port: PortRow) =>
    port.interfaces.map((row) => row.ids.get(EXTERNAL_IDS.interface) ?? '').sort();
  const kept = new Set<string>();
  /** Interfaces whose port this change makes anew: OVS may fail to open them. */
  const recreated = new Set<string>();
  for (const port of layout.ports) {
    if (port.name === bridge || port.name === layout.trunk?.name) continue;
    const target = wanted.get(port.name);
    const same =
      target !== undefined &&
      JSON.stringify(target.members) === JSON.stringify(membersOf(port)) &&
      (target.lag !== null) === port.ids.has(IDS.lag);
    if (same) kept.add(port.name);
    else commands.push(['del-port', bridge, port.name]);
  }
  const lagSettings = (lag: LagConfig) => [
    'bond_mode=balance-slb',
    `lacp=${lag.mode === 'lacp' ? 'active' : 'off'}`,
    `external_ids:${quoted(IDS.lag)}=${quoted(lag.name)}`,
    `external_ids:${quoted(IDS.description)}=${quoted(lag.description)}`,
  ];
  for (const [portName, target] of wanted) {
    if (kept.has(portName)) {
      if (target.lag) {
        commands.push(['set', 'Port', portName, ...lagSettings(target.lag)]);
        if (target.lag.lacpTimeout)
          commands.push(['set', 'Port', portName, `other_config:lacp-time=${target.lag.lacpTimeout}`]);
        else commands.push(['remove', 'Port', portName, 'other_config', 'lacp-time']);
      }
      for (const member of target.members)
        if (
          current.snapshot.interfaces.get(member)!.description !== after.interfaces.get(member)!.description
        )
          commands.push(['set', 'Interface', layout.interfaces.get(member)!.name, ...interfaceIds(member)]);
      continue;
    }
    for (const member of target.members) recreated.add(member);
    if (!target.lag) {
      commands.push(['add-port', bridge, portName]);
      commands.push(['set', 'Interface', portName, ...interfaceIds(target.members[0])]);
      continue;
    }
    const refs = target.members.map((_, index) => `@i${index}`);
    target.members.forEach((member, index) =>
      commands.push([
        `--id=${refs[index]}`,
        'create',
        'Interface',
        `name=${layout.interfaces.get(member)!.name}`,
        ...interfaceIds(member),
      ]),
    );
    commands.push([
      '--id=@lag',
      'create',
      'Port',
      `name=${portName}`,
      `interfaces=${refs.join(',')}`,
      ...lagSettings(target.lag),
      ...(target.lag.lacpTimeout ? [`other_config:lacp-time=${target.lag.lacpTimeout}`] : []),
    ]);
    commands.push(['add', 'Bridge', bridge, 'ports', '@lag']);
  }

  // Service records, numbered for their rules and meters.
  const serviceIds = new Map<string, number>();
  const used = new Set<number>();
  for (const name of after.services.keys()) {
    const id = current.serviceIds.get(name);
    if (id !== undefined) {
      serviceIds.set(name, id);
      used.add(id);
    }
  }
  let next = 1;
  for (const name of after.services.keys()) {
    if (serviceIds.has(name)) continue;
    while (used.has(next)) next += 1;
    serviceIds.set(name, next);
    used.add(next);
  }
  const ids: Record<string, string> = { ...bridgeIds, [IDS.version]: String(current.version + 1) };
  const dropped = restoring
    ? [...layout.ids.keys()].filter(
        (key) => (key.startsWith(COMMIT_PREFIX) || key.startsWith(KEY_PREFIX)) && !current.committed.has(key),
      )
    : drop.filter((key) => layout.ids.has(key));
  for (const key of dropped) commands.push(['remove', 'Bridge', bridge, 'external_ids', quoted(key)]);
  for (const [name, service] of after.services) {
    const record: ServiceRecord = {
      id: serviceIds.get(name)!,
      description: service.description,
      parent: service.parent,
      vlanType: service.vlanType,
      outerVlan: service.outerVlan,
      innerVlan: service.innerVlan,
      segment: service.segment,
      isolated: service.isolated,
      macFilter: service.macFilter,
      macs: service.macs,
      rateLimit: service.rateLimit,
    };
    ids[SERVICE_PREFIX + name] = JSON.stringify(record);
  }
  for (const name of current.snapshot.services.keys())
    if (!after.services.has(name))
      commands.push(['remove', 'Bridge', bridge, 'external_ids', quoted(SERVICE_PREFIX + name)]);
  commands.push([
    'set',
    'Bridge',
    bridge,
    ...Object.entries(ids).map(([k, v]) => `external_ids:${quoted(k)}=${quoted(v)}`),
  ]);

  let taken = false;
  try {
    const { stderr } = await fabric.vsctl(commands.flatMap((command) => ['--', ...command]));
    taken = true;
    if (/Error detected/.test(stderr))
      throw new ProgramError('ovs-vsctl', stderr.split('\n')[0], false, false);
    const refreshed = await readLayout(fabric, device);
    const broken = [...recreated]
      .map((name) => refreshed.interfaces.get(name))
      .find((row) => row && (row.error || row.ofport < 0));
    if (broken)
      throw new ProgramError(
        'ovs-vswitchd',
        `${broken.name}: ${broken.error || 'no OpenFlow port'}`,
        false,
        false,
      );

    // Links: up or down as the interfaces are enabled.
    const links = await readLinks();
    for (const state of after.interfaces.values()) {
      const link = refreshed.interfaces.get(state.name)!.name;
      if ((links.get(link)?.up ?? false) !== state.enabled)
        await runProgram('ip', ['link', 'set', 'dev', link, state.enabled ? 'up' : 'down']);
    }

    await installRules(fabric, refreshed, after, serviceIds);
  } catch (error) {
    const failure = failureOf(device, error, 'rejected');
    if (taken && !restoring) {
      const previous = Object.fromEntries(
        [...Object.keys(bridgeIds), ...drop]
          .filter((key) => layout.ids.has(key))
          .map((key) => [key, layout.ids.get(key)!]),
      );
      const now = await readState(fabric, device).catch(() => undefined);
      if (now)
        await render(fabric, { ...now, committed: current.committed }, current.snapshot, previous, {
          restoring: true,
        }).catch(() => undefined);
    }
    throw failure;
  }
}

/**
 * Makes the bridge's meters and flow table those of `snapshot`'s services; answers how many
 * meters it had to add or change. Meters go first, so that rules can use them; meters no rule
 * uses go last.
 */
export async function installRules(
  fabric: OvsFabric,
  layout: Layout,
  snapshot: DeviceSnapshot,
  serviceIds: ReadonlyMap<string, number>,
): Promise<number> {
  const { bridge } = layout;
  const meters = await readMeters(fabric, bridge);
  const wantedMeters = new Map<number, number>();
  for (const [name, service] of snapshot.services)
    if (service.rateLimit !== null) wantedMeters.set(serviceIds.get(name)!, service.rateLimit * 1000);
  let installed = 0;
  for (const [id, kbps] of wantedMeters) {
    if (meters.get(id) === kbps) continue;
    const spec = `meter=${id},kbps,burst,band=type=drop,rate=${kbps},burst_size=${Math.max(1000, Math.round(kbps / 10))}`;
    await fabric.ofctl(bridge, [meters.has(id) ? 'mod-meter' : 'add-meter', '{}', spec]);
    installed += 1;
  }
  // A device trunked to its metro's core bridge sends every segment there on its fabric VLAN.
  const trunk = layout.trunk && {
    ofport: layout.trunk.ofport,
    vlans: await fabric.segmentVlans([...snapshot.services.values()].map((s) => s.segment)),
  };
  const flows = flowTable(snapshot, serviceIds, (name) => layout.interfaces.get(name)!.ofport, trunk);
  await fabric.ofctl(bridge, ['--bundle', 'replace-flows', '{}', '-'], `${flows.join('\n')}\n`);
  for (const id of meters.keys())
    if (!wantedMeters.has(id)) await fabric.ofctl(bridge, ['del-meter', '{}', `meter=${id}`]);
  return installed;
}
