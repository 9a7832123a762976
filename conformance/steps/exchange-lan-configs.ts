import type { CheckContext } from '../runner';
import { roleCover } from './contacts';
import type { Access } from './exchange-lans';
import { liveAccess, vlanConfigFor } from './exchange-lans';
import type { Item } from './items';
import { current, idOf, isItem, newMarker } from './items';
import type { Cancellable } from './subjects';
import { waitFor } from './waiting';
import { wholeList } from './whole-lists';

/**
 * Ordering exchange-LAN access of the suite's own, and reading back what the exchange allocated.
 */

export const CONFIGS: Cancellable = {
  noun: 'network service config',
  read: 'network_service_configs_read',
  destroy: 'network_service_configs_destroy',
  policy: 'network_service_config_cancellation_policy_read',
};

/** What ordering a config needs besides the operation under test. */
export const ORDERING_CONFIGS = [
  'network_service_configs_create',
  'network_service_configs_read',
  'network_service_configs_destroy',
  'network_services_list',
  'connections_list',
  'product_offerings_list',
  'role_assignments_list',
];

/** An ASN of the documentation range (RFC 5398), for an exchange that takes any. */
const DOCUMENTATION_ASN = 64496;

export const ids = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/** The ASNs the primary account peers with on its other exchange-LAN configs, or one to test with. */
async function asnsOf(t: CheckContext): Promise<unknown[]> {
  const others = await wholeList(t, 'network_service_configs_list', { query: 'type=exchange_lan' });
  const known = others.find((config) => Array.isArray(config.asns) && config.asns.length);
  return known ? (known.asns as unknown[]) : [DOCUMENTATION_ASN];
}

export interface Ordered {
  config: Item;
  id: string;
  marker: string;
  body: Item;
}

/**
 * Orders exchange-LAN access on `access.connection`, written into the ledger first, with the
 * primary account's contacts in the roles the service requires. An order the exchange refuses
 * as invalid leaves nothing to judge: the suite cannot know every exchange's rules.
 */
export async function orderConfig(t: CheckContext, access: Access, extra: Item = {}): Promise<Ordered> {
  const primary = (await t.session()).accountId;
  const required = Array.isArray(access.service.nsc_required_contact_roles)
    ? access.service.nsc_required_contact_roles
    : [];
  const roles =
    (await roleCover(t))(required) ??
    t.inconclusive(
      `the primary account's role assignments do not cover the roles ${required.join(', ')} that configs of ${String(access.service.id)} need`,
    );
  const marker = newMarker();
  const body: Item = {
    type: 'exchange_lan',
    network_service: access.service.id,
    managing_account: primary,
    consuming_account: primary,
    billing_account: primary,
    role_assignments: roles,
    connection: access.connection.id,
    vlan_config: vlanConfigFor(access.connection),
    asns: await asnsOf(t),
    listed: false,
    ...(typeof access.service.product_offering === 'string'
      ? { product_offering: access.service.product_offering }
      : {}),
    external_ref: marker,
    ...extra,
  };
  const seq = t.suite.ledger.intend({
    destroy: CONFIGS.destroy,
    role: 'primary',
    marker,
    find: { list: 'network_service_configs_list', query: `external_ref=${marker}` },
  });
  const response = await t.call('network_service_configs_create', { body });
  const config = isItem(response.body) ? response.body : undefined;
  const id = idOf(config);
  if (response.status === 201 && config && id !== undefined) {
    t.suite.ledger.created(seq, id);
    return { config, id, marker, body };
  }
  if (response.status === 400) {
    t.suite.ledger.removed(seq);
    t.inconclusive(
      `the exchange refused the suite's order of access to ${String(access.service.id)} on ${String(access.connection.id)} (${response.text.slice(0, 200)}); nothing could be judged`,
    );
  }
  t.must(false, `ordering a config answered ${response.status}, not 201: ${response.text.slice(0, 200)}`);
  return t.inconclusive('without the config nothing else could be judged');
}

/** Orders a config and waits for it to reach production, which the check needs. */
export async function liveConfig(t: CheckContext): Promise<Ordered & Access> {
  const access = await liveAccess(t);
  const ordered = await orderConfig(t, access);
  const live = await waitFor(
    t,
    CONFIGS.read,
    ordered.id,
    (read) => read.state === 'production',
    t.suite.waits.provisioning,
  );
  if (!live)
    t.inconclusive(
      `the config ordered did not reach production within ${t.suite.waits.provisioning / 1000} s`,
    );
  return { ...ordered, ...access, config: live };
}

/**
 * The addresses allocated to a config: its `ips` and what `/ips?network_service_config=` lists,
 * once either names one (allocation may be deferred); INCONCLUSIVE when none came.
 */
export async function allocated(t: CheckContext, id: string): Promise<{ config: Item; listed: Item[] }> {
  const until = Date.now() + t.suite.waits.provisioning;
  for (;;) {
    const listed = await wholeList(t, 'ips_list', {
      query: `network_service_config=${encodeURIComponent(id)}`,
    });
    const config = await current(t, CONFIGS, id);
    if (!config) return t.inconclusive(`config ${id} could not be read`);
    if (ids(config.ips).length || listed.length) return { config, listed };
    if (Date.now() >= until)
      t.inconclusive(
        `the exchange allocated no address to config ${id} within ${t.suite.waits.provisioning / 1000} s; allocation may be deferred`,
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
