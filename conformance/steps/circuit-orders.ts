import type { HttpResponse } from '../http';
import type { CheckContext } from '../runner';
import type { Role } from '../suite';
import { cleanUp } from './cleanup';
import { orderableNow } from './connection-orders';
import { roleCover } from './contacts';
import { handoverNetworks, tagged, vlanConfigFor } from './exchange-lans';
import type { Item } from './items';
import { idOf, isItem, newMarker } from './items';
import { hasProblemType, problemTypeOf, validationRefusal } from './problems';
import { isZero, sensitiveOfSchemas } from './redaction';
import type { Cancellable, Readable } from './subjects';
import { wholeList } from './whole-lists';

/**
 * What the checks of virtual circuits share: the operations they call, and how they order services,
 * member joining rules and configs of services, each written into the ledger before it is sent.
 */

export const SERVICES: Cancellable = {
  noun: 'network service',
  read: 'network_services_read',
  destroy: 'network_services_destroy',
  policy: 'network_service_cancellation_policy_read',
};
export const RULES: Readable = { noun: 'member joining rule', read: 'member_joining_rules_read' };
export const CIRCUIT_CONFIGS: Readable = {
  noun: 'network service config',
  read: 'network_service_configs_read',
};

export const CREATE = 'network_services_create';
export const PATCH = 'network_services_partial_update';
export const PUT = 'network_services_update';
export const RULE_CREATE = 'member_joining_rules_create';
export const RULE_PATCH = 'member_joining_rules_partial_update';
export const RULE_PUT = 'member_joining_rules_update';
export const RULE_DESTROY = 'member_joining_rules_destroy';
export const REQUEST_READ = 'network_service_change_request_read';
export const REQUEST_CREATE = 'network_service_change_request_create';
export const REQUEST_DESTROY = 'network_service_change_request_destroy';
export const CONFIG_CREATE = 'network_service_configs_create';
export const CONFIG_DESTROY = 'network_service_configs_destroy';

/** Multipoint services, which members join under their owner's rules. */
export const MULTIPOINT = ['mp2mp_vc', 'p2mp_vc'];
/** Services customers order, as opposed to the exchange's LANs. */
export const ORDERED = ['p2p_vc', ...MULTIPOINT, 'cloud_vc'];

/** What ordering a service needs besides the operation under test. */
export const ORDERING_SERVICES = [CREATE, SERVICES.read, SERVICES.destroy, 'product_offerings_list'];
/** What ordering a config of a service needs besides ordering the service. */
export const ORDERING_VC_CONFIGS = [
  CONFIG_CREATE,
  CONFIG_DESTROY,
  CIRCUIT_CONFIGS.read,
  'connections_list',
  'role_assignments_list',
];

/** States a new service may be answered in: ordered, not yet (or already) in production. */
export const EARLY = ['requested', 'allocated', 'testing', 'scheduled', 'production'];

export const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

export async function accountOf(t: CheckContext, role: Role): Promise<string> {
  return (
    (await t.session(role)).accountId ??
    t.inconclusive(`the ${role} account's token does not name its account`)
  );
}

/** The second account, which the check needs as a joining member, a B side or an onlooker. */
export async function secondAccount(t: CheckContext, purpose: string): Promise<string> {
  if (!t.suite.hasCredentials('secondary'))
    t.inconclusive(
      `no credentials for a second account were given; ${purpose}`,
      'credentials of a secondary account',
    );
  return accountOf(t, 'secondary');
}

/** Offerings of `type` a customer orders a service from today, by id. */
export async function serviceOfferings(t: CheckContext, type: string, query = ''): Promise<Item[]> {
  return (await wholeList(t, 'product_offerings_list', { query: `type=${type}${query}` }))
    .filter(
      (offering) =>
        offering.type === type && offering.resource_type === 'network_service' && orderableNow(offering),
    )
    .sort((a, b) => String(a.id).localeCompare(String(b.id)));
}

export async function offeringOf(t: CheckContext, type: string): Promise<Item> {
  const [offering] = await serviceOfferings(t, type);
  return offering ?? t.inconclusive(`the exchange has no ${type} offering orderable today`);
}

/** Connections of `role`'s account in production, by the metro area network they are in. */
export async function liveConnections(t: CheckContext, role: Role): Promise<Map<string, Item>> {
  const account = await accountOf(t, role);
  const networks = await handoverNetworks(t);
  const live = (await wholeList(t, 'connections_list', { role }))
    .filter((connection) => connection.state === 'production' && connection.managing_account === account)
    .sort((a, b) => Number(!tagged(a)) - Number(!tagged(b)) || String(a.id).localeCompare(String(b.id)));
  const byNetwork = new Map<string, Item>();
  for (const connection of live) {
    const network = networks.get(String(connection.product_offering));
    if (network !== undefined && !byNetwork.has(network)) byNetwork.set(network, connection);
  }
  return byNetwork;
}

/**
 * An offering of `type` handed over where the primary account has a connection in production,
 * and that connection; INCONCLUSIVE when there is none.
 */
export async function placed(
  t: CheckContext,
  type: string,
  accept: (offering: Item) => boolean = () => true,
): Promise<{ offering: Item; connection: Item }> {
  const connections = await liveConnections(t, 'primary');
  for (const offering of (await serviceOfferings(t, type)).filter(accept)) {
    const connection = connections.get(String(offering.handover_metro_area_network));
    if (connection) return { offering, connection };
  }
  return t.inconclusive(
    `no ${type} offering that fits is handed over where the primary account has a connection in production`,
    `a connection of the primary account in production where a ${type} offering hands over`,
  );
}

export interface OrderedService {
  service: Item;
  id: string;
  marker: string;
  body: Item;
}

/** Sends an order of a service, written into the ledger first; what is created is cleaned up. */
export async function attemptService(t: CheckContext, body: Item): Promise<HttpResponse> {
  const marker = typeof body.external_ref === 'string' ? body.external_ref : newMarker();
  const seq = t.suite.ledger.intend({
    destroy: SERVICES.destroy,
    role: 'primary',
    marker,
    find: { list: 'network_services_list', query: `external_ref=${marker}` },
  });
  const response = await t.call(CREATE, { body: { ...body, external_ref: marker } });
  const created = idOf(response.body);
  if (response.status < 300 && created !== undefined) t.suite.ledger.created(seq, created);
  else t.suite.ledger.removed(seq);
  return response;
}

/**
 * Orders a service of the primary account's. An order the exchange refuses as invalid leaves
 * nothing to judge: the suite cannot know every exchange's rules.
 */
export async function orderService(t: CheckContext, body: Item, what: string): Promise<OrderedService> {
  const marker = newMarker();
  const sent = { ...body, external_ref: marker };
  const response = await attemptService(t, sent);
  const service = isItem(response.body) ? response.body : undefined;
  const id = idOf(service);
  if (response.status === 201 && service && id !== undefined) return { service, id, marker, body: sent };
  if (response.status === 400)
    t.inconclusive(
      `the exchange refused the suite's order of ${what} from ${String(body.product_offering)} (${response.text.slice(0, 200)}); nothing could be judged`,
    );
  t.must(false, `ordering ${what} answered ${response.status}, not 201: ${response.text.slice(0, 200)}`);
  return t.inconclusive(`without ${what} nothing else could be judged`);
}

/** The order of a service of the primary account's own. */
export async function ownOrder(
  t: CheckContext,
  type: string,
  offering: Item,
  extra: Item = {},
): Promise<Item> {
  const primary = await accountOf(t, 'primary');
  return {
    type,
    product_offering: offering.id,
    managing_account: primary,
    consuming_account: primary,
    billing_account: primary,
    ...extra,
  };
}

/** Orders a private multipoint service of the primary account's. */
export async function privateService(
  t: CheckContext,
  type = 'mp2mp_vc',
  offering?: Item,
): Promise<OrderedService> {
  const from = offering ?? (await offeringOf(t, type));
  return orderService(
    t,
    await ownOrder(t, type, from, { display_name: 'Conformance private VLAN', public: false }),
    `a private ${type} service`,
  );
}

/** Orders a point-to-point circuit of the primary account's to `joining`. */
export async function circuitTo(
  t: CheckContext,
  joining: string,
  offering?: Item,
  extra: Item = {},
): Promise<OrderedService> {
  const from = offering ?? (await offeringOf(t, 'p2p_vc'));
  return orderService(
    t,
    await ownOrder(t, 'p2p_vc', from, {
      joining_member_account: joining,
      display_name: 'Conformance circuit',
      ...extra,
    }),
    'a p2p_vc circuit',
  );
}

/**
 * Cancels everything the check ordered, newest first, then archives each config and service once
 * it is cancelled or decommissioned, so that nothing the suite ordered stays behind as cancelled (a
 * state older revisions do not know). What goes on a later day stays until then.
 */
export async function finish(t: CheckContext, shared = false): Promise<void> {
  const ordered = t.suite.ledger
    .outstanding(shared)
    .filter((entry) => entry.id !== undefined && [CONFIG_DESTROY, SERVICES.destroy].includes(entry.destroy))
    // Configs first: a service is archived once its configs are.
    .sort((a, b) => Number(a.destroy === SERVICES.destroy) - Number(b.destroy === SERVICES.destroy));
  await cleanUp(t, shared);
  for (const { destroy, id, role } of ordered) {
    const read = destroy === CONFIG_DESTROY ? CIRCUIT_CONFIGS.read : SERVICES.read;
    const until = Date.now() + t.suite.waits.settling * 2;
    for (;;) {
      const response = await t.call(read, { id, role });
      const state = isItem(response.body) ? String(response.body.state) : undefined;
      if (state === 'cancelled' || state === 'decommissioned') {
        await t.call(destroy, { id, role });
        break;
      }
      if (response.status !== 200 || ['archived', 'decommission_requested'].includes(String(state))) break;
      if (Date.now() >= until) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Sensitive properties of a service that `role` sees with a value. */
export function sensitiveShown(t: CheckContext, service: Item): string[] {
  const sensitive = sensitiveOfSchemas(t, /NetworkService$/);
  return Object.keys(service).filter((key) => sensitive.has(key) && !isZero(service[key]));
}

/** Whether a list answer of `role` holds the item `id`. */
export async function listedFor(t: CheckContext, list: string, id: string, role: Role, query?: string) {
  return (await wholeList(t, list, { role, query })).some((item) => idOf(item) === id);
}

/** Holds a refusal to a 400 or a 403, and to a validation-error naming `names` when it is a 400. */
export function accountRefusal(
  t: CheckContext,
  response: HttpResponse,
  names: readonly string[],
  what: string,
) {
  if (response.status === 403) {
    t.must(
      hasProblemType(response, 'permission-denied'),
      `${what} was refused as ${problemTypeOf(response)}, not permission-denied`,
    );
    return;
  }
  validationRefusal(t, response, names, what);
}

// ---------------------------------------------------------------------------------------------
// Read profile
// ---------------------------------------------------------------------------------------------

/** Sends a rule, written into the ledger first; what is created is removed at the end. */
export async function attemptRule(
  t: CheckContext,
  body: Item,
): Promise<{ response: HttpResponse; id?: string }> {
  const marker = newMarker();
  const seq = t.suite.ledger.intend({
    destroy: RULE_DESTROY,
    role: 'primary',
    marker,
    find: {
      list: 'member_joining_rules_list',
      query: `network_service=${encodeURIComponent(String(body.network_service))}`,
    },
  });
  const response = await t.call(RULE_CREATE, { body: { ...body, external_ref: marker } });
  const id = idOf(response.body);
  if (response.status < 300 && id !== undefined) t.suite.ledger.created(seq, id);
  else t.suite.ledger.removed(seq);
  return { response, id };
}

/** A rule that must be created for the check to go on; refused as invalid, nothing is judged. */
export async function orderRule(t: CheckContext, body: Item): Promise<{ rule: Item; id: string }> {
  const { response, id } = await attemptRule(t, body);
  if (response.status === 201 && id !== undefined) return { rule: response.body as Item, id };
  if (response.status === 400)
    t.inconclusive(
      `the exchange refused the suite's ${String(body.type)} rule for ${String(body.consuming_account)} (${response.text.slice(0, 200)})`,
    );
  t.must(
    false,
    `creating a ${String(body.type)} rule answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
  );
  return t.inconclusive('without the rule nothing else could be judged');
}

/** Sends a config of a service as `role`, written into the ledger first. */
export async function attemptConfig(
  t: CheckContext,
  role: Role,
  service: Item,
  connection: Item,
  extra: Item = {},
): Promise<{ response: HttpResponse; id?: string }> {
  const account = await accountOf(t, role);
  const required = strings(service.nsc_required_contact_roles);
  const roles =
    (await roleCover(t, role))(required) ??
    t.inconclusive(
      `the ${role} account's role assignments do not cover the roles ${required.join(', ')} that configs of ${String(service.id)} need`,
    );
  const marker = newMarker();
  const seq = t.suite.ledger.intend({
    destroy: CONFIG_DESTROY,
    role,
    marker,
    find: { list: 'network_service_configs_list', query: `external_ref=${marker}` },
  });
  const response = await t.call(CONFIG_CREATE, {
    role,
    body: {
      type: service.type,
      network_service: service.id,
      managing_account: account,
      consuming_account: account,
      billing_account: account,
      role_assignments: roles,
      connection: connection.id,
      vlan_config: vlanConfigFor(connection),
      external_ref: marker,
      ...extra,
    },
  });
  const id = idOf(response.body);
  if (response.status < 300 && id !== undefined) t.suite.ledger.created(seq, id);
  else t.suite.ledger.removed(seq);
  return { response, id };
}

/** A config the check needs; refused as invalid, nothing can be judged. */
export async function orderVcConfig(
  t: CheckContext,
  role: Role,
  service: Item,
  connection: Item,
  extra: Item = {},
): Promise<{ config: Item; id: string }> {
  const { response, id } = await attemptConfig(t, role, service, connection, extra);
  if (response.status === 201 && id !== undefined) return { config: response.body as Item, id };
  if (response.status === 400)
    t.inconclusive(
      `the exchange refused the suite's ${String(service.type)} config on ${String(connection.id)} (${response.text.slice(0, 200)}); nothing could be judged`,
    );
  t.must(
    false,
    `ordering a ${String(service.type)} config answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
  );
  return t.inconclusive('without the config nothing else could be judged');
}

/** The capacities a rule allows, within the offering's range where it names one. */
export function capacities(offering: Item): { min: number; max: number; wider: number } {
  const low =
    typeof offering.bandwidth_min === 'number' && offering.bandwidth_min > 0 ? offering.bandwidth_min : 100;
  const high =
    typeof offering.bandwidth_max === 'number' && offering.bandwidth_max >= low * 4
      ? offering.bandwidth_max
      : low * 4;
  return { min: low, max: Math.floor(high / 2), wider: high };
}

/**
 * The capacity a circuit is ordered with and the one its B side then asks for: a step the
 * offering allows (up where upgrades are allowed, else down); undefined when it allows neither.
 */
export function bandwidthStep(offering: Item): { from: number; to: number } | undefined {
  const range = capacities(offering);
  if (offering.upgrade_allowed !== false) return { from: range.min, to: range.max };
  if (offering.downgrade_allowed !== false) return { from: range.max, to: range.min };
  return undefined;
}

/** Whether a 400 names the property `name`. */
export function propertyNamed(response: HttpResponse, name: string): boolean {
  const properties = (response.body as { properties?: Array<{ name?: unknown }> } | undefined)?.properties;
  return Array.isArray(properties) && properties.some((property) => property?.name === name);
}
