import { memberJoiningRules, memberJoiningRuleScope } from '../../db/member-joining-rules-collection';
import type { PropertyError } from '../../domain/errors';
import { ValidationError } from '../../domain/errors';
import type {
  JoinableService,
  JoiningRuleType,
  MemberJoiningRule,
  MemberJoiningRuleOrder,
} from '../../domain/member-joining-rules';
import {
  accessToRule,
  memberJoiningRuleProblems,
  seesRuleAsMember,
  termsOfItsType,
} from '../../domain/member-joining-rules';
import { redact } from '../../domain/redaction';
import type { OpenApiDocument } from '../../spec';
import type { CollectionEntry } from '../collections';
import type { ResourceFamily } from '../families';
import { generatedWrites } from '../family-writes';
import { redactionPlansByType } from '../redaction-plans';
import { FAMILIES } from '../../domain/families';

const SCHEMA_OF: Readonly<Record<JoiningRuleType, string>> = {
  allow: 'AllowMemberJoiningRule',
  deny: 'DenyMemberJoiningRule',
};

/**
 * A rule is seen by the owners of its service and by the member it names; the member sees it
 * without its sensitive properties (`seesRuleAsMember`), in reads, lists and events alike.
 */
export function memberJoiningRuleCollections(document: OpenApiDocument): readonly CollectionEntry[] {
  const plans = redactionPlansByType(document, SCHEMA_OF);
  return [
    {
      collection: memberJoiningRules,
      list: 'member_joining_rules_list',
      read: 'member_joining_rules_read',
      scope: (visibility) => (_value, params) => memberJoiningRuleScope(params.bind(visibility.accounts)),
      present: (item, visibility) => {
        const parties = {
          managing_account: item.managing_account as string,
          consuming_account: item.consuming_account as string,
        };
        return seesRuleAsMember(parties, visibility) ? redact(item, plans[item.type as string]) : item;
      },
    },
  ];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Member joining rules: the owners of a multipoint service admit accounts to a private one, or keep
 * them off a public one, and bound what an admitted member books. The owners of the service change
 * the rules whose managing account they act for (`accessToRule`); a rule changes at once (200), and
 * its effect on the member's live configs is checked and passed on in the same write.
 */
export const memberJoiningRulesFamily: ResourceFamily = {
  name: FAMILIES.member_joining_rule.collection,
  collections: memberJoiningRuleCollections,
  asynchronous: false,
  operations(deps) {
    const { memberJoiningRules: rules } = deps.db;
    const { validators } = deps;
    return {
      handlers: generatedWrites<MemberJoiningRuleOrder, [MemberJoiningRule, JoinableService | undefined]>(
        this,
        deps,
        {
          access: (scope, rule, service) => accessToRule(rule, service, scope),
          references: ['managing_account'],
          shape: termsOfItsType,
          // A partial update may leave the type out; it is the stored one. A rule stays with its service.
          given(operationId, body, current) {
            // The body schema's discriminator judges objects only; anything else says nothing of a rule.
            if (body !== undefined && body !== null && !isObject(body))
              throw new ValidationError([{ name: 'body', reason: 'must be a JSON object' }]);
            const partial = operationId === 'member_joining_rules_partial_update';
            validators.body(operationId, partial && isObject(body) ? { type: current.type, ...body } : body);
            const given = body ?? {};
            const fixed: PropertyError[] = [];
            if (given.network_service !== undefined && given.network_service !== current.network_service)
              fixed.push({
                name: 'network_service',
                reason: 'stays as created; make a rule for the other service',
              });
            if (partial && given.type !== undefined && given.type !== current.type)
              fixed.push({
                name: 'type',
                reason: `stays ${current.type} in a partial update; replace the rule instead`,
              });
            if (fixed.length) throw new ValidationError(fixed);
          },
          keep: (current) => ({ network_service: current.network_service }),
          async problems(order, { scope, current }) {
            const facts = await rules.orderFacts(order, scope);
            if (!current) return memberJoiningRuleProblems(order, facts);
            // What a change touches is judged anew; the capacities together, and whenever the type changes.
            const judged = new Set<string>(
              (Object.keys(order) as Array<keyof MemberJoiningRuleOrder>).filter(
                (name) => order[name] !== current[name],
              ),
            );
            if (['capacity_min', 'capacity_max', 'type'].some((name) => judged.has(name)))
              judged.add('capacity_min').add('capacity_max');
            return memberJoiningRuleProblems(order, facts, (property) => judged.has(property));
          },
          create: async (order) => ({ resource: await rules.create(order) }),
          async change(id, decide, allow) {
            const found = await rules.findWithService(id);
            const next = await decide(found?.rule, found?.service);
            return { resource: await rules.change(id, next, allow) };
          },
          destroy: async (id, allow) => ({ resource: await rules.destroy(id, allow) }),
        },
      ),
    };
  },
};
