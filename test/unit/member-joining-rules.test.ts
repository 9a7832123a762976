import assert from 'node:assert/strict';
import type { Access } from '../../domain/authority';
import { PermissionDeniedError } from '../../domain/errors';
import type {
  JoinableService,
  LiveConfig,
  MemberJoiningRuleOrder,
  RuleChange,
} from '../../domain/member-joining-rules';
import {
  accessToRule,
  effectsOfRuleChange,
  memberJoiningRuleProblems,
  seesRuleAsMember,
  standingOn,
  termsOfItsType,
} from '../../domain/member-joining-rules';

const OWNER = 'acc-owner';
const MEMBER = 'acc-member';

const service = (extra: Partial<JoinableService> = {}): JoinableService => ({
  id: 'ns-mp',
  type: 'mp2mp_vc',
  state: 'production',
  public: false,
  managing_account: OWNER,
  consuming_account: OWNER,
  bandwidth_min: 100,
  bandwidth_max: 100_000,
  ...extra,
});

const allow = (extra: Partial<MemberJoiningRuleOrder> = {}): MemberJoiningRuleOrder => ({
  type: 'allow',
  network_service: 'ns-mp',
  consuming_account: MEMBER,
  managing_account: OWNER,
  external_ref: null,
  capacity_min: null,
  capacity_max: null,
  ...extra,
});

const deny = (extra: Partial<MemberJoiningRuleOrder> = {}) => allow({ type: 'deny', ...extra });

const config = (id: string, capacity: number | null = 1000, account = MEMBER): LiveConfig => ({
  id,
  consuming_account: account,
  capacity,
});

describe('member joining rules', () => {
  describe('problems', () => {
    const names = (
      order: MemberJoiningRuleOrder,
      facts: { service?: JoinableService; access?: Access; memberKnown?: boolean } = {},
      concerned?: (property: string) => boolean,
    ) =>
      memberJoiningRuleProblems(
        order,
        {
          service: 'service' in facts ? facts.service : service(),
          access: facts.access ?? 'change',
          memberKnown: facts.memberKnown ?? true,
        },
        concerned,
      ).map((problem) => problem.name);

    it('takes a rule on a live multipoint service of the caller for an existing account', () => {
      assert.deepEqual(names(allow({ capacity_min: 100, capacity_max: 100_000 })), []);
      assert.deepEqual(names(allow(), { service: service({ type: 'p2mp_vc' }) }), []);
      assert.deepEqual(names(deny()), []);
    });

    it('forbids a rule to an account that consumes the service but does not manage it', () => {
      assert.throws(
        () => names(allow(), { access: 'read' }),
        (error: unknown) =>
          error instanceof PermissionDeniedError && /managing account decides/.test(error.message),
      );
    });

    it('needs a multipoint service the caller owns that is not going away', () => {
      assert.deepEqual(names(allow(), { service: undefined, access: 'none' }), ['network_service']);
      const someonesPublic = memberJoiningRuleProblems(allow(), {
        service: service({ public: true }),
        access: 'none',
        memberKnown: true,
      });
      assert.deepEqual(
        someonesPublic.map((p) => p.name),
        ['network_service'],
      );
      assert.match(someonesPublic[0].reason, /not yours/);
      const lan = memberJoiningRuleProblems(allow(), {
        service: service({ type: 'exchange_lan' }),
        access: 'none',
        memberKnown: true,
      });
      assert.deepEqual(
        lan.map((p) => p.name),
        ['network_service'],
      );
      assert.match(lan[0].reason, /joining rules apply to multipoint services/);
      assert.deepEqual(names(allow(), { service: service({ type: 'p2p_vc' }) }), ['network_service']);
      for (const state of ['decommission_requested', 'decommissioned', 'cancelled', 'archived'] as const)
        assert.deepEqual(names(allow(), { service: service({ state }) }), ['network_service'], state);
      assert.deepEqual(names(allow(), { service: service({ state: 'requested' }) }), []);
    });

    it('names an existing account other than the service consumer', () => {
      assert.deepEqual(names(allow(), { memberKnown: false }), ['consuming_account']);
      assert.deepEqual(names(allow({ consuming_account: OWNER })), ['consuming_account']);
    });

    it('keeps capacities within the offering, the minimum not above the maximum', () => {
      assert.deepEqual(names(allow({ capacity_min: 50 })), ['capacity_min']);
      assert.deepEqual(names(allow({ capacity_max: 200_000 })), ['capacity_max']);
      assert.deepEqual(names(allow({ capacity_min: 5000, capacity_max: 1000 })), ['capacity_max']);
      assert.deepEqual(names(allow({ capacity_min: 50, capacity_max: 200_000 })), [
        'capacity_min',
        'capacity_max',
      ]);
      const unbounded = service({ bandwidth_min: null, bandwidth_max: null });
      assert.deepEqual(
        names(allow({ capacity_min: 1, capacity_max: 10_000_000 }), { service: unbounded }),
        [],
      );
      assert.deepEqual(
        names(allow({ capacity_min: 2 ** 31, capacity_max: 2 ** 40 }), { service: unbounded }),
        ['capacity_min', 'capacity_max'],
      );
    });

    it('judges only what a change touches', () => {
      const onlyCapacities = (property: string) => property.startsWith('capacity_');
      assert.deepEqual(
        names(allow({ capacity_max: 200_000 }), { service: service({ state: 'archived' }) }, onlyCapacities),
        ['capacity_max'],
      );
    });
  });

  it('drops the capacities of a deny rule', () => {
    assert.deepEqual(termsOfItsType(deny({ capacity_min: 100, capacity_max: 200 })), deny());
    assert.deepEqual(termsOfItsType(allow({ capacity_max: 200 })), allow({ capacity_max: 200 }));
  });

  describe('standing', () => {
    it('admits the consumer always, members of a private service by allow rule only', () => {
      const closed = service();
      assert.equal(standingOn(closed, OWNER, deny()).admitted, true);
      assert.equal(standingOn(closed, MEMBER, undefined).admitted, false);
      assert.equal(standingOn(closed, MEMBER, deny()).admitted, false);
      assert.deepEqual(standingOn(closed, MEMBER, allow({ capacity_min: 200, capacity_max: 500 })), {
        admitted: true,
        capacity_min: 200,
        capacity_max: 500,
      });
    });

    it('admits everyone to a public service but those denied', () => {
      const open = service({ public: true });
      assert.equal(standingOn(open, MEMBER, undefined).admitted, true);
      assert.equal(standingOn(open, MEMBER, deny()).admitted, false);
      assert.equal(standingOn(open, MEMBER, allow({ capacity_max: 300 })).capacity_max, 300);
    });
  });

  describe('access', () => {
    const scope = (...accounts: string[]) => ({ accountId: accounts[0], accounts });
    const rule = { managing_account: OWNER, consuming_account: MEMBER };
    const owned = { managing_account: 'acc-manager', consuming_account: OWNER };

    it('lets the service’s manager change the rules it manages, its consumer and the member only see them', () => {
      assert.equal(accessToRule(rule, owned, scope('acc-manager', OWNER)), 'change');
      assert.equal(
        accessToRule({ ...rule, managing_account: 'acc-manager' }, owned, scope('acc-manager')),
        'change',
      );
      // Consuming the service decides nothing of who joins it, whoever the rule says manages it.
      assert.equal(accessToRule(rule, owned, scope(OWNER)), 'read');
      assert.equal(accessToRule(rule, owned, scope('acc-manager')), 'read');
      assert.equal(accessToRule(rule, owned, scope(MEMBER)), 'read');
      assert.equal(accessToRule(rule, owned, scope('acc-third')), 'none');
    });

    it('gives no change to a managing account that does not own the service', () => {
      assert.equal(
        accessToRule({ ...rule, managing_account: 'acc-third' }, owned, scope('acc-third')),
        'none',
      );
      assert.equal(accessToRule(rule, undefined, scope(OWNER)), 'none');
    });

    it('shows the member a rule as a member, and every owner of the service the whole rule', () => {
      assert.equal(seesRuleAsMember(rule, scope(MEMBER)), true);
      assert.equal(seesRuleAsMember(rule, scope('acc-reseller', MEMBER)), true);
      assert.equal(seesRuleAsMember(rule, scope(OWNER)), false);
      assert.equal(seesRuleAsMember(rule, scope('acc-manager')), false);
      // Whoever acts for the rule's managing account manages the rule, the member's too.
      assert.equal(seesRuleAsMember(rule, scope('acc-reseller', MEMBER, OWNER)), false);
    });
  });

  describe('effects on live configs', () => {
    const effects = (change: Partial<RuleChange>) =>
      effectsOfRuleChange({
        service: service(),
        id: 'mjr-1',
        before: undefined,
        after: undefined,
        configs: [],
        ...change,
      });
    const conflicting = (change: Partial<RuleChange>) =>
      effects(change).conflicts.map((c) => [c.resource_id, c.resource_property, c.remote_resource_id]);

    it('refuses to strand a member of a private service by deleting or denying its allow rule', () => {
      const configs = [config('nsc-1'), config('nsc-2')];
      assert.deepEqual(conflicting({ before: allow(), configs }), [
        ['mjr-1', null, 'nsc-1'],
        ['mjr-1', null, 'nsc-2'],
      ]);
      assert.deepEqual(conflicting({ before: allow(), after: deny(), configs }), [
        ['mjr-1', 'type', 'nsc-1'],
        ['mjr-1', 'type', 'nsc-2'],
      ]);
      assert.deepEqual(conflicting({ before: allow(), configs: [] }), []);
      const conflict = effects({ before: allow(), configs }).conflicts[0];
      assert.equal(conflict.resource_type, 'member-joining-rules');
      assert.equal(conflict.remote_resource_type, 'network-service-configs');
    });

    it('refuses to deny a member of a public service with live configs', () => {
      const open = service({ public: true });
      assert.deepEqual(conflicting({ service: open, after: deny(), configs: [config('nsc-1')] }), [
        ['mjr-1', 'type', 'nsc-1'],
      ]);
      assert.deepEqual(conflicting({ service: open, after: deny(), configs: [] }), []);
      assert.deepEqual(conflicting({ service: open, before: allow(), configs: [config('nsc-1')] }), []);
    });

    it('refuses to move a rule away from a member with live configs', () => {
      const moved = allow({ consuming_account: 'acc-other' });
      for (const open of [false, true])
        assert.deepEqual(
          conflicting({
            service: service({ public: open }),
            before: allow(),
            after: moved,
            configs: [config('nsc-1')],
          }),
          [['mjr-1', 'consuming_account', 'nsc-1']],
        );
      assert.deepEqual(conflicting({ before: allow(), after: moved, configs: [] }), []);
    });

    it('refuses a minimum above what a live config books', () => {
      const configs = [config('nsc-1', 1000), config('nsc-2', 5000), config('nsc-3', null)];
      const raised = effects({ before: allow(), after: allow({ capacity_min: 2000 }), configs });
      assert.deepEqual(
        raised.problems.map((p) => p.name),
        ['capacity_min'],
      );
      assert.match(raised.problems[0].reason, /nsc-1/);
      assert.doesNotMatch(raised.problems[0].reason, /nsc-2|nsc-3/);
      assert.deepEqual(
        effects({ before: allow(), after: allow({ capacity_min: 1000 }), configs }).problems,
        [],
      );
      const open = service({ public: true });
      assert.equal(
        effects({ service: open, after: allow({ capacity_min: 2000 }), configs }).problems.length,
        1,
      );
    });

    it('asks the configs of the member to reconsider when the cap moves', () => {
      const configs = [config('nsc-1'), config('nsc-2')];
      assert.deepEqual(
        effects({ before: allow(), after: allow({ capacity_max: 500 }), configs }).reconsider,
        ['nsc-1', 'nsc-2'],
      );
      assert.deepEqual(
        effects({
          before: allow({ capacity_max: 500 }),
          after: allow({ capacity_max: 500, external_ref: 'x' }),
          configs,
        }).reconsider,
        [],
      );
      const open = service({ public: true });
      assert.deepEqual(effects({ service: open, before: allow({ capacity_max: 500 }), configs }).reconsider, [
        'nsc-1',
        'nsc-2',
      ]);
      assert.deepEqual(effects({ service: open, before: allow(), configs }).reconsider, []);
      assert.deepEqual(effects({ service: open, after: allow({ capacity_max: 500 }), configs }).reconsider, [
        'nsc-1',
        'nsc-2',
      ]);
    });

    it('touches only the configs of the accounts the rule names', () => {
      const configs = [config('nsc-1'), config('nsc-9', 1000, 'acc-bystander')];
      assert.deepEqual(
        effects({ before: allow(), after: allow({ capacity_max: 500 }), configs }).reconsider,
        ['nsc-1'],
      );
    });
  });
});
