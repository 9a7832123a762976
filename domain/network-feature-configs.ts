import { unknownAssignments } from './contacts';
import type { PropertyError } from './errors';
import type { State } from './states';
import { ACCEPTING_STATES } from './states';
import type { OrderAccounts } from './order-accounts';
import { orderAccountProblems } from './order-accounts';

/** What a route-server session order (or a change, as it would leave it) names. */
export type RouteServerConfigOrder = {
  type: 'route_server';
  network_feature: string;
  network_service_config: string;
  managing_account: string;
  consuming_account: string;
  billing_account: string;
  role_assignments: string[];
  asn: number;
  password: string | null;
  as_set_v4: string | null;
  as_set_v6: string | null;
  max_prefix_v4: number | null;
  max_prefix_v6: number | null;
  insert_ixp_asn: boolean | null;
  session_mode: 'public' | 'collector';
  bgp_session_type: 'active' | 'passive';
  ip: string;
  flags: Array<{ name: string; enabled: boolean }>;
  external_ref: string | null;
  purchase_order: string;
  contract_ref: string | null;
};

/** A session's flag as IX-API shows it: on or off. */
export interface FlagSetting {
  name: string;
  enabled: boolean;
}

/**
 * The flags in force on a session: those it names, then the route server's mandatory ones it does
 * not name (always on: a session cannot turn them off, and shows them on).
 */
export function flagsInForce(
  named: readonly FlagSetting[],
  offered: ReadonlyArray<{ name: string; mandatory: boolean }>,
): FlagSetting[] {
  const unnamed = offered.filter((flag) => flag.mandatory && !named.some((n) => n.name === flag.name));
  return [...named, ...unnamed.map((flag) => ({ name: flag.name, enabled: true }))];
}

/** A route server as the rules see it. */
export interface RouteServerFeature {
  id: string;
  type: string;
  network_service: string;
  session_mode: string;
  address_families: string[];
  available_bgp_session_types: string[];
  flags: Array<{ name: string; mandatory: boolean }>;
  nfc_required_contact_roles: string[];
}

/** The config a session runs over, with its addresses. */
export interface SessionCarrier {
  id: string;
  state: State;
  network_service: string;
  asns: number[];
  /** The addresses allocated to the config, by id. */
  ips: ReadonlyMap<string, { version: number; address: string }>;
}

export interface FeatureConfigFacts {
  feature: RouteServerFeature | undefined;
  /** The config, if the caller may change it. */
  config: SessionCarrier | undefined;
  assignedRoles: string[];
  /** The order's role assignments that are of the caller's contacts. */
  knownAssignments: ReadonlySet<string>;
  /** The accounts the order names: on-boarded, the billing one able to pay. */
  accounts: OrderAccounts;
}

/** An AS-SET or an AS, optionally hierarchical, optionally with its IRR source: `AS-EXAMPLE@RIPE`. */
const AS_SET = /^(AS[0-9]+|AS-[A-Z0-9_-]+)(:(AS[0-9]+|AS-[A-Z0-9_-]+))*(@[A-Z0-9-]+)?$/i;

/**
 * A BGP session password every device can carry: 1 to 80 printable ASCII characters without the
 * space and the quotes, which router configurations would have to escape. The API refuses what a
 * route server could not render, so that no order fails on the device.
 */
export const BGP_PASSWORD = /^[!#-&(-~]{1,80}$/;

/**
 * Everything wrong with a route-server session order, by property: the route server and the
 * config belong to one service; session mode and session type are the route server's; the ASN is
 * one of the config's; the address is one of the config's, of a family the route server speaks;
 * AS-SETs for the families it speaks; flags it offers (mandatory ones stay on); contact roles and
 * billing. `concerned` narrows the rules to what a change touches.
 */
export function routeServerConfigProblems(
  order: RouteServerConfigOrder,
  facts: FeatureConfigFacts,
  concerned: (property: string) => boolean = () => true,
): PropertyError[] {
  const problems: PropertyError[] = [];
  const problem = (name: string, reason: string) => {
    if (concerned(name.split('.')[0])) problems.push({ name, reason });
  };
  const { feature, config } = facts;
  if (!feature) problem('network_feature', `no network feature ${order.network_feature}`);
  else if (feature.type !== order.type)
    problem('network_feature', `${feature.id} is a ${feature.type}, not a ${order.type}`);
  if (!config)
    problem('network_service_config', `no network service config ${order.network_service_config} of yours`);
  else {
    if (!ACCEPTING_STATES.has(config.state))
      problem('network_service_config', `${config.id} is ${config.state}; it takes no new sessions`);
    if (feature && feature.network_service !== config.network_service)
      problem(
        'network_feature',
        `${feature.id} serves ${feature.network_service}, not ${config.network_service}`,
      );
    if (!config.asns.includes(order.asn))
      problem('asn', `AS${order.asn} is not among the ASNs of ${config.id} (${config.asns.join(', ')})`);
    const ip = config.ips.get(order.ip);
    if (!ip) problem('ip', `${order.ip} is not an address of ${config.id}`);
    else if (feature && !feature.address_families.includes(ip.version === 4 ? 'af_inet' : 'af_inet6'))
      problem(
        'ip',
        `${feature.id} speaks ${feature.address_families.join(', ')}; ${ip.address} is IPv${ip.version}`,
      );
  }
  if (feature) {
    if (order.session_mode !== feature.session_mode)
      problem('session_mode', `${feature.id} runs ${feature.session_mode} sessions`);
    if (!feature.available_bgp_session_types.includes(order.bgp_session_type))
      problem(
        'bgp_session_type',
        `${feature.id} offers ${feature.available_bgp_session_types.join(', ')} sessions`,
      );
    const v4 = feature.address_families.includes('af_inet');
    const v6 = feature.address_families.includes('af_inet6');
    if (v4 && !v6 && !order.as_set_v4)
      problem('as_set_v4', `${feature.id} speaks IPv4: name your IPv4 AS-SET`);
    if (v6 && !v4 && !order.as_set_v6)
      problem('as_set_v6', `${feature.id} speaks IPv6: name your IPv6 AS-SET`);
    if (v4 && v6 && !order.as_set_v4 && !order.as_set_v6)
      problem('as_set_v4', `${feature.id} speaks both families: name an AS-SET for at least one`);
    for (const [index, flag] of order.flags.entries()) {
      const offered = feature.flags.find((f) => f.name === flag.name);
      if (!offered) problem(`flags.${index}`, `${feature.id} has no flag ${flag.name}`);
      else if (offered.mandatory && !flag.enabled)
        problem(`flags.${index}`, `${flag.name} is always on at ${feature.id}`);
    }
    const missing = feature.nfc_required_contact_roles.filter((role) => !facts.assignedRoles.includes(role));
    if (missing.length)
      problem(
        'role_assignments',
        `sessions with ${feature.id} need contacts with the role(s) ${missing.join(', ')}`,
      );
  }
  for (const unknown of unknownAssignments(order.role_assignments, facts.knownAssignments))
    problem(unknown.name, unknown.reason);
  for (const family of ['as_set_v4', 'as_set_v6'] as const) {
    const value = order[family];
    if (value && !AS_SET.test(value)) problem(family, `${value} is not an AS-SET such as AS-EXAMPLE@RIPE`);
  }
  if (order.password !== null && order.password !== '' && !BGP_PASSWORD.test(order.password))
    problem('password', 'use 1 to 80 printable ASCII characters without spaces or quotes');
  for (const { name, reason } of orderAccountProblems(facts.accounts)) problem(name, reason);
  return problems;
}
