import type { Access, Scope } from './authority';
import { accessToOwned, actsFor, canSee } from './authority';
import type { Conflict, PropertyError } from './errors';
import { PermissionDeniedError } from './errors';
import type { State } from './states';
import { GOING_STATES } from './states';

/**
 * Member joining rules: the manager of a multipoint service says which other accounts may hold
 * configs on it. A private service admits only accounts with an `allow` rule, a public one every
 * account without a `deny` rule; the service's own consuming account is always admitted. An allow
 * rule may bound what its member books (`capacity_min`) and cap what the fabric lets through
 * (`capacity_max`, which takes precedence over a config's own capacity).
 */

export type JoiningRuleType = 'allow' | 'deny';

/** What a rule says (a new one, or a change as it would leave the rule). */
export type MemberJoiningRuleOrder = {
  type: JoiningRuleType;
  network_service: string;
  consuming_account: string;
  managing_account: string;
  external_ref: string | null;
  capacity_min: number | null;
  capacity_max: number | null;
};

export interface MemberJoiningRule extends MemberJoiningRuleOrder {
  id: string;
}

/** The terms a rule grants its member. */
export type JoiningTerms = Pick<MemberJoiningRuleOrder, 'type' | 'capacity_min' | 'capacity_max'>;

/** A network service as the rules see it. */
export interface JoinableService {
  id: string;
  type: string;
  state: State;
  public: boolean;
  managing_account: string;
  consuming_account: string;
  /** The bandwidth range of the service's product offering, in Mbit/s (null: unbounded). */
  bandwidth_min: number | null;
  bandwidth_max: number | null;
}

export interface JoiningRuleFacts {
  /**
   * The service, if the caller may know of it: it owns it, or the service is one every account sees
   * (an exchange LAN, a public multipoint service).
   */
  service: JoinableService | undefined;
  /**
   * The caller's access to the service (`accessToService`): `change` when it decides who joins,
   * `read` when it only consumes the service, `none` otherwise.
   */
  access: Access;
  /**
   * Whether the caller may know the account the rule names (it acts for it, or it is
   * discoverable); any other is answered as one that does not exist.
   */
  memberKnown: boolean;
}

/** Services whose membership joining rules decide. */
export const JOINABLE_SERVICE_TYPES: readonly string[] = ['mp2mp_vc', 'p2mp_vc'];

/** Capacities are stored as 32-bit integers; an offering without bounds does not lift that. */
const LARGEST_CAPACITY = 2_147_483_647;

/** States of a service that is going away: it takes no new rules. */
const GOING: ReadonlySet<State> = new Set<State>(GOING_STATES);

/** Whether every account sees the service (so naming it in an error tells nobody anything new). */
export const isPublicService = (service: Pick<JoinableService, 'type' | 'public'>): boolean =>
  service.type === 'exchange_lan' || service.public;

/** Deny rules carry no capacities: whatever a request says of them is dropped. */
export function termsOfItsType(order: MemberJoiningRuleOrder): MemberJoiningRuleOrder {
  return order.type === 'deny' ? { ...order, capacity_min: null, capacity_max: null } : order;
}

/**
 * What a caller may do with a network service, and so with who joins it: the accounts acting for
 * its managing account change it and decide who joins; those acting for its consuming account only
 * see it (and its rules). Every handler asks this one rule.
 */
export const accessToService = (
  scope: Scope,
  service: Pick<JoinableService, 'managing_account' | 'consuming_account'>,
): Access => accessToOwned(service, scope);

/**
 * What a caller may do with a rule. The service's owners see its rules; its manager changes those
 * whose managing account it acts for; the member a rule names sees it (so it learns it was
 * admitted) but never changes it. `service` is undefined when it no longer exists.
 */
export function accessToRule(
  rule: Pick<MemberJoiningRuleOrder, 'managing_account' | 'consuming_account'>,
  service: Pick<JoinableService, 'managing_account' | 'consuming_account'> | undefined,
  scope: Scope,
): Access {
  const access: Access = service === undefined ? 'none' : accessToService(scope, service);
  if (access === 'change' && actsFor(scope, rule.managing_account)) return 'change';
  if (canSee(access) || actsFor(scope, rule.consuming_account)) return 'read';
  return 'none';
}

/**
 * Whether a caller sees a rule only as the member it names: the member learns that it was admitted
 * and on which terms, never what the service's owners keep on the rule for themselves (its sensitive
 * properties). Whoever acts for the rule's managing account sees it whole, and so does every other
 * caller that may see it at all, which is an owner of its service.
 */
export const seesRuleAsMember = (
  rule: Pick<MemberJoiningRuleOrder, 'managing_account' | 'consuming_account'>,
  scope: Scope,
): boolean => actsFor(scope, rule.consuming_account) && !actsFor(scope, rule.managing_account);

/**
 * Everything wrong with a rule, by property: the service is a multipoint one the caller owns and
 * not going away; the member exists and is not the service's own consuming account; an allow rule's
 * capacities lie within the offering's bandwidth, the minimum not above the maximum. `concerned`
 * narrows the rules to what a change touches.
 */
export function memberJoiningRuleProblems(
  order: MemberJoiningRuleOrder,
  facts: JoiningRuleFacts,
  concerned: (property: string) => boolean = () => true,
): PropertyError[] {
  const problems: PropertyError[] = [];
  const problem = (name: string, reason: string) => {
    if (concerned(name)) problems.push({ name, reason });
  };
  const { service } = facts;
  if (!service) problem('network_service', `no network service ${order.network_service}`);
  else if (!JOINABLE_SERVICE_TYPES.includes(service.type))
    problem(
      'network_service',
      `joining rules apply to multipoint services (${JOINABLE_SERVICE_TYPES.join(', ')}); ${service.id} is a ${service.type}`,
    );
  else if (facts.access === 'none')
    problem('network_service', `${service.id} is not yours; the accounts that own it make its rules`);
  else if (facts.access === 'read')
    throw new PermissionDeniedError(
      `you consume ${service.id} but do not manage it; only its managing account decides who joins it`,
    );
  else if (GOING.has(service.state))
    problem('network_service', `${service.id} is ${service.state}; it admits no new members`);

  if (!facts.memberKnown) problem('consuming_account', `no account ${order.consuming_account}`);
  else if (service && order.consuming_account === service.consuming_account)
    problem(
      'consuming_account',
      `${order.consuming_account} consumes the service itself and is always admitted; a rule cannot name it`,
    );

  if (order.type !== 'allow') return problems;
  const { capacity_min: min, capacity_max: max } = order;
  const outside = (value: number | null) =>
    service !== undefined &&
    value !== null &&
    ((service.bandwidth_min !== null && value < service.bandwidth_min) ||
      (service.bandwidth_max !== null && value > service.bandwidth_max));
  const range = service && `${service.bandwidth_min ?? 'any'}..${service.bandwidth_max ?? 'any'} Mbit/s`;
  const tooLarge = (value: number | null) => value !== null && value > LARGEST_CAPACITY;
  if (tooLarge(min)) problem('capacity_min', `must be at most ${LARGEST_CAPACITY} Mbit/s`);
  else if (outside(min)) problem('capacity_min', `must lie within the offering's bandwidth, ${range}`);
  if (tooLarge(max)) problem('capacity_max', `must be at most ${LARGEST_CAPACITY} Mbit/s`);
  else if (outside(max)) problem('capacity_max', `must lie within the offering's bandwidth, ${range}`);
  else if (min !== null && max !== null && min > max)
    problem('capacity_max', `must not be below capacity_min (${min})`);
  return problems;
}

/** What a service grants one account: whether it may hold configs there, and within which bounds. */
export interface Standing {
  admitted: boolean;
  /** Smallest capacity a config of the account must book (null: no bound). */
  capacity_min: number | null;
  /** Rate limit that takes precedence over the config's capacity (null: none). */
  capacity_max: number | null;
}

/**
 * How a service stands towards an account, given the rule that names the account (if any): the
 * service's consumer is always in, an allow rule lets its member in with its capacities, a deny
 * rule keeps it out, and without a rule only a public service lets it in.
 */
export function standingOn(
  service: Pick<JoinableService, 'public' | 'consuming_account'>,
  account: string,
  rule: JoiningTerms | undefined,
): Standing {
  const unbounded = { capacity_min: null, capacity_max: null };
  if (account === service.consuming_account) return { admitted: true, ...unbounded };
  if (rule?.type === 'allow')
    return { admitted: true, capacity_min: rule.capacity_min, capacity_max: rule.capacity_max };
  return { admitted: rule === undefined && service.public, ...unbounded };
}

/** A config on the service that is not going away. */
export interface LiveConfig {
  id: string;
  consuming_account: string;
  /** Booked Mbit/s; null books the offering's maximum. */
  capacity: number | null;
}

/** A rule being created (no `before`), changed, or deleted (no `after`). */
export interface RuleChange {
  service: Pick<JoinableService, 'public' | 'consuming_account'>;
  /** The rule's id (for a new rule, the one it is to have). */
  id: string;
  before: (JoiningTerms & Pick<MemberJoiningRuleOrder, 'consuming_account'>) | undefined;
  after: (JoiningTerms & Pick<MemberJoiningRuleOrder, 'consuming_account'>) | undefined;
  /** The live configs on the service of the accounts the rule names before and after. */
  configs: readonly LiveConfig[];
}

export interface RuleChangeEffects {
  /** Configs the change would leave without admission: it cannot be made while they live. */
  conflicts: Conflict[];
  /** A raised `capacity_min` above what a live config books. */
  problems: PropertyError[];
  /** Configs whose rate limit the change moves: their devices need the new limit. */
  reconsider: string[];
}

/**
 * What a change of a rule does to the live configs of the accounts it names. It may not take
 * admission from an account that holds live configs, nor move a rule away from such an account;
 * it may not raise the minimum above a booked capacity; a new cap (or one lifted) reaches every
 * live config of the member.
 */
export function effectsOfRuleChange(change: RuleChange): RuleChangeEffects {
  const { service, before, after, id } = change;
  const effects: RuleChangeEffects = { conflicts: [], problems: [], reconsider: [] };
  const accounts = [...new Set([before?.consuming_account, after?.consuming_account])].filter(
    (account): account is string => account !== undefined,
  );
  for (const account of accounts) {
    const configs = change.configs.filter((config) => config.consuming_account === account);
    if (!configs.length) continue;
    const ruleBefore = before?.consuming_account === account ? before : undefined;
    const ruleAfter = after?.consuming_account === account ? after : undefined;
    const was = standingOn(service, account, ruleBefore);
    const will = standingOn(service, account, ruleAfter);
    const movedAway = ruleBefore !== undefined && after !== undefined && ruleAfter === undefined;
    if (movedAway || (was.admitted && !will.admitted)) {
      const property = after === undefined ? null : movedAway ? 'consuming_account' : 'type';
      for (const config of configs)
        effects.conflicts.push({
          resource_type: 'member-joining-rules',
          resource_id: id,
          resource_property: property,
          remote_resource_type: 'network-service-configs',
          remote_resource_id: config.id,
        });
      continue;
    }
    if (!will.admitted) continue;
    const minimum = will.capacity_min;
    const below = configs.filter(
      (config) => minimum !== null && config.capacity !== null && config.capacity < minimum,
    );
    if (minimum !== was.capacity_min && below.length)
      effects.problems.push({
        name: 'capacity_min',
        reason: `${below.map((config) => `${config.id} books ${config.capacity} Mbit/s`).join(', ')}, less than ${minimum}`,
      });
    if (was.admitted && will.capacity_max !== was.capacity_max)
      effects.reconsider.push(...configs.map((config) => config.id));
  }
  return effects;
}
