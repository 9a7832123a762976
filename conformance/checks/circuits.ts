import type { CheckDefinition } from '../runner';
import { holdPolicy, refuseMalformedDays } from '../steps/cancellation-policies';
import { cancel, change, foreignAttempt, refusedChange } from '../steps/changes';
import {
  accountOf,
  accountRefusal,
  attemptService,
  circuitTo,
  CREATE,
  EARLY,
  finish,
  listedFor,
  MULTIPOINT,
  offeringOf,
  ORDERED,
  ORDERING_SERVICES,
  orderService,
  ownOrder,
  PATCH,
  privateService,
  PUT,
  RULES,
  secondAccount,
  sensitiveShown,
  serviceOfferings,
  SERVICES,
  strings,
} from '../steps/circuit-orders';
import { cleanUp } from '../steps/cleanup';
import type { Item } from '../steps/items';
import { current, idOf, isItem, newMarker, show } from '../steps/items';
import { hasProblemType, problemTypeOf, validationRefusal } from '../steps/problems';
import { GOING } from '../steps/subjects';
import { wholeCollection, wholeList } from '../steps/whole-lists';

/**
 * Virtual circuits a customer orders (profile `full`): private multipoint services and the rules
 * that let other members join them, point-to-point circuits to the second account and the changes
 * its B side asks for, cloud services, and configs of each kind on a connection in production.
 * What a check orders is written into the ledger first and cancelled at the end (services by
 * DELETE, and archived once cancelled; rules by DELETE). The read profile looks at the services
 * and rules the primary account already has.
 */

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
      t.inconclusive(
        'the primary account manages no p2p, multipoint or cloud service in production',
        'a p2p, multipoint or cloud service of the primary account in production',
      );
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
    if (!rules.length)
      t.inconclusive(
        'the primary account lists no member joining rules',
        'a member joining rule of the primary account',
      );
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

/** Read-only checks of the services and rules the primary account has. */
export const CIRCUIT_READ_CHECKS: CheckDefinition[] = [POLICY_CHECK, RULE_LINKS_CHECK];

/** Checks that order virtual circuits of their own; they cancel what they ordered. */
export const CIRCUIT_CHECKS: CheckDefinition[] = [
  SERVICE_CHECK,
  REFUSAL_CHECK,
  CLOUD_KEY_CHECK,
  CIRCUIT_CHECK,
  PUBLIC_CHECK,
];
