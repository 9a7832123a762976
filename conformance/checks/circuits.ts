import type { HttpResponse } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import type { Role } from '../suite';
import { wholeCollection, wholeList } from './collections';
import type { Cancellable, Readable } from './connections';
import {
  GOING,
  hasProblemType,
  holdPolicy,
  problemTypeOf,
  refuseMalformedDays,
  validationRefusal,
} from './connections';
import { conflictNames, exchangeLans, handoverNetworks, tagged, vlanConfigFor } from './configs';
import { isZero, sensitiveOfSchemas } from './isolation';
import { cleanUp, waitFor } from './lifecycle';
import { propertyNames } from './statuses';
import type { Item } from './orders';
import {
  cancel,
  change,
  current,
  foreignAttempt,
  idOf,
  isItem,
  newMarker,
  orderableNow,
  PROVISIONING_MS,
  refusedChange,
  roleCover,
  SETTLING_MS,
  show,
} from './orders';

/**
 * Virtual circuits a customer orders (profile `full`): private multipoint services and the rules
 * that let other members join them, point-to-point circuits to the second account and the changes
 * its B side asks for, cloud services, and configs of each kind on a connection in production.
 * What a check orders is written into the ledger first and cancelled at the end (services by
 * DELETE, and archived once cancelled; rules by DELETE). The read profile looks at the services
 * and rules the primary account already has.
 */

export const SERVICES: Cancellable = {
  noun: 'network service',
  read: 'network_services_read',
  destroy: 'network_services_destroy',
  policy: 'network_service_cancellation_policy_read',
};
const RULES: Readable = { noun: 'member joining rule', read: 'member_joining_rules_read' };
const CONFIGS: Readable = { noun: 'network service config', read: 'network_service_configs_read' };

const CREATE = 'network_services_create';
const PATCH = 'network_services_partial_update';
const PUT = 'network_services_update';
const RULE_CREATE = 'member_joining_rules_create';
const RULE_PATCH = 'member_joining_rules_partial_update';
const RULE_PUT = 'member_joining_rules_update';
const RULE_DESTROY = 'member_joining_rules_destroy';
const REQUEST_READ = 'network_service_change_request_read';
const REQUEST_CREATE = 'network_service_change_request_create';
const REQUEST_DESTROY = 'network_service_change_request_destroy';
const CONFIG_CREATE = 'network_service_configs_create';
const CONFIG_DESTROY = 'network_service_configs_destroy';

/** Multipoint services, which members join under their owner's rules. */
const MULTIPOINT = ['mp2mp_vc', 'p2mp_vc'];
/** Services customers order, as opposed to the exchange's LANs. */
const ORDERED = ['p2p_vc', ...MULTIPOINT, 'cloud_vc'];

/** What ordering a service needs besides the operation under test. */
export const ORDERING_SERVICES = [CREATE, SERVICES.read, SERVICES.destroy, 'product_offerings_list'];
/** What ordering a config of a service needs besides ordering the service. */
export const ORDERING_VC_CONFIGS = [
  CONFIG_CREATE,
  CONFIG_DESTROY,
  CONFIGS.read,
  'connections_list',
  'role_assignments_list',
];

/** States a new service may be answered in: ordered, not yet (or already) in production. */
const EARLY = ['requested', 'allocated', 'testing', 'scheduled', 'production'];

export const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

async function accountOf(t: CheckContext, role: Role): Promise<string> {
  return (
    (await t.session(role)).accountId ??
    t.inconclusive(`the ${role} account's token does not name its account`)
  );
}

/** The second account, which the check needs as a joining member, a B side or an onlooker. */
async function secondAccount(t: CheckContext, purpose: string): Promise<string> {
  if (!t.suite.hasCredentials('secondary'))
    t.inconclusive(`no credentials for a second account were given; ${purpose}`);
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

async function offeringOf(t: CheckContext, type: string): Promise<Item> {
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
async function placed(
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
  );
}

export interface OrderedService {
  service: Item;
  id: string;
  marker: string;
  body: Item;
}

/** Sends an order of a service, written into the ledger first; what is created is cleaned up. */
async function attemptService(t: CheckContext, body: Item): Promise<HttpResponse> {
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
async function privateService(t: CheckContext, type = 'mp2mp_vc', offering?: Item): Promise<OrderedService> {
  const from = offering ?? (await offeringOf(t, type));
  return orderService(
    t,
    await ownOrder(t, type, from, { display_name: 'Conformance private VLAN', public: false }),
    `a private ${type} service`,
  );
}

/** Orders a point-to-point circuit of the primary account's to `joining`. */
async function circuitTo(
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
export async function finish(t: CheckContext): Promise<void> {
  const ordered = t.suite.ledger
    .outstanding()
    .filter((entry) => entry.id !== undefined && [CONFIG_DESTROY, SERVICES.destroy].includes(entry.destroy))
    // Configs first: a service is archived once its configs are.
    .sort((a, b) => Number(a.destroy === SERVICES.destroy) - Number(b.destroy === SERVICES.destroy));
  await cleanUp(t);
  for (const { destroy, id, role } of ordered) {
    const read = destroy === CONFIG_DESTROY ? CONFIGS.read : SERVICES.read;
    const until = Date.now() + SETTLING_MS * 2;
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
function sensitiveShown(t: CheckContext, service: Item): string[] {
  const sensitive = sensitiveOfSchemas(t, /NetworkService$/);
  return Object.keys(service).filter((key) => sensitive.has(key) && !isZero(service[key]));
}

/** Whether a list answer of `role` holds the item `id`. */
async function listedFor(t: CheckContext, list: string, id: string, role: Role, query?: string) {
  return (await wholeList(t, list, { role, query })).some((item) => idOf(item) === id);
}

/** Holds a refusal to a 400 or a 403, and to a validation-error naming `names` when it is a 400. */
function accountRefusal(t: CheckContext, response: HttpResponse, names: readonly string[], what: string) {
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

const POLICY_CHECK: CheckDefinition = {
  id: 'NS-001',
  title: 'GET …/cancellation-policy of a service the primary account ordered says when it can go',
  clause:
    'Cancellation policy of a network service: for a p2p, multipoint or cloud service the caller manages, the first possible decommission day (not in the past) and the last day charged; asked for that day the same answer, for a later day an answer for that day charging no less; a malformed day is a 400 validation-error naming decommission_at; another account, which does not see the service, is answered 404. INCONCLUSIVE when the primary account manages no such service in production.',
  operations: [SERVICES.policy, 'network_services_list'],
  safety: 'read',
  async run(t) {
    const primary = await accountOf(t, 'primary');
    const live = (await wholeCollection(t, 'network_services_list')).filter(
      (service) =>
        ORDERED.includes(String(service.type)) &&
        service.managing_account === primary &&
        service.state === 'production',
    );
    if (!live.length)
      t.inconclusive('the primary account manages no p2p, multipoint or cloud service in production');
    for (const service of live.slice(0, 2)) await holdPolicy(t, SERVICES.policy, String(service.id));
    await refuseMalformedDays(t, SERVICES.policy, String(live[0].id));
    if (!t.suite.hasCredentials('secondary')) return;
    const seen = new Set(
      (await wholeCollection(t, 'network_services_list', 'secondary')).map((service) => String(service.id)),
    );
    const hidden = live.find((service) => !seen.has(String(service.id)));
    if (hidden === undefined) return;
    const asked = await t.call(SERVICES.policy, { id: String(hidden.id), role: 'secondary' });
    t.must(
      asked.status === 404,
      `another account asking for the policy of service ${String(hidden.id)}, which it does not see, got ${asked.status}, not 404`,
    );
  },
};

const RULE_LINKS_CHECK: CheckDefinition = {
  id: 'MJR-001',
  title:
    'Member joining rules name a multipoint service, which lists them, and network_service=<id> finds them',
  clause:
    'Member joining rules: each rule the caller lists names a network service the caller can read, of type mp2mp_vc or p2mp_vc; a service whose member_joining_rules the caller sees lists each of its rules, each readable and naming it; the network_service filter keeps exactly the rules of that service. INCONCLUSIVE when the primary account has no rules.',
  operations: ['member_joining_rules_list', 'member_joining_rules_read', SERVICES.read],
  safety: 'read',
  async run(t) {
    const rules = await wholeCollection(t, 'member_joining_rules_list');
    if (!rules.length) t.inconclusive('the primary account lists no member joining rules');
    const services = [...new Set(rules.map((rule) => String(rule.network_service)))].slice(0, 5);
    for (const id of services) {
      const read = await t.call(SERVICES.read, { id });
      if (!t.must(read.status === 200, `rules name network service ${id}, which answers ${read.status}`))
        continue;
      const service = read.body as Item;
      t.must(
        MULTIPOINT.includes(String(service.type)),
        `rules name network service ${id} of type ${show(service.type)}, not mp2mp_vc or p2mp_vc`,
      );
      const own = rules.filter((rule) => String(rule.network_service) === id).map((rule) => String(rule.id));
      const filtered = (
        await wholeList(t, 'member_joining_rules_list', {
          query: `network_service=${encodeURIComponent(id)}`,
        })
      ).map((rule) => String(rule.id));
      t.must(
        [...filtered].sort().join(',') === [...own].sort().join(','),
        `network_service=${id} lists the rules ${filtered.join(', ') || 'none'}; those naming it are ${own.join(', ')}`,
      );
      const listed = strings(service.member_joining_rules);
      if (!listed.length) continue;
      const missing = own.filter((rule) => !listed.includes(rule));
      t.must(!missing.length, `network service ${id} does not list its rules ${missing.join(', ')}`);
      for (const ruleId of listed.slice(0, 5)) {
        const rule = await t.call(RULES.read, { id: ruleId });
        if (t.must(rule.status === 200, `rule ${ruleId}, listed by service ${id}, answers ${rule.status}`))
          t.must(
            String((rule.body as Item).network_service) === id,
            `rule ${ruleId}, listed by service ${id}, names service ${show((rule.body as Item).network_service)}`,
          );
      }
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Services
// ---------------------------------------------------------------------------------------------

const SERVICE_CHECK: CheckDefinition = {
  id: 'NS-002',
  title:
    "A private multipoint service of the suite's own is ordered, changed, cancelled under its policy and archived",
  clause:
    "Network services: POST of a mp2mp_vc service answers 201 with the service in an early state, private as ordered, with the accounts and offering sent; it reads and is listed by its external_ref; PATCH and PUT answer 202 and what was sent shows; a PATCH naming an offering of another type is a 400 validation-error naming product_offering and changes nothing; another account, which does not see it, gets 404 for its PATCH and DELETE and changes nothing; its cancellation policy names a first possible day not in the past and honours a later day asked for; a DELETE on a day before the policy's first is a 400 cancellation-policy-error; a DELETE answers 202 with the service, which goes to cancelled (before production) or decommission_requested, readable all along; a DELETE of a cancelled or decommissioned service answers 202 with it archived.",
  operations: [CREATE, SERVICES.read, 'network_services_list', PATCH, PUT, SERVICES.destroy, SERVICES.policy],
  requires: [...ORDERING_SERVICES, 'network_services_list', PATCH, PUT, SERVICES.policy],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const { service, id, marker, body } = await privateService(t);
      t.must(
        EARLY.includes(String(service.state)),
        `a new service is ${show(service.state)}, not requested, allocated, testing or scheduled`,
      );
      t.should(service.state !== 'production', 'a new service is in production the moment it was ordered');
      for (const name of ['type', 'product_offering', 'managing_account', 'consuming_account', 'public'])
        t.must(
          service[name] === body[name],
          `the service ordered with ${name} ${show(body[name])} answers ${name} ${show(service[name])}`,
        );
      const read = await current(t, SERVICES, id);
      if (read)
        t.must(
          read.type === 'mp2mp_vc' && read.public === false,
          `service ${id} reads as ${show(read.type)} public ${show(read.public)}`,
        );
      const listed = await wholeList(t, 'network_services_list', { query: `external_ref=${marker}` });
      t.must(
        listed.length === 1 && idOf(listed[0]) === id,
        `external_ref=${marker} lists ${listed.map((item) => String(item.id)).join(', ') || 'nothing'}, not service ${id}`,
      );

      const patch = { type: 'mp2mp_vc', display_name: 'Conformance private VLAN, renamed' };
      await change(t, SERVICES, PATCH, id, patch, ['display_name']);
      const replacement: Item = {
        ...body,
        display_name: 'Conformance private VLAN, replaced',
        purchase_order: 'CONFORMANCE-PO-1',
        external_ref: `${marker}-replaced`,
      };
      await change(t, SERVICES, PUT, id, replacement, ['display_name', 'purchase_order', 'external_ref']);
      const other = (await serviceOfferings(t, 'p2p_vc'))[0];
      if (other)
        await refusedChange(t, SERVICES, PATCH, id, { type: 'mp2mp_vc', product_offering: other.id }, [
          'product_offering',
        ]);
      await foreignAttempt(
        t,
        SERVICES,
        PATCH,
        id,
        { body: { type: 'mp2mp_vc', display_name: 'Conformance, foreign' } },
        ['display_name'],
      );

      await holdPolicy(t, SERVICES.policy, id);
      await cancel(t, SERVICES, id);
      const ended = await current(t, SERVICES, id);
      if (!ended || !['cancelled', 'decommissioned'].includes(String(ended.state))) return;
      const archived = await t.call(SERVICES.destroy, { id });
      t.must(
        archived.status === 202,
        `a DELETE of service ${id}, ${String(ended.state)}, answered ${archived.status}, not 202`,
      );
      t.must(
        isItem(archived.body) && archived.body.id === id && archived.body.state === 'archived',
        `a DELETE of service ${id}, ${String(ended.state)}, answers it ${show(isItem(archived.body) ? archived.body.state : archived.text.slice(0, 80))}, not archived`,
      );
    } finally {
      await finish(t);
    }
  },
};

const REFUSAL_CHECK: CheckDefinition = {
  id: 'NS-003',
  title: 'Service orders that break the rules are refused with a 400 naming the property',
  clause:
    'Network services: exchange LANs are not ordered (400 validation-error); a product_offering that does not exist or is of another type than the service, a p2p_vc circuit without joining_member_account, with an account that does not exist or with the consuming account itself on the B side are each a 400 validation-error naming the property; an order on behalf of an account the caller does not act for is refused (403, or a 400 naming the account); nothing is created.',
  operations: [CREATE],
  requires: [CREATE, SERVICES.destroy, 'product_offerings_list', 'network_services_list'],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const multipoint = await offeringOf(t, 'mp2mp_vc');
      const circuit = (await serviceOfferings(t, 'p2p_vc'))[0];
      const base = await ownOrder(t, 'mp2mp_vc', multipoint, { public: false });
      const refusals: Array<{ what: string; body: Item; names: string[]; accounts?: boolean }> = [
        {
          what: 'an order of an exchange_lan service',
          body: { ...base, type: 'exchange_lan' },
          names: [],
        },
        {
          what: 'a mp2mp_vc order from an offering that does not exist',
          body: { ...base, product_offering: 'conformance-no-such-offering' },
          names: ['product_offering'],
        },
      ];
      if (circuit) {
        const primary = await accountOf(t, 'primary');
        const p2p = await ownOrder(t, 'p2p_vc', circuit);
        refusals.push(
          {
            what: `a mp2mp_vc order from the p2p_vc offering ${String(circuit.id)}`,
            body: { ...base, product_offering: circuit.id },
            names: ['product_offering'],
          },
          {
            what: 'a p2p_vc order without joining_member_account',
            body: p2p,
            names: ['joining_member_account'],
          },
          {
            what: 'a p2p_vc order to an account that does not exist',
            body: { ...p2p, joining_member_account: 'conformance-no-such-account' },
            names: ['joining_member_account'],
          },
          {
            what: 'a p2p_vc order whose B side is its own consuming account',
            body: { ...p2p, joining_member_account: primary },
            names: ['joining_member_account'],
          },
        );
      }
      const stranger = t.suite.hasCredentials('secondary')
        ? await accountOf(t, 'secondary')
        : 'conformance-no-such-account';
      for (const name of ['managing_account', 'consuming_account', 'billing_account'])
        refusals.push({
          what: `a mp2mp_vc order with ${name} ${stranger}, which the caller does not act for`,
          body: { ...base, [name]: stranger },
          names: [name],
          accounts: true,
        });
      for (const refusal of refusals) {
        const response = await attemptService(t, { ...refusal.body, external_ref: newMarker() });
        if (refusal.accounts) accountRefusal(t, response, refusal.names, refusal.what);
        else if (refusal.names.length) validationRefusal(t, response, refusal.names, refusal.what);
        else if (t.must(response.status === 400, `${refusal.what} answered ${response.status}, not 400`))
          t.must(
            hasProblemType(response, 'validation-error'),
            `${refusal.what} was refused as ${problemTypeOf(response)}, not validation-error`,
          );
      }
    } finally {
      await cleanUp(t);
    }
  },
};

const CLOUD_KEY_CHECK: CheckDefinition = {
  id: 'NS-004',
  title: 'A cloud service with a key its provider does not take is refused with a 400 naming cloud_key',
  clause:
    'Network services: a cloud_vc order from a provider_first offering names the key the provider issued; the cloud_key filter of /product-offerings lists the offerings that take a key, so an order from an offering it leaves out for that key is a 400 validation-error naming cloud_key, and nothing is created. INCONCLUSIVE when the exchange has no provider_first offering or takes any key.',
  operations: [CREATE, 'product_offerings_list'],
  requires: [CREATE, SERVICES.destroy, 'product_offerings_list', 'network_services_list'],
  safety: 'mutate',
  async run(t) {
    try {
      const key = `${newMarker()}-not-issued`;
      const offerings = (await serviceOfferings(t, 'cloud_vc')).filter(
        (offering) => offering.service_provider_workflow === 'provider_first',
      );
      if (!offerings.length) t.inconclusive('the exchange has no provider_first cloud_vc offering');
      const taking = new Set(
        (await serviceOfferings(t, 'cloud_vc', `&cloud_key=${encodeURIComponent(key)}`)).map((o) =>
          String(o.id),
        ),
      );
      const offering =
        offerings.find((o) => !taking.has(String(o.id))) ??
        t.inconclusive(`every provider_first offering is listed as taking the key ${key}`);
      const body = await ownOrder(t, 'cloud_vc', offering, { cloud_key: key });
      const response = await attemptService(t, body);
      validationRefusal(
        t,
        response,
        ['cloud_key'],
        `a cloud_vc order from ${String(offering.id)} with the key ${key}, which cloud_key=${key} does not list`,
      );
    } finally {
      await cleanUp(t);
    }
  },
};

const CIRCUIT_CHECK: CheckDefinition = {
  id: 'NS-005',
  title: "A p2p circuit to the second account is shown to its B side without what is the owner's business",
  clause:
    "Network services: a p2p_vc capacity outside the offering's bandwidth_min..bandwidth_max is a 400 validation-error naming capacity; a circuit ordered to another account answers 201 with joining_member_account as sent; the B side reads it (200) and lists it with its sensitive properties hidden or zeroed; it may see the circuit but not change it: its PATCH and DELETE answer 403 permission-denied and change nothing.",
  operations: [CREATE, SERVICES.read, 'network_services_list', PATCH, SERVICES.destroy],
  requires: [...ORDERING_SERVICES, 'network_services_list', PATCH],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a circuit needs a B side');
      const offering = await offeringOf(t, 'p2p_vc');
      const max = offering.bandwidth_max;
      if (typeof max === 'number' && max > 0) {
        const base = await ownOrder(t, 'p2p_vc', offering, { joining_member_account: secondary });
        const response = await attemptService(t, { ...base, capacity: max + 1 });
        validationRefusal(
          t,
          response,
          ['capacity'],
          `a circuit from ${String(offering.id)} (at most ${max} Mbit/s) with capacity ${max + 1}`,
        );
      }
      const { service, id } = await circuitTo(t, secondary, offering);
      t.must(
        service.joining_member_account === secondary,
        `the circuit ordered to ${secondary} answers joining_member_account ${show(service.joining_member_account)}`,
      );
      const seen = await t.call(SERVICES.read, { id, role: 'secondary' });
      if (t.must(seen.status === 200, `the B side reading circuit ${id} got ${seen.status}, not 200`)) {
        const shown = t.suite.sensitive.size ? sensitiveShown(t, seen.body as Item) : [];
        t.must(
          !shown.length,
          `the B side sees ${shown.join(', ')} of circuit ${id}, which are the owner's business`,
        );
      }
      t.must(
        await listedFor(t, 'network_services_list', id, 'secondary'),
        `the B side's list of network services does not hold circuit ${id}`,
      );
      for (const [operationId, body] of [
        [PATCH, { type: 'p2p_vc', display_name: 'Conformance circuit, by the B side' }],
        [SERVICES.destroy, undefined],
      ] as const) {
        const before = await current(t, SERVICES, id);
        const method = t.suite.operation(operationId).method;
        const response = await t.call(operationId, { id, role: 'secondary', body });
        if (
          t.must(
            response.status === 403,
            `the B side's ${method} of circuit ${id} answered ${response.status}, not 403`,
          )
        )
          t.must(
            hasProblemType(response, 'permission-denied'),
            `the B side's ${method} was refused as ${problemTypeOf(response)}, not permission-denied`,
          );
        const after = await current(t, SERVICES, id);
        if (!before || !after) continue;
        t.must(
          after.display_name === before.display_name,
          `the B side's ${method} changed display_name of circuit ${id} from ${show(before.display_name)} to ${show(after.display_name)}`,
        );
        // Provisioning moves the state on by itself; only a cancellation would be the B side's doing.
        t.must(
          !GOING.includes(String(after.state)),
          `the B side's ${method} of circuit ${id} left it ${show(after.state)}`,
        );
      }
    } finally {
      await finish(t);
    }
  },
};

const PUBLIC_CHECK: CheckDefinition = {
  id: 'NS-006',
  title: "A public multipoint service is seen by every account, without what is its owner's business",
  clause:
    "Network services: a public (public: true) mp2mp_vc service is one any account may join unless a deny rule names it, so another account should read it and find it in its list; what it sees carries none of the owner's sensitive properties (hidden or zeroed).",
  operations: [CREATE, SERVICES.read, 'network_services_list'],
  requires: [...ORDERING_SERVICES, 'network_services_list'],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      await secondAccount(t, 'what others see of a public service is seen from another account');
      const offering = await offeringOf(t, 'mp2mp_vc');
      const { id } = await orderService(
        t,
        await ownOrder(t, 'mp2mp_vc', offering, {
          display_name: 'Conformance public VLAN',
          public: true,
          purchase_order: 'CONFORMANCE-PO-PUBLIC',
        }),
        'a public mp2mp_vc service',
      );
      const read = await t.call(SERVICES.read, { id, role: 'secondary' });
      if (
        t.should(
          read.status === 200,
          `another account reading public service ${id} got ${read.status}; those who may join it cannot find it`,
        )
      ) {
        const shown = t.suite.sensitive.size ? sensitiveShown(t, read.body as Item) : [];
        t.must(!shown.length, `another account sees ${shown.join(', ')} of public service ${id}`);
      }
      t.should(
        await listedFor(t, 'network_services_list', id, 'secondary'),
        `public service ${id} is not in another account's list`,
      );
    } finally {
      await finish(t);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Member joining rules
// ---------------------------------------------------------------------------------------------

/** Sends a rule, written into the ledger first; what is created is removed at the end. */
async function attemptRule(t: CheckContext, body: Item): Promise<{ response: HttpResponse; id?: string }> {
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
async function orderRule(t: CheckContext, body: Item): Promise<{ rule: Item; id: string }> {
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

/** The capacities a rule allows, within the offering's range where it names one. */
function capacities(offering: Item): { min: number; max: number; wider: number } {
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
function bandwidthStep(offering: Item): { from: number; to: number } | undefined {
  const range = capacities(offering);
  if (offering.upgrade_allowed !== false) return { from: range.min, to: range.max };
  if (offering.downgrade_allowed !== false) return { from: range.max, to: range.min };
  return undefined;
}

/**
 * A rule change answered as IX-API has it: 200 with the rule (these are not provisioned, so not
 * 202), and what was sent shows on reading it.
 */
async function ruleChange(
  t: CheckContext,
  operationId: string,
  id: string,
  body: Item,
  watched: readonly string[],
) {
  const method = t.suite.operation(operationId).method;
  const response = await t.call(operationId, { id, body });
  t.must(response.status === 200, `${method} of rule ${id} answered ${response.status}, not 200`);
  t.must(idOf(response.body) === id, `the answer to the ${method} of rule ${id} is not the rule`);
  const read = await current(t, RULES, id);
  if (!read) return;
  for (const name of watched)
    t.must(
      read[name] === body[name],
      `after the ${method} rule ${id} has ${name} ${show(read[name])}, not ${show(body[name])}`,
    );
}

const RULE_CHECK: CheckDefinition = {
  id: 'MJR-002',
  title: "Member joining rules of a private service of the suite's own are created, changed and removed",
  clause:
    "Member joining rules: POST of an allow rule for another account on a private mp2mp_vc service of the caller answers 201 with the rule, which reads, is listed by network_service=<id> and by the service's member_joining_rules; PATCH and PUT answer 200 (not 202) with the rule and what was sent shows; capacity_min above capacity_max is a 400 validation-error naming one of them, on POST and on PATCH, and changes nothing; a second rule for the same account and service is a 400 unable-to-fulfill whose conflicts name the first; a rule on a service that is not a multipoint service of the caller's (an exchange LAN) is a 400 validation-error naming network_service; DELETE answers 200 with the rule, which is then gone (404) and no longer listed.",
  operations: [RULE_CREATE, RULES.read, 'member_joining_rules_list', RULE_PATCH, RULE_PUT, RULE_DESTROY],
  requires: [
    ...ORDERING_SERVICES,
    RULE_CREATE,
    RULES.read,
    'member_joining_rules_list',
    RULE_PATCH,
    RULE_PUT,
    RULE_DESTROY,
  ],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a rule is for an account other than the owner');
      const primary = await accountOf(t, 'primary');
      const offering = await offeringOf(t, 'mp2mp_vc');
      const { id: service } = await privateService(t, 'mp2mp_vc', offering);
      const range = capacities(offering);
      const base: Item = {
        type: 'allow',
        network_service: service,
        consuming_account: secondary,
        managing_account: primary,
      };
      const inverted = await attemptRule(t, { ...base, capacity_min: range.max, capacity_max: range.min });
      capacityRefusal(
        t,
        inverted.response,
        `a rule with capacity_min ${range.max} above capacity_max ${range.min}`,
      );

      const { rule, id } = await orderRule(t, { ...base, capacity_min: range.min, capacity_max: range.max });
      for (const name of ['type', 'network_service', 'consuming_account', 'capacity_min', 'capacity_max'])
        t.must(
          rule[name] === ({ ...base, capacity_min: range.min, capacity_max: range.max } as Item)[name],
          `the rule created answers ${name} ${show(rule[name])}`,
        );
      const read = await current(t, RULES, id);
      t.must(!read || read.id === id, `rule ${id} reads as ${show(read?.id)}`);
      t.must(
        await listedFor(
          t,
          'member_joining_rules_list',
          id,
          'primary',
          `network_service=${encodeURIComponent(service)}`,
        ),
        `network_service=${service} does not list rule ${id}`,
      );
      const holder = await current(t, SERVICES, service);
      t.must(
        !holder || strings(holder.member_joining_rules).includes(id),
        `service ${service} names the rules ${show(holder?.member_joining_rules)}, not ${id}`,
      );

      await ruleChange(t, RULE_PATCH, id, { type: 'allow', capacity_max: range.wider }, ['capacity_max']);
      const replacement: Item = {
        type: 'allow',
        consuming_account: secondary,
        managing_account: primary,
        capacity_min: range.min,
        capacity_max: range.max,
        external_ref: newMarker(),
      };
      await ruleChange(t, RULE_PUT, id, replacement, ['capacity_min', 'capacity_max', 'external_ref']);
      await refusedRuleChange(t, id, { type: 'allow', capacity_min: range.wider, capacity_max: range.min });

      const twin = await attemptRule(t, { ...base, capacity_min: range.min, capacity_max: range.max });
      const what = `a second rule for ${secondary} on service ${service}`;
      if (t.must(twin.response.status === 400, `${what} answered ${twin.response.status}, not 400`)) {
        t.must(
          hasProblemType(twin.response, 'unable-to-fulfill'),
          `${what} was refused as ${problemTypeOf(twin.response)}, not unable-to-fulfill`,
        );
        t.must(
          conflictNames(twin.response, id),
          `the conflicts of the refusal do not name rule ${id}: ${show((twin.response.body as Item).conflicts)}`,
        );
      }

      const lan = [...(await exchangeLans(t)).values()][0];
      if (lan) {
        const elsewhere = await attemptRule(t, { ...base, network_service: lan.id });
        validationRefusal(
          t,
          elsewhere.response,
          ['network_service'],
          `a rule on the exchange LAN ${String(lan.id)}`,
        );
      }

      const deleted = await t.call(RULE_DESTROY, { id });
      t.must(deleted.status === 200, `DELETE of rule ${id} answered ${deleted.status}, not 200`);
      t.must(idOf(deleted.body) === id, `the answer to the DELETE of rule ${id} is not the rule`);
      const gone = await t.call(RULES.read, { id });
      t.must(gone.status === 404, `after its DELETE rule ${id} answers ${gone.status}, not 404`);
      t.must(
        !(await listedFor(
          t,
          'member_joining_rules_list',
          id,
          'primary',
          `network_service=${encodeURIComponent(service)}`,
        )),
        `after its DELETE rule ${id} is still listed`,
      );
    } finally {
      await finish(t);
    }
  },
};

function propertyNamed(response: HttpResponse, name: string): boolean {
  const properties = (response.body as { properties?: Array<{ name?: unknown }> } | undefined)?.properties;
  return Array.isArray(properties) && properties.some((property) => property?.name === name);
}

/**
 * Capacities that contradict each other are a 400 validation-error; which of the two it names is
 * the server's choice.
 */
function capacityRefusal(t: CheckContext, response: HttpResponse, what: string): void {
  if (!t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) return;
  t.must(
    hasProblemType(response, 'validation-error'),
    `${what} was refused as ${problemTypeOf(response)}, not validation-error`,
  );
  t.must(
    propertyNamed(response, 'capacity_min') || propertyNamed(response, 'capacity_max'),
    `the 400 for ${what} names neither capacity_min nor capacity_max`,
  );
}

/** A rule change the rules forbid: a 400 validation-error naming a capacity, and nothing changes. */
async function refusedRuleChange(t: CheckContext, id: string, body: Item): Promise<void> {
  const before = await current(t, RULES, id);
  const response = await t.call(RULE_PATCH, { id, body });
  capacityRefusal(
    t,
    response,
    `a PATCH of rule ${id} with capacity_min ${show(body.capacity_min)} above capacity_max ${show(body.capacity_max)}`,
  );
  const after = await current(t, RULES, id);
  if (before && after)
    for (const name of ['capacity_min', 'capacity_max'])
      t.must(
        after[name] === before[name],
        `the refused PATCH changed ${name} of rule ${id} from ${show(before[name])} to ${show(after[name])}`,
      );
}

const PRIVACY_CHECK: CheckDefinition = {
  id: 'MJR-003',
  title: 'A private multipoint service is hidden from accounts no allow rule names',
  clause:
    'Network services: a private (public: false) mp2mp_vc service is a 404 to an account it does not admit and is not in its list; a deny rule for that account changes nothing; once an allow rule names the account it should see the service (members find what they may join), without its sensitive properties; once the rule is removed the service is a 404 to it again.',
  operations: [SERVICES.read, 'network_services_list', RULE_CREATE, RULE_DESTROY],
  requires: [...ORDERING_SERVICES, 'network_services_list', RULE_CREATE, RULE_DESTROY],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'privacy is seen from another account');
      const primary = await accountOf(t, 'primary');
      const { id } = await privateService(t);
      const hidden = async (when: string) => {
        const read = await t.call(SERVICES.read, { id, role: 'secondary' });
        t.must(
          read.status === 404,
          `${when}, another account reading private service ${id} got ${read.status}, not 404`,
        );
        t.must(
          !(await listedFor(t, 'network_services_list', id, 'secondary')),
          `${when}, private service ${id} is in another account's list`,
        );
      };
      await hidden('without a rule');
      const base = { network_service: id, consuming_account: secondary, managing_account: primary };
      const deny = await orderRule(t, { ...base, type: 'deny' });
      await hidden('with a deny rule for it');
      const denied = await t.call(RULE_DESTROY, { id: deny.id });
      t.must(denied.status === 200, `DELETE of deny rule ${deny.id} answered ${denied.status}, not 200`);

      const allow = await orderRule(t, { ...base, type: 'allow' });
      const read = await t.call(SERVICES.read, { id, role: 'secondary' });
      if (
        t.should(
          read.status === 200,
          `with an allow rule for it, another account reading private service ${id} got ${read.status}; the member it admits cannot find it`,
        )
      ) {
        const shown = t.suite.sensitive.size ? sensitiveShown(t, read.body as Item) : [];
        t.must(!shown.length, `the member admitted sees ${shown.join(', ')} of service ${id}`);
      }
      const removed = await t.call(RULE_DESTROY, { id: allow.id });
      t.must(removed.status === 200, `DELETE of allow rule ${allow.id} answered ${removed.status}, not 200`);
      await hidden('once its allow rule is removed');
    } finally {
      await finish(t);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Change requests
// ---------------------------------------------------------------------------------------------

const EARLY_REQUEST_CHECK: CheckDefinition = {
  id: 'CR-001',
  title: 'A change request is asked for by the B side of a circuit in production only',
  clause:
    "Change requests: a circuit without an open request answers 404 to GET and DELETE of …/change-request; a request from the A side (the circuit's owner, who changes it directly) is a 403 permission-denied; one from the B side before the circuit is in production is a 400 unable-to-fulfill; neither opens a request nor puts the circuit in production_change_pending.",
  operations: [REQUEST_READ, REQUEST_CREATE, REQUEST_DESTROY],
  requires: [...ORDERING_SERVICES, REQUEST_READ, REQUEST_CREATE, REQUEST_DESTROY],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a circuit needs a B side');
      const offering = await offeringOf(t, 'p2p_vc');
      const step = bandwidthStep(offering);
      const { id } = await circuitTo(t, secondary, offering, step ? { capacity: step.from } : {});
      const asked = { product_offering: offering.id, capacity: step?.to ?? capacities(offering).min };
      for (const role of ['primary', 'secondary'] as const) {
        const none = await t.call(REQUEST_READ, { id, role });
        t.must(
          none.status === 404,
          `circuit ${id} has no change request, yet GET answered ${none.status} to the ${role} account, not 404`,
        );
      }
      const fromA = await t.call(REQUEST_CREATE, { id, body: asked });
      if (
        t.must(
          fromA.status === 403,
          `a change request of circuit ${id} from its A side answered ${fromA.status}, not 403`,
        )
      )
        t.must(
          hasProblemType(fromA, 'permission-denied'),
          `the A side's change request was refused as ${problemTypeOf(fromA)}, not permission-denied`,
        );
      const early = await current(t, SERVICES, id);
      if (early?.state === 'production')
        t.inconclusive(
          `circuit ${id} reached production without its ends; a request before production cannot be tried`,
        );
      const fromB = await t.call(REQUEST_CREATE, { id, role: 'secondary', body: asked });
      if (
        t.must(
          fromB.status === 400,
          `a change request of circuit ${id} (${show(early?.state)}) from its B side answered ${fromB.status}, not 400`,
        )
      )
        t.must(
          hasProblemType(fromB, 'unable-to-fulfill'),
          `the B side's change request before production was refused as ${problemTypeOf(fromB)}, not unable-to-fulfill`,
        );
      const withdrawn = await t.call(REQUEST_DESTROY, { id, role: 'secondary' });
      t.must(
        withdrawn.status === 404,
        `DELETE of the change request of circuit ${id}, which has none, answered ${withdrawn.status}, not 404`,
      );
      const after = await current(t, SERVICES, id);
      t.must(
        !after || after.state !== 'production_change_pending',
        `circuit ${id} is production_change_pending after change requests that were refused`,
      );
      const still = await t.call(REQUEST_READ, { id });
      t.must(
        still.status === 404,
        `after refused change requests GET of circuit ${id}'s answered ${still.status}, not 404`,
      );
    } finally {
      await finish(t);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Configs of virtual circuits
// ---------------------------------------------------------------------------------------------

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

const CLOUD_CONFIG_CHECK: CheckDefinition = {
  id: 'NSC-010',
  title: "Configs of a cloud service of the suite's own take a handover within its diversity, once each",
  clause:
    "Network service configs: a cloud_vc config names a handover from 1 to the service's diversity; one above it is a 400 validation-error naming handover; a config on handover 1 (cloud_vlan null or absent for a single provider VLAN offering, else a provider VLAN) answers 201 of type cloud_vc with that handover; with a single provider VLAN offering a cloud_vlan is a 400 validation-error naming cloud_vlan; a second config on the same handover and cloud_vlan is a 400 unable-to-fulfill whose conflicts name the first. The service is ordered from an exchange_first offering handed over where the primary account has a connection in production; INCONCLUSIVE without one, or when the exchange refuses the order.",
  operations: [CONFIG_CREATE, CREATE],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { offering, connection } = await placed(
        t,
        'cloud_vc',
        (candidate) => candidate.service_provider_workflow === 'exchange_first',
      );
      const { service, id } = await orderService(
        t,
        await ownOrder(t, 'cloud_vc', offering, { cloud_key: newMarker() }),
        'a cloud_vc service',
      );
      const diversity =
        typeof service.diversity === 'number'
          ? service.diversity
          : typeof offering.diversity === 'number'
            ? offering.diversity
            : 1;
      const single = offering.provider_vlans === 'single';
      const vlan = single ? null : 100 + Math.floor(Math.random() * 3000);
      const { config, id: configId } = await orderVcConfig(t, 'primary', service, connection, {
        handover: 1,
        cloud_vlan: vlan,
      });
      t.must(
        config.type === 'cloud_vc' && config.handover === 1,
        `the config ordered on handover 1 answers type ${show(config.type)} handover ${show(config.handover)}`,
      );
      const beyond = await attemptConfig(t, 'primary', service, connection, {
        handover: diversity + 1,
        cloud_vlan: vlan,
      });
      validationRefusal(
        t,
        beyond.response,
        ['handover'],
        `a config on handover ${diversity + 1} of service ${id}, whose diversity is ${diversity}`,
      );
      if (single) {
        const tagged = await attemptConfig(t, 'primary', service, connection, {
          handover: 1,
          cloud_vlan: 100,
        });
        validationRefusal(
          t,
          tagged.response,
          ['cloud_vlan'],
          `a config with cloud_vlan 100 on service ${id}, whose offering has a single provider VLAN`,
        );
      }
      const twin = await attemptConfig(t, 'primary', service, connection, { handover: 1, cloud_vlan: vlan });
      const what = `a second config of service ${id} on handover 1 with cloud_vlan ${show(vlan)}`;
      if (t.must(twin.response.status === 400, `${what} answered ${twin.response.status}, not 400`)) {
        t.must(
          hasProblemType(twin.response, 'unable-to-fulfill'),
          `${what} was refused as ${problemTypeOf(twin.response)}, not unable-to-fulfill`,
        );
        t.must(
          conflictNames(twin.response, configId),
          `the conflicts of the refusal do not name config ${configId}: ${show((twin.response.body as Item).conflicts)}`,
        );
      }
    } finally {
      await finish(t);
    }
  },
};

const ROOT_CONFIG_CHECK: CheckDefinition = {
  id: 'NSC-011',
  title: "A config of a point-to-multipoint service of the suite's own takes the role asked for",
  clause:
    'Network service configs: a p2mp_vc config with role root answers 201 of type p2mp_vc with role root, and reads so; a role other than root or leaf is a 400 validation-error naming role. The service is ordered handed over where the primary account has a connection in production; INCONCLUSIVE without one.',
  operations: [CONFIG_CREATE, CONFIGS.read],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { offering, connection } = await placed(t, 'p2mp_vc');
      const { service } = await privateService(t, 'p2mp_vc', offering);
      const { config, id: configId } = await orderVcConfig(t, 'primary', service, connection, {
        role: 'root',
      });
      t.must(
        config.type === 'p2mp_vc' && config.role === 'root',
        `the config ordered as root answers type ${show(config.type)} role ${show(config.role)}`,
      );
      const read = await current(t, CONFIGS, configId);
      t.must(
        !read || read.role === 'root',
        `config ${configId} reads with role ${show(read?.role)}, not root`,
      );
      const odd = await attemptConfig(t, 'primary', service, connection, {
        role: 'conformance-no-such-role',
      });
      validationRefusal(t, odd.response, ['role'], `a p2mp_vc config with role conformance-no-such-role`);
    } finally {
      await finish(t);
    }
  },
};

const MEMBER_CONFIG_CHECK: CheckDefinition = {
  id: 'NSC-012',
  title: 'A private multipoint service admits the configs of accounts an allow rule names, and only those',
  clause:
    "Network service configs: another account's mp2mp_vc config on a private service of the primary account is refused (400, or 403) while no allow rule names it, and nothing is created; once an allow rule names it, its config answers 201. The service is ordered where both accounts have a connection in production; INCONCLUSIVE without.",
  operations: [CONFIG_CREATE, RULE_CREATE],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS, RULE_CREATE, RULE_DESTROY],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a member is another account');
      const primary = await accountOf(t, 'primary');
      const theirs = await liveConnections(t, 'secondary');
      const { offering, connection: own } = await placed(t, 'mp2mp_vc', (candidate) =>
        theirs.has(String(candidate.handover_metro_area_network)),
      );
      const connection = theirs.get(String(offering.handover_metro_area_network))!;
      const { service, id } = await privateService(t, 'mp2mp_vc', offering);
      await orderVcConfig(t, 'primary', service, own);
      const refused = await attemptConfig(t, 'secondary', service, connection);
      const what = `another account's config on private service ${id}, which no rule opens to it,`;
      if (
        t.must(
          [400, 403].includes(refused.response.status),
          `${what} answered ${refused.response.status}, not 400 or 403`,
        ) &&
        refused.response.status === 400
      )
        t.should(
          propertyNamed(refused.response, 'network_service'),
          `the 400 for ${what} does not name network_service`,
        );
      await orderRule(t, {
        type: 'allow',
        network_service: id,
        consuming_account: secondary,
        managing_account: primary,
      });
      const seen = await t.call(SERVICES.read, { id, role: 'secondary' });
      const admitted = await attemptConfig(
        t,
        'secondary',
        seen.status === 200 ? (seen.body as Item) : service,
        connection,
      );
      t.must(
        admitted.response.status === 201,
        `with an allow rule, another account's config on service ${id} answered ${admitted.response.status}, not 201: ${admitted.response.text.slice(0, 200)}`,
      );
    } finally {
      await finish(t);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Change requests of a circuit in production
// ---------------------------------------------------------------------------------------------

/** Asks for a change as `role` and holds a 202 to it, with the request answered. */
async function askChange(t: CheckContext, id: string, body: Item): Promise<boolean> {
  const response = await t.call(REQUEST_CREATE, { id, role: 'secondary', body });
  if (
    !t.must(
      response.status === 202,
      `the B side's change request of circuit ${id} answered ${response.status}, not 202: ${response.text.slice(0, 200)}`,
    )
  )
    return false;
  const answered = isItem(response.body) ? response.body : {};
  t.must(
    answered.product_offering === body.product_offering && answered.capacity === body.capacity,
    `the change request of circuit ${id} asking for ${show(body)} is answered as ${show(answered)}`,
  );
  return true;
}

/** The open change request as `role` reads it: 200 (or 202, as IX-API 2.1 had it) with it. */
async function openRequest(t: CheckContext, id: string, role: Role, body: Item): Promise<void> {
  const read = await t.call(REQUEST_READ, { id, role });
  if (
    t.must(
      [200, 202].includes(read.status),
      `GET of circuit ${id}'s open change request answered ${read.status} to the ${role} account`,
    )
  )
    t.must(
      isItem(read.body) &&
        read.body.capacity === body.capacity &&
        read.body.product_offering === body.product_offering,
      `the ${role} account reads circuit ${id}'s change request as ${show(read.body)}, not ${show(body)}`,
    );
}

async function stateOf(t: CheckContext, id: string, state: string): Promise<boolean> {
  return Boolean(await waitFor(t, SERVICES.read, id, (read) => read.state === state, SETTLING_MS));
}

const CHANGE_CHECK: CheckDefinition = {
  id: 'CR-002',
  title: 'The B side of a circuit in production asks for a change, which the A side rejects or carries out',
  clause:
    "Change requests: on a circuit in production (both ends' p2p_vc configs in production), the B side's request for a capacity outside the offering's range is a 400 validation-error naming capacity, for an offering of another kind one naming product_offering; a valid request answers 202 with it, the circuit goes to production_change_pending and both sides read the request; a second request is a 400 unable-to-fulfill; the A side's DELETE rejects it (202 with the request) and the B side's withdraws it, each leaving no request (404) and the circuit back in production; the A side accepts one by a PATCH of the circuit with the capacity asked for (202), after which the circuit has it, is in production and has no open request. INCONCLUSIVE when the two accounts have no connections in production where a p2p_vc offering hands over, or the circuit does not reach production.",
  operations: [REQUEST_CREATE, REQUEST_READ, REQUEST_DESTROY, PATCH, CONFIG_CREATE],
  requires: [
    ...ORDERING_SERVICES,
    ...ORDERING_VC_CONFIGS,
    REQUEST_CREATE,
    REQUEST_READ,
    REQUEST_DESTROY,
    PATCH,
  ],
  safety: 'mutate',
  deadlineMs: 180_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a circuit needs a B side');
      const theirs = await liveConnections(t, 'secondary');
      const { offering, connection: own } = await placed(t, 'p2p_vc', (candidate) =>
        theirs.has(String(candidate.service_metro_area_network)),
      );
      const connection = theirs.get(String(offering.service_metro_area_network))!;
      const range = capacities(offering);
      const step =
        bandwidthStep(offering) ??
        t.inconclusive(
          `${String(offering.id)} allows neither upgrades nor downgrades; no change can be asked for`,
        );
      const { service, id } = await circuitTo(t, secondary, offering, { capacity: step.from });
      await orderVcConfig(t, 'primary', service, own);
      const seen = await t.call(SERVICES.read, { id, role: 'secondary' });
      await orderVcConfig(t, 'secondary', seen.status === 200 ? (seen.body as Item) : service, connection);
      const live = await waitFor(
        t,
        SERVICES.read,
        id,
        (read) => read.state === 'production',
        PROVISIONING_MS * 2,
      );
      if (!live)
        t.inconclusive(
          `circuit ${id} did not reach production within ${(PROVISIONING_MS * 2) / 1000} s of its ends`,
        );

      const max = offering.bandwidth_max;
      if (typeof max === 'number' && max > 0) {
        const over = await t.call(REQUEST_CREATE, {
          id,
          role: 'secondary',
          body: { product_offering: offering.id, capacity: max + 1 },
        });
        validationRefusal(
          t,
          over,
          ['capacity'],
          `a change request of circuit ${id} for ${max + 1} Mbit/s, above ${String(offering.id)}'s ${max}`,
        );
      }
      const elsewhere = (await serviceOfferings(t, 'mp2mp_vc'))[0];
      if (elsewhere) {
        const other = await t.call(REQUEST_CREATE, {
          id,
          role: 'secondary',
          body: { product_offering: elsewhere.id, capacity: range.min },
        });
        validationRefusal(
          t,
          other,
          ['product_offering'],
          `a change request of circuit ${id} for the mp2mp_vc offering ${String(elsewhere.id)}`,
        );
      }
      t.must(
        await stateOf(t, id, 'production'),
        `circuit ${id} left production after refused change requests`,
      );

      const asked: Item = { product_offering: offering.id, capacity: step.to };
      // Rejected by the A side.
      if (await askChange(t, id, asked)) {
        t.must(
          await stateOf(t, id, 'production_change_pending'),
          `circuit ${id} is not production_change_pending with a change request open`,
        );
        await openRequest(t, id, 'primary', asked);
        await openRequest(t, id, 'secondary', asked);
        const twin = await t.call(REQUEST_CREATE, {
          id,
          role: 'secondary',
          body: asked,
        });
        if (
          t.must(
            twin.status === 400,
            `a second change request of circuit ${id} answered ${twin.status}, not 400`,
          )
        )
          t.must(
            hasProblemType(twin, 'unable-to-fulfill'),
            `a second change request was refused as ${problemTypeOf(twin)}, not unable-to-fulfill`,
          );
        const rejected = await t.call(REQUEST_DESTROY, { id });
        t.must(
          rejected.status === 202,
          `the A side's DELETE of circuit ${id}'s change request answered ${rejected.status}, not 202`,
        );
        t.must(
          await stateOf(t, id, 'production'),
          `circuit ${id} did not come back to production once its change request was rejected`,
        );
        const none = await t.call(REQUEST_READ, { id });
        t.must(
          none.status === 404,
          `a rejected change request of circuit ${id} still answers ${none.status}`,
        );
      }
      // Withdrawn by the B side.
      if (await askChange(t, id, asked)) {
        const withdrawn = await t.call(REQUEST_DESTROY, { id, role: 'secondary' });
        t.must(
          withdrawn.status === 202,
          `the B side's DELETE of circuit ${id}'s change request answered ${withdrawn.status}, not 202`,
        );
        t.must(
          await stateOf(t, id, 'production'),
          `circuit ${id} did not come back to production once its change request was withdrawn`,
        );
        const none = await t.call(REQUEST_READ, { id, role: 'secondary' });
        t.must(
          none.status === 404,
          `a withdrawn change request of circuit ${id} still answers ${none.status}`,
        );
      }
      // Accepted by the A side.
      if (await askChange(t, id, asked)) {
        await change(t, SERVICES, PATCH, id, { type: 'p2p_vc', capacity: step.to }, ['capacity']);
        t.must(
          await stateOf(t, id, 'production'),
          `circuit ${id} is not back in production once its change was carried out`,
        );
        const none = await t.call(REQUEST_READ, { id });
        t.must(
          none.status === 404,
          `the change request of circuit ${id} is still open (${none.status}) once carried out`,
        );
      }
    } finally {
      await finish(t);
    }
  },
};

/** Properties of a cloud_vc config a PUT replaces it with (CloudNetworkServiceConfigUpdate). */
const CLOUD_CONFIG_UPDATE = [
  'type',
  'managing_account',
  'consuming_account',
  'billing_account',
  'role_assignments',
  'connection',
  'vlan_config',
  'external_ref',
  'purchase_order',
  'contract_ref',
  'handover',
];

const OMITTED_VLAN_CHECK: CheckDefinition = {
  id: 'NSC-013',
  title: 'A cloud config may leave out cloud_vlan, which is then null',
  clause:
    'Network service configs: cloud_vlan may be left out of a cloud_vc config, on POST and on PUT, and left out it is null (for an offering with a single provider VLAN the only value it may have, for one with several every provider VLAN no other config of the service selects): a POST without it answers 201 with cloud_vlan null, not a 400 naming it, and so does the config read; a PUT without it answers 202 and the config reads cloud_vlan null. The service is ordered from an exchange_first offering handed over where the primary account has a connection in production, one with a single provider VLAN where there is one; INCONCLUSIVE without one, or when the exchange refuses the service.',
  operations: [CONFIG_CREATE, 'network_service_configs_update'],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const connections = await liveConnections(t, 'primary');
      const offering =
        (await serviceOfferings(t, 'cloud_vc'))
          .filter(
            (candidate) =>
              candidate.service_provider_workflow === 'exchange_first' &&
              connections.has(String(candidate.handover_metro_area_network)),
          )
          .sort((a, b) => Number(a.provider_vlans !== 'single') - Number(b.provider_vlans !== 'single'))[0] ??
        t.inconclusive(
          'no exchange_first cloud_vc offering is handed over where the primary account has a connection in production',
        );
      const connection = connections.get(String(offering.handover_metro_area_network))!;
      const { service, id } = await orderService(
        t,
        await ownOrder(t, 'cloud_vc', offering, { cloud_key: newMarker() }),
        'a cloud_vc service',
      );
      const { response, id: configId } = await attemptConfig(t, 'primary', service, connection, {
        handover: 1,
      });
      const what = `a cloud_vc config of service ${id} (provider_vlans ${show(offering.provider_vlans)}) on handover 1 without cloud_vlan`;
      if (response.status === 400 && propertyNames(response.body).includes('cloud_vlan'))
        return void t.must(
          false,
          `${what} was refused as ${problemTypeOf(response)} naming cloud_vlan; left out, it is null`,
        );
      if (response.status === 400 && hasProblemType(response, 'unable-to-fulfill'))
        t.inconclusive(`the exchange cannot provide ${what}: ${response.text.slice(0, 200)}`);
      if (
        !t.must(
          response.status === 201 && configId !== undefined,
          `${what} answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
        )
      )
        return;
      const config = response.body as Item;
      t.must(
        'cloud_vlan' in config && config.cloud_vlan === null,
        `${what} answers cloud_vlan ${show(config.cloud_vlan)}, not null`,
      );
      const read = await current(t, CONFIGS, configId!);
      if (read)
        t.must(
          read.cloud_vlan === null,
          `config ${configId} reads cloud_vlan ${show(read.cloud_vlan)}, not null`,
        );
      if (!read || !t.suite.isDeclared('network_service_configs_update')) return;
      const replacement: Item = Object.fromEntries(
        CLOUD_CONFIG_UPDATE.filter((name) => read[name] !== undefined).map((name) => [name, read[name]]),
      );
      replacement.external_ref = `${typeof read.external_ref === 'string' ? read.external_ref : newMarker()}-replaced`;
      const put = await t.call('network_service_configs_update', { id: configId, body: replacement });
      const replaced = `a PUT of config ${configId} without cloud_vlan`;
      if (put.status === 400 && propertyNames(put.body).includes('cloud_vlan'))
        return void t.must(false, `${replaced} was refused as ${problemTypeOf(put)} naming cloud_vlan`);
      if (put.status === 400 && hasProblemType(put, 'unable-to-fulfill'))
        t.inconclusive(`the exchange does not take ${replaced} now: ${put.text.slice(0, 200)}`);
      if (
        !t.must(put.status === 202, `${replaced} answered ${put.status}, not 202: ${put.text.slice(0, 200)}`)
      )
        return;
      const shown = await waitFor(
        t,
        CONFIGS.read,
        configId!,
        (body) => body.external_ref === replacement.external_ref,
        SETTLING_MS,
      );
      t.must(
        shown && shown.cloud_vlan === null,
        `after ${replaced} config ${configId} reads external_ref ${show(shown?.external_ref)} and cloud_vlan ${show(shown?.cloud_vlan)}, not ${show(replacement.external_ref)} and null`,
      );
    } finally {
      await finish(t);
    }
  },
};

/** Read-only checks of the services and rules the primary account has. */
export const CIRCUIT_READ_CHECKS: CheckDefinition[] = [POLICY_CHECK, RULE_LINKS_CHECK];

/** Checks that order virtual circuits of their own; they cancel what they ordered. */
export const CIRCUIT_CHECKS: CheckDefinition[] = [
  SERVICE_CHECK,
  REFUSAL_CHECK,
  CLOUD_KEY_CHECK,
  CIRCUIT_CHECK,
  PUBLIC_CHECK,
  RULE_CHECK,
  PRIVACY_CHECK,
  EARLY_REQUEST_CHECK,
  CLOUD_CONFIG_CHECK,
  ROOT_CONFIG_CHECK,
  MEMBER_CONFIG_CHECK,
  OMITTED_VLAN_CHECK,
  CHANGE_CHECK,
];
