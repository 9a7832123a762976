import type { CheckContext } from '../runner';
import { roleCover } from './contacts';
import { allocated } from './exchange-lan-configs';
import type { Item } from './items';
import { isItem } from './items';

/**
 * Ordering a route-server session on a config of the suite's own, and the addresses of a config.
 */

/** An AS-SET in the form route servers take; the suite's own, naming nothing real. */
const AS_SET = 'AS-CONFORMANCE';

export const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/**
 * The order of a session of the primary account's with route server `feature`, for `config` on its
 * address `ip`, with its own contacts in the roles the route server requires.
 */
export async function sessionOrder(t: CheckContext, feature: Item, config: Item, ip: Item): Promise<Item> {
  const required = strings(feature.nfc_required_contact_roles);
  const roles =
    (await roleCover(t))(required) ??
    t.inconclusive(
      `the primary account's role assignments do not cover the roles ${required.join(', ')} that sessions with ${String(feature.id)} need`,
    );
  const spoken = strings(feature.address_families);
  const primary = (await t.session()).accountId;
  return {
    type: 'route_server',
    network_feature: feature.id,
    network_service_config: config.id,
    managing_account: primary,
    consuming_account: primary,
    billing_account: primary,
    role_assignments: roles,
    asn: (config.asns as unknown[])[0],
    session_mode: feature.session_mode,
    bgp_session_type: strings(feature.available_bgp_session_types)[0],
    ip: ip.id,
    ...(spoken.includes('af_inet') ? { as_set_v4: AS_SET } : {}),
    ...(spoken.includes('af_inet6') ? { as_set_v6: AS_SET } : {}),
  };
}

/** The readable addresses of a config. */
export async function addressesOf(t: CheckContext, id: string): Promise<Item[]> {
  const { config, listed } = await allocated(t, id);
  const ids = [...new Set([...strings(config.ips), ...listed.map((ip) => String(ip.id))])];
  const addresses: Item[] = [];
  for (const ipId of ids) {
    const response = await t.call('ips_read', { id: ipId });
    if (response.status === 200 && isItem(response.body)) addresses.push(response.body);
  }
  return addresses;
}
