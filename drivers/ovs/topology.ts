import { createHash } from 'node:crypto';

/** A port of a device on the fabric, and its speed in Mbit/s (the catalogue's). */
export interface FabricPort {
  name: string;
  speed: number;
}

export interface FabricDevice {
  device: string;
  ports: FabricPort[];
  /**
   * The metro area network whose exchange LANs the device carries: its bridge is trunked to that
   * network's core bridge. Without one the bridge stands alone.
   */
  network?: string;
}

/** A route server of an exchange LAN (a network feature of the catalogue), as the fabric places it. */
export interface FabricRouteServer {
  /** The network feature's id: the route-server device. */
  feature: string;
  /** The metro area network of its exchange LAN: the core bridge it hangs off. */
  network: string;
  /** Its exchange LAN: the segment (network service) whose fabric VLAN its port is on. */
  segment: string;
  /** Its addresses on the LAN with the LAN's prefix length (`192.0.2.253/24`), or null. */
  ipv4: string | null;
  ipv6: string | null;
}

/** Where the fabric put one port: the veth pair and the customer side's network namespace. */
export interface FabricLink {
  port: string;
  /** The veth end that is a port of the device's bridge. */
  exchangeEnd: string;
  /** The veth end in the namespace, which stands for the customer's router. */
  customerEnd: string;
  namespace: string;
}

/** A device bridge's trunk to its network's core bridge: a pair of OVS patch ports. */
export interface FabricTrunk {
  device: string;
  /** The patch port on the device's bridge, and its peer on the core bridge. */
  devicePort: string;
  corePort: string;
}

/** The core bridge of a metro area network and the trunks of its devices. */
export interface FabricCore {
  network: string;
  bridge: string;
  trunks: FabricTrunk[];
}

/** Where the fabric put a route server: its namespace and the veth joining it to the core bridge. */
export interface FabricRouteServerLink {
  feature: string;
  network: string;
  segment: string;
  namespace: string;
  /** The veth end that is an access port of the core bridge, on the segment's fabric VLAN. */
  coreEnd: string;
  /** The veth end in the namespace, with the route server's addresses; BIRD runs there. */
  serverEnd: string;
}

/** What the fabric records in its run directory, so that `down` undoes exactly what `up` made. */
export interface FabricRecord {
  pids: { ovsdbServer: number | null; ovsVswitchd: number | null };
  devices: Array<{ device: string; bridge: string; links: FabricLink[] }>;
  /** Absent from records of fabrics made before there were core bridges. */
  cores?: FabricCore[];
  routeServers?: FabricRouteServerLink[];
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

/** Linux interface names take at most 15 characters of a restricted set; OVS bridges are ones. */
const LINK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$/;

/** The OVS bridge of a device: its own name where Linux takes it as an interface name. */
export const bridgeName = (device: string): string =>
  LINK_NAME.test(device) && !device.startsWith('ix') ? device : `ixbr${hash(device).slice(0, 11)}`;

/** The veth pair and namespace of a port, named after the device and the port. */
export function linkOf(device: string, port: string): FabricLink {
  const id = hash(`${device}\0${port}`).slice(0, 11);
  const readable = `${device}-${port}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 200);
  return {
    port,
    exchangeEnd: `ixx${id}`,
    customerEnd: `ixc${id}`,
    namespace: `ixc-${readable}-${id.slice(0, 4)}`,
  };
}

/** The core bridge of a metro area network. */
export const coreBridgeName = (network: string): string => `ixcore${hash(network).slice(0, 9)}`;

/** The patch ports joining a device's bridge and its network's core bridge. */
export function trunkOf(device: string, network: string): FabricTrunk {
  const id = hash(`${device}\0${network}`).slice(0, 11);
  return { device, devicePort: `ixt${id}`, corePort: `ixu${id}` };
}

/** The veth pair and namespace of a route server, named after its network feature. */
export function routeServerLinkOf(server: Pick<FabricRouteServer, 'feature' | 'network' | 'segment'>) {
  const id = hash(`route-server\0${server.feature}`).slice(0, 11);
  const readable = server.feature.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 200);
  return {
    feature: server.feature,
    network: server.network,
    segment: server.segment,
    namespace: `ixrs-${readable}-${id.slice(0, 4)}`,
    coreEnd: `ixr${id}`,
    serverEnd: `ixs${id}`,
  } satisfies FabricRouteServerLink;
}

/** The keys of `external_ids` the fabric and the ovs driver keep on bridges and interfaces. */
export const EXTERNAL_IDS = {
  device: 'ixapi-device',
  interface: 'ixapi-interface',
  speed: 'ixapi-speed',
  namespace: 'ixapi-namespace',
  customerEnd: 'ixapi-customer-end',
  /** On a core bridge, and on a device bridge's trunk interface: the metro area network. */
  network: 'ixapi-network',
  /** On a route server's port of a core bridge: its network feature. */
  routeServer: 'ixapi-route-server',
} as const;
