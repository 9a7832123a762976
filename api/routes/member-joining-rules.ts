import { memberJoiningRules, memberJoiningRuleScope } from '../../db/member-joining-rules-collection';
import type {
  MemberJoiningRuleRepository,
  RuleGuard,
} from '../../db/repositories/member-joining-rule-repository';
import type { Scope } from '../../domain/authority';
import { requireActingAccount, requireChange } from '../../domain/authority';
import type { PropertyError } from '../../domain/errors';
import { ValidationError } from '../../domain/errors';
import type { MemberJoiningRuleOrder } from '../../domain/member-joining-rules';
import { accessToRule, memberJoiningRuleProblems, termsOfItsType } from '../../domain/member-joining-rules';
import type { CollectionEntry } from '../collections';
import type { OperationDefinition } from '../operations';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { deliverAll, merged, replacement } from '../writes';

/** A rule is seen by the owners of its service and by the member it names. */
export const MEMBER_JOINING_RULE_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: memberJoiningRules,
    list: 'member_joining_rules_list',
    read: 'member_joining_rules_read',
    scope: (visibility) => (_value, params) => memberJoiningRuleScope(params.bind(visibility.accounts)),
  },
];

const ABSENT: MemberJoiningRuleOrder = {
  type: 'allow',
  network_service: '',
  consuming_account: '',
  managing_account: '',
  external_ref: null,
  capacity_min: null,
  capacity_max: null,
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Member joining rules: the owners of a multipoint service admit accounts to a private one, or keep
 * them off a public one, and bound what an admitted member books. A rule changes at once (200); its
 * effect on the member's live configs is checked and passed on in the same write.
 */
export function memberJoiningRuleOperations(deps: {
  rules: MemberJoiningRuleRepository;
  validators: RequestValidators;
  writes: WriteContext;
}): OperationDefinition[] {
  const { validators, writes } = deps;

  const changeableBy =
    (scope: Scope, id: string): RuleGuard =>
    (rule, service) =>
      requireChange(accessToRule(rule, service, scope), `member-joining-rules with id ${id}`);

  async function check(
    scope: Scope,
    order: MemberJoiningRuleOrder,
    concerned?: (property: string) => boolean,
  ) {
    requireActingAccount(scope, 'managing_account', order.managing_account);
    const facts = await deps.rules.orderFacts(order, scope);
    const problems = memberJoiningRuleProblems(order, facts, concerned);
    if (problems.length) throw new ValidationError(problems);
  }

  function update(
    operationId: 'member_joining_rules_update' | 'member_joining_rules_partial_update',
  ): OperationDefinition {
    const partial = operationId === 'member_joining_rules_partial_update';
    return {
      operationId,
      authenticated: true,
      validatesBody: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const found = await deps.rules.findWithService(params.id);
        requireChange(
          found ? accessToRule(found.rule, found.service, scope) : 'none',
          `member-joining-rules with id ${params.id}`,
        );
        const current = found!.rule;
        // The body schema's discriminator judges objects only; anything else says nothing of a rule.
        if (body !== undefined && body !== null && !isObject(body))
          throw new ValidationError([{ name: 'body', reason: 'must be a JSON object' }]);
        // A partial update may leave the type out; it is the stored one.
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
        const next = termsOfItsType({
          ...(partial ? merged(merged(ABSENT, current), body) : replacement(body, ABSENT)),
          network_service: current.network_service,
        });
        // What the change touches is judged anew; the capacities together, and whenever the type changes.
        const judged = new Set<string>(
          (Object.keys(next) as Array<keyof MemberJoiningRuleOrder>).filter(
            (name) => next[name] !== current[name],
          ),
        );
        if (['capacity_min', 'capacity_max', 'type'].some((name) => judged.has(name)))
          judged.add('capacity_min').add('capacity_max');
        await check(scope, next, (property) => judged.has(property));
        const { rule, messages } = await deps.rules.change(params.id, next, changeableBy(scope, params.id));
        await deliverAll(writes.starter, messages);
        return { status: 200, body: rule };
      },
    };
  }

  return [
    {
      operationId: 'member_joining_rules_create',
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await writes.scope(caller);
        const order = termsOfItsType(replacement(body, ABSENT));
        await check(scope, order);
        const { rule, messages } = await deps.rules.create(order);
        await deliverAll(writes.starter, messages);
        return { status: 201, body: rule };
      },
    },
    update('member_joining_rules_update'),
    update('member_joining_rules_partial_update'),
    {
      operationId: 'member_joining_rules_destroy',
      authenticated: true,
      async handle({ params, caller }) {
        const scope = await writes.scope(caller);
        const { rule, messages } = await deps.rules.destroy(params.id, changeableBy(scope, params.id));
        await deliverAll(writes.starter, messages);
        return { status: 200, body: rule };
      },
    },
  ];
}
