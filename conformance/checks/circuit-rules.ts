import type { HttpResponse } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import {
  accountOf,
  attemptRule,
  capacities,
  finish,
  listedFor,
  offeringOf,
  ORDERING_SERVICES,
  orderRule,
  privateService,
  propertyNamed,
  RULE_CREATE,
  RULE_DESTROY,
  RULE_PATCH,
  RULE_PUT,
  RULES,
  secondAccount,
  sensitiveShown,
  SERVICES,
  strings,
} from '../steps/circuit-orders';
import { exchangeLans } from '../steps/exchange-lans';
import type { Item } from '../steps/items';
import { current, idOf, newMarker, show } from '../steps/items';
import { conflictNames, hasProblemType, problemTypeOf, validationRefusal } from '../steps/problems';

/** Member joining rules of private multipoint services: their capacities, and who sees the service. */

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

/** Checks of member joining rules on services of the suite's own. */
export const CIRCUIT_RULE_CHECKS: CheckDefinition[] = [RULE_CHECK, PRIVACY_CHECK];
