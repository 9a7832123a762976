import type { Sequelize, Transaction } from 'sequelize';
import { UniqueConstraintError } from 'sequelize';
import type { Scope } from '../../domain/authority';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import type {
  JoinableService,
  JoiningRuleFacts,
  LiveConfig,
  MemberJoiningRule,
  MemberJoiningRuleOrder,
} from '../../domain/member-joining-rules';
import { accessToService, effectsOfRuleChange, isPublicService } from '../../domain/member-joining-rules';
import { RECONSIDER_SIGNAL } from '../../domain/states';
import { resourceReader, sqlOf } from '../collection';
import { newId } from '../../domain/ids';
import { memberJoiningRules } from '../member-joining-rules-collection';
import { allocatingTransaction } from '../transactions';
import { accountSeenBy } from '../visibility';
import type { EventRepository } from './event-repository';
import { CONFIG_GOING, configWorkflowId } from './network-service-config-repository';
import type { OutboxRepository } from './outbox-repository';
import type { QuotaGuard } from './quota-guard';
import { unitOfWork } from '../unit-of-work';

/** Decides, inside the write's transaction with the rule and its service locked, whether the caller may go on. */
export type RuleGuard = (rule: MemberJoiningRule, service: JoinableService | undefined) => void;

/** A rule as IX-API shows it: a deny rule has no capacities. */
export type MemberJoiningRuleView = Omit<MemberJoiningRule, 'capacity_min' | 'capacity_max'> &
  Partial<Pick<MemberJoiningRule, 'capacity_min' | 'capacity_max'>>;

type ServiceRow = Omit<JoinableService, 'public' | 'bandwidth_min' | 'bandwidth_max'> & {
  public: number | boolean;
  bandwidth_min: number | string | null;
  bandwidth_max: number | string | null;
};

const bound = (value: number | string | null) => (value === null ? null : Number(value));

/**
 * Member joining rules. Every write locks the service's row first, so the rules of one service
 * change one after the other, and checks what the change does to the live configs on the service in
 * the same transaction: it refuses to strand a config, and asks the configs whose rate limit moves
 * to apply it.
 */
export function createMemberJoiningRuleRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
  quotas: QuotaGuard;
}) {
  const { sequelize, events, outbox, quotas } = deps;
  const { select, run } = sqlOf(sequelize);
  const read = resourceReader<MemberJoiningRuleView>(sequelize, memberJoiningRules);

  /** The rule with every term, the capacities a deny rule does not show included (as none). */
  const ruleOf = async (id: string, transaction?: Transaction): Promise<MemberJoiningRule | undefined> => {
    const rule = await read(id, transaction);
    return rule && { capacity_min: null, capacity_max: null, ...rule };
  };

  async function serviceOf(id: string, transaction?: Transaction): Promise<JoinableService | undefined> {
    const [row] = await select<ServiceRow>(
      `SELECT s.id, s.type, s.state, s.public, s.managing_account, s.consuming_account, o.bandwidth_min,
         o.bandwidth_max
       FROM network_services s LEFT JOIN product_offerings o ON o.id = s.product_offering WHERE s.id = :id`,
      { id },
      transaction,
    );
    return (
      row && {
        ...row,
        public: Boolean(Number(row.public)),
        bandwidth_min: bound(row.bandwidth_min),
        bandwidth_max: bound(row.bandwidth_max),
      }
    );
  }

  /** Locks the service's row: the rules of a service and the checks against its configs go one by one. */
  async function lockService(id: string, transaction: Transaction): Promise<JoinableService | undefined> {
    await select('SELECT id FROM network_services WHERE id = :id FOR UPDATE', { id }, transaction);
    return serviceOf(id, transaction);
  }

  const alreadyRuled = (existing: string, account: string) =>
    new UnableToFulfillError(
      'consuming_account',
      `${existing} rules on ${account} for this service already; change that rule`,
      [
        {
          resource_type: 'member-joining-rules',
          resource_id: existing,
          resource_property: 'consuming_account',
          remote_resource_type: 'accounts',
          remote_resource_id: account,
        },
      ],
    );

  async function ruleNaming(order: MemberJoiningRuleOrder, except: string, transaction?: Transaction) {
    const [existing] = await select<{ id: string }>(
      `SELECT id FROM member_joining_rules WHERE network_service = :service AND consuming_account = :account
         AND id <> :except${transaction ? ' FOR UPDATE' : ''}`,
      { service: order.network_service, account: order.consuming_account, except },
      transaction,
    );
    return existing?.id;
  }

  /** One rule per account and service: a second one is a conflict naming the first. */
  async function refuseSecondRule(order: MemberJoiningRuleOrder, except: string, transaction: Transaction) {
    const existing = await ruleNaming(order, except, transaction);
    if (existing) throw alreadyRuled(existing, order.consuming_account);
  }

  /**
   * The unique index catches what the check could not see (a write that got around the service's
   * lock); it is answered like the check would have.
   */
  async function guardedByIndex<T>(order: MemberJoiningRuleOrder, except: string, write: () => Promise<T>) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      const existing = await ruleNaming(order, except);
      if (existing) throw alreadyRuled(existing, order.consuming_account);
      throw error;
    }
  }

  /**
   * Applies what a change does to the live configs of the accounts it names: refuses it if it
   * strands one or leaves one below the minimum, and otherwise bumps the revision of each config
   * whose rate limit moves and asks its workflow to reconsider.
   */
  async function settleConfigs(
    service: JoinableService,
    id: string,
    before: MemberJoiningRuleOrder | undefined,
    after: MemberJoiningRuleOrder | undefined,
    transaction: Transaction,
  ): Promise<void> {
    const accounts = [before?.consuming_account, after?.consuming_account].filter(
      (account): account is string => account !== undefined,
    );
    const configs = await select<LiveConfig>(
      `SELECT id, consuming_account, capacity FROM network_service_configs
       WHERE network_service = :service AND consuming_account IN (:accounts) AND state NOT IN (:gone)
       ORDER BY id FOR UPDATE`,
      { service: service.id, accounts, gone: CONFIG_GOING },
      transaction,
    );
    const effects = effectsOfRuleChange({ service, id, before, after, configs });
    if (effects.problems.length) throw new ValidationError(effects.problems);
    if (effects.conflicts.length)
      throw new UnableToFulfillError(
        'id',
        `live configs of the member rely on its admission: ${effects.conflicts.map((c) => c.remote_resource_id).join(', ')}; decommission them first`,
        effects.conflicts,
      );
    if (!effects.reconsider.length) return;
    await run(
      'UPDATE network_service_configs SET revision = revision + 1, updated_at = NOW(3) WHERE id IN (:ids)',
      { ids: effects.reconsider },
      transaction,
    );
    for (const config of effects.reconsider)
      await outbox.enqueue({ workflowId: configWorkflowId(config), signal: RECONSIDER_SIGNAL }, transaction);
  }

  /** Tells the service's consumer (and whoever acts for it) and the member the rule names. */
  const tell = (
    what: 'created' | 'changed' | 'deleted',
    rule: MemberJoiningRuleView,
    service: JoinableService,
    transaction: Transaction,
  ) =>
    events.appendFor(
      { type: `member_joining_rule.${what}`, payload: { member_joining_rule: rule } },
      [service.consuming_account, rule.consuming_account],
      transaction,
    );

  /** Locks a rule's service and then the rule, and lets `allowed` decide on the caller. */
  async function lockRule(id: string, allowed: RuleGuard, transaction: Transaction) {
    const seen = await ruleOf(id, transaction);
    if (!seen) throw new NotFoundError(`no member-joining-rules with id ${id}`);
    // The service never changes, so locking it before the rule keeps the order every write takes.
    const service = await lockService(seen.network_service, transaction);
    await select('SELECT id FROM member_joining_rules WHERE id = :id FOR UPDATE', { id }, transaction);
    const current = await ruleOf(id, transaction);
    if (!current) throw new NotFoundError(`no member-joining-rules with id ${id}`);
    allowed(current, service);
    // Only owners get past `allowed`, and there is no owner without a service.
    if (!service) throw new NotFoundError(`no member-joining-rules with id ${id}`);
    return { current, service };
  }

  return {
    /** A rule with the service it rules on (undefined when either is missing). */
    async findWithService(
      id: string,
    ): Promise<{ rule: MemberJoiningRule; service: JoinableService | undefined } | undefined> {
      const rule = await ruleOf(id);
      return rule && { rule, service: await serviceOf(rule.network_service) };
    },

    /** What the rules need to know of a rule: its service (as far as the caller may know it) and member. */
    async orderFacts(order: MemberJoiningRuleOrder, scope: Scope): Promise<JoiningRuleFacts> {
      const service = await serviceOf(order.network_service);
      const member = await accountSeenBy(sequelize, order.consuming_account, scope);
      const access = service === undefined ? 'none' : accessToService(scope, service);
      return {
        service: service && (access !== 'none' || isPublicService(service)) ? service : undefined,
        access,
        memberKnown: member !== undefined,
      };
    },

    /**
     * Stores a new rule with its event, within the quota of joining rules of its managing account's
     * tree; configs of its member it changes the rate limit of are told.
     */
    async create(order: MemberJoiningRuleOrder): Promise<MemberJoiningRuleView> {
      const id = newId('mjr');
      return guardedByIndex(order, id, () =>
        allocatingTransaction(sequelize, async (transaction) => {
          await quotas.requireRoom(order.managing_account, { member_joining_rules: 1 }, transaction);
          const service = await lockService(order.network_service, transaction);
          if (!service)
            throw new ValidationError([
              { name: 'network_service', reason: `no network service ${order.network_service}` },
            ]);
          await refuseSecondRule(order, id, transaction);
          await settleConfigs(service, id, undefined, order, transaction);
          await run(
            `INSERT INTO member_joining_rules (id, type, network_service, consuming_account, managing_account,
               external_ref, capacity_min, capacity_max, created_at, updated_at)
             VALUES (:id, :type, :network_service, :consuming_account, :managing_account, :external_ref,
               :capacity_min, :capacity_max, NOW(3), NOW(3))`,
            { ...order, id },
            transaction,
          );
          const rule = (await read(id, transaction))!;
          await tell('created', rule, service, transaction);
          return rule;
        }),
      );
    },

    /**
     * Replaces a rule's terms with `next` (its service stays) once `allowed` accepts the caller, and
     * settles what that does to the live configs of the accounts it names.
     */
    async change(
      id: string,
      next: MemberJoiningRuleOrder,
      allowed: RuleGuard,
    ): Promise<MemberJoiningRuleView> {
      return guardedByIndex(next, id, () =>
        unitOfWork(sequelize, async (transaction) => {
          const { current, service } = await lockRule(id, allowed, transaction);
          if (next.consuming_account !== current.consuming_account)
            await refuseSecondRule(next, id, transaction);
          await settleConfigs(service, id, current, next, transaction);
          await run(
            `UPDATE member_joining_rules SET type = :type, consuming_account = :consuming_account,
               managing_account = :managing_account, external_ref = :external_ref, capacity_min = :capacity_min,
               capacity_max = :capacity_max, updated_at = NOW(3)
             WHERE id = :id`,
            { ...next, id },
            transaction,
          );
          const rule = (await read(id, transaction))!;
          await tell('changed', rule, service, transaction);
          return rule;
        }),
      );
    },

    /** Removes a rule once `allowed` accepts the caller, unless that strands a live config. */
    async destroy(id: string, allowed: RuleGuard): Promise<MemberJoiningRuleView> {
      return unitOfWork(sequelize, async (transaction) => {
        const { current, service } = await lockRule(id, allowed, transaction);
        await settleConfigs(service, id, current, undefined, transaction);
        const rule = (await read(id, transaction))!;
        await run('DELETE FROM member_joining_rules WHERE id = :id', { id }, transaction);
        await tell('deleted', rule, service, transaction);
        return rule;
      });
    },
  };
}

export type MemberJoiningRuleRepository = ReturnType<typeof createMemberJoiningRuleRepository>;
