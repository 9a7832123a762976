import { isIPv4, isIPv6 } from 'node:net';
import type { RouteServerPlacement, RouteServerResolver } from '../bird/driver';
import type { FabricDevice, FabricRouteServer } from './topology';
import { routeServerLinkOf } from './topology';
import type { FabricCatalogue } from '../../domain/fabric-catalogue';

/**
 * What the ovs fabric is made of, from the catalogue: devices with their ports and the metro area
 * network of their PoP (devices of one metro area network carry its exchange LANs, and share a core
 * bridge), and the route servers of the exchange LANs with their addresses on the LAN. The rows come
 * from the database (domain/fabric-catalogue.ts says what they are; the worker and the scripts hand
 * them over).
 */

/** Every device of the catalogue (or those named) with its ports, their speeds, and its network. */
export async function fabricDevices(
  catalogue: FabricCatalogue,
  only?: readonly string[],
): Promise<FabricDevice[]> {
  const rows = await catalogue.ports(only);
  const devices = new Map<string, FabricDevice>();
  for (const row of rows) {
    const device = devices.get(row.device) ?? { device: row.device, ports: [], network: row.network };
    device.ports.push({ name: row.name, speed: Number(row.speed) });
    devices.set(row.device, device);
  }
  return [...devices.values()];
}

/** An address with the prefix length of the subnet it is in: `192.0.2.253/24`. */
const onSubnet = (address: string | null, subnet: string | null): string | null =>
  address && subnet ? `${address}/${subnet.split('/')[1]}` : null;

/** The route servers of the catalogue's exchange LANs that sit on a metro area network. */
export async function fabricRouteServers(catalogue: FabricCatalogue): Promise<FabricRouteServer[]> {
  const rows = await catalogue.routeServers();
  return rows
    .filter((row) => row.metro_area_network !== null)
    .map((row) => ({
      feature: row.id,
      network: row.metro_area_network!,
      segment: row.network_service,
      ipv4: onSubnet(row.ip_v4, row.subnet_v4),
      ipv6: onSubnet(row.ip_v6, row.subnet_v6),
    }));
}

/**
 * BIRD's router id for a route server: its IPv4 address, or for one with IPv6 alone the last 32
 * bits of its IPv6 address (an id is a 32-bit number BIRD writes as an IPv4 address).
 */
export function routerIdOf(ipv4: string | null, ipv6: string | null): string | undefined {
  if (ipv4 && isIPv4(ipv4)) return ipv4;
  if (!ipv6 || !isIPv6(ipv6)) return undefined;
  const groups = ipv6.split('::');
  const tail = (groups[groups.length - 1] || '0').split(':');
  const head = groups.length > 1 ? groups[0].split(':').filter(Boolean) : [];
  const all = [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  const low = all.slice(6).map((group) => Number.parseInt(group || '0', 16));
  const id = [low[0] >> 8, low[0] & 255, low[1] >> 8, low[1] & 255].join('.');
  return id === '0.0.0.0' ? undefined : id;
}

/**
 * Where each route server of the catalogue runs on the ovs fabric: the namespace the fabric made
 * for it, the ASN of its network feature, and its addresses on the exchange LAN.
 */
export function catalogueRouteServers(catalogue: FabricCatalogue): RouteServerResolver {
  return async (device): Promise<RouteServerPlacement | undefined> => {
    const row = await catalogue.routeServer(device);
    if (!row || row.metro_area_network === null) return undefined;
    const link = routeServerLinkOf({
      feature: row.id,
      network: row.metro_area_network,
      segment: row.network_service,
    });
    return {
      namespace: link.namespace,
      asn: Number(row.asn),
      routerId: routerIdOf(row.ip_v4, row.ip_v6),
      ipv4: row.ip_v4,
      ipv6: row.ip_v6,
    };
  };
}
