import type { CheckContext } from '../runner';
import type { Item } from './items';
import { wholeList } from './whole-lists';

/**
 * Finding exchange LANs and connections of the primary account in production to order access on.
 */

export interface Access {
  /** The exchange LAN, as the primary account sees it. */
  service: Item;
  connection: Item;
}

/** The exchange LANs in production, by the metro area network they are delivered in. */
export async function exchangeLans(t: CheckContext): Promise<Map<string, Item>> {
  const services = (await wholeList(t, 'network_services_list', { query: 'type=exchange_lan' })).filter(
    (service) => service.type === 'exchange_lan' && (service.state ?? 'production') === 'production',
  );
  const byNetwork = new Map<string, Item>();
  for (const service of services)
    if (!byNetwork.has(String(service.metro_area_network)))
      byNetwork.set(String(service.metro_area_network), service);
  return byNetwork;
}

/** The metro area network each connection offering hands over in. */
export async function handoverNetworks(t: CheckContext): Promise<Map<string, string>> {
  const offerings = await wholeList(t, 'product_offerings_list', { query: 'type=connection' });
  return new Map(
    offerings.map((offering) => [String(offering.id), String(offering.handover_metro_area_network)]),
  );
}

/**
 * A connection the primary account manages, in production, in a metro area network with an exchange
 * LAN, preferring one that takes 802.1Q tags; INCONCLUSIVE when it has none.
 */
export async function liveAccess(t: CheckContext): Promise<Access> {
  const primary =
    (await t.session()).accountId ?? t.inconclusive('the primary token does not name its account');
  const lans = await exchangeLans(t);
  const networks = await handoverNetworks(t);
  const candidates = (await wholeList(t, 'connections_list'))
    .filter(
      (connection) =>
        connection.state === 'production' &&
        connection.managing_account === primary &&
        lans.has(networks.get(String(connection.product_offering)) ?? ''),
    )
    .sort((a, b) => Number(!tagged(a)) - Number(!tagged(b)) || String(a.id).localeCompare(String(b.id)));
  const connection =
    candidates[0] ??
    t.inconclusive(
      'the primary account has no connection in production in a metro area network with an exchange LAN',
      'a connection of the primary account in production where there is an exchange LAN',
    );
  return { connection, service: lans.get(networks.get(String(connection.product_offering))!)! };
}

export const tagged = (connection: Item) =>
  !Array.isArray(connection.vlan_types) || connection.vlan_types.includes('dot1q');

/** How a config of the suite's is tagged: one 802.1Q tag the exchange chooses, where it can. */
export const vlanConfigFor = (connection: Item): Item =>
  tagged(connection)
    ? { vlan_type: 'dot1q' }
    : { vlan_type: String((connection.vlan_types as unknown[])[0]) };
