import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { propertyNames } from '../support/exchange-lan';
import type { HttpResponse } from '../support/http';
import { readEvents } from '../support/pages';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const SPREE = 'acc-spree-networks';
const THAMES = 'acc-thames-cloud';
const PETIT = 'acc-petit-reseau';
const TRANSIT = 'acc-transit-partners';

const suffix = () => randomBytes(5).toString('hex');
const sql = () => stack().db.sequelize;

/** Every service and config this file inserts, removed again when it is done. */
const inserted = { services: [] as string[], configs: [] as string[] };

/** A multipoint service in Frankfurt, ordered (as if through the API) and in production. */
async function multipoint(
  options: {
    type?: 'mp2mp_vc' | 'p2mp_vc';
    public?: boolean;
    managing?: string;
    consuming?: string;
    state?: string;
  } = {},
): Promise<string> {
  const type = options.type ?? 'mp2mp_vc';
  const id = `ns-mjr-${suffix()}`;
  await sql().query(
    `INSERT INTO network_services (id, type, name, display_name, product_offering, metro_area_network,
       managing_account, consuming_account, billing_account, state, status, external_ref, purchase_order,
       contract_ref, nsc_required_contact_roles, public, created_at, updated_at)
     VALUES (:id, :type, :id, 'Joining rules test VLAN', :offering, 'man-fra', :managing, :consuming, :consuming,
       :state, '[]', NULL, '', NULL, '[]', :public, NOW(3), NOW(3))`,
    {
      replacements: {
        id,
        type,
        offering: type === 'mp2mp_vc' ? 'po-mp2mp-vc-fra' : 'po-p2mp-vc-fra',
        managing: options.managing ?? SPREE,
        consuming: options.consuming ?? options.managing ?? SPREE,
        state: options.state ?? 'production',
        public: options.public ?? false,
      },
    },
  );
  inserted.services.push(id);
  return id;
}

/** A config of `account` on `service`, as if ordered and provisioned. */
async function liveConfig(service: string, account: string, capacity: number | null = 1000): Promise<string> {
  const id = `nsc-mjr-${suffix()}`;
  await sql().query(
    `INSERT INTO network_service_configs (id, type, state, status, managing_account, consuming_account,
       billing_account, role_assignments, external_ref, purchase_order, contract_ref, network_service, connection,
       product_offering, vlan_type, outer_vlan, vlan_held, capacity, asns, listed, revision, created_at, updated_at)
     VALUES (:id, 'mp2mp_vc', 'production', '[]', :account, :account, :account, '[]', NULL, '', NULL, :service,
       'conn-mjr-none', NULL, 'dot1q', 3001, false, :capacity, '[]', false, 1, NOW(3), NOW(3))`,
    { replacements: { id, account, service, capacity } },
  );
  inserted.configs.push(id);
  return id;
}

async function revisionOf(config: string): Promise<number> {
  const [row] = await sql().query<{ revision: number }>(
    'SELECT revision FROM network_service_configs WHERE id = :config',
    { replacements: { config }, type: QueryTypes.SELECT },
  );
  return Number(row.revision);
}

const ids = (response: HttpResponse) => (response.body as Array<{ id: string }>).map((item) => item.id);

const conflictsOf = (response: HttpResponse) =>
  (response.body.conflicts as Array<Record<string, unknown>>).map((c) => [
    c.resource_type,
    c.resource_id,
    c.remote_resource_type,
    c.remote_resource_id,
  ]);

describe('member joining rules', () => {
  let spree: string;
  let thames: string;
  let petit: string;
  let transit: string;
  before(async () => {
    spree = (await login('customer', 0)).accessToken;
    thames = (await login('customer', 1)).accessToken;
    petit = (await login('subaccount')).accessToken;
    transit = (await login('reseller')).accessToken;
  });
  after(async () => {
    await sql().query('DELETE FROM member_joining_rules WHERE network_service IN (:services)', {
      replacements: { services: inserted.services },
    });
    await sql().query('DELETE FROM network_service_configs WHERE id IN (:configs)', {
      replacements: { configs: [...inserted.configs, ''] },
    });
    await sql().query('DELETE FROM network_services WHERE id IN (:services)', {
      replacements: { services: inserted.services },
    });
  });

  const create = (token: string, body: Record<string, unknown>) =>
    request('POST', '/member-joining-rules', { token, body });
  const allowFor = (service: string, member: string, extra: Record<string, unknown> = {}) => ({
    type: 'allow',
    network_service: service,
    consuming_account: member,
    managing_account: SPREE,
    ...extra,
  });
  const rule = (id: string, token = spree) => request('GET', `/member-joining-rules/${id}`, { token });

  it('admits an account to a private service: the owner and the member see the rule, others do not', async () => {
    const service = await multipoint();
    const created = await create(
      spree,
      allowFor(service, THAMES, { external_ref: 'partner', capacity_max: 500 }),
    );
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    assert.deepEqual(
      { ...created.body, id: undefined },
      {
        id: undefined,
        type: 'allow',
        network_service: service,
        consuming_account: THAMES,
        managing_account: SPREE,
        external_ref: 'partner',
        capacity_min: null,
        capacity_max: 500,
      },
    );
    assert.deepEqual((await rule(id)).body, created.body);
    assert.deepEqual(
      ids(await request('GET', `/member-joining-rules?network_service=${service}`, { token: spree })),
      [id],
    );
    const paged = await request('GET', `/member-joining-rules?network_service=${service}&page_limit=1`, {
      token: spree,
    });
    assert.equal(paged.status, 206);
    assert.equal(paged.headers.get('x-pagination-items'), '1');
    assert.deepEqual(ids(await request('GET', `/member-joining-rules?id=${id}`, { token: spree })), [id]);

    // The member learns it was admitted, but the rule is the owner's to change.
    assert.equal((await rule(id, thames)).status, 200);
    assert.ok(ids(await request('GET', '/member-joining-rules', { token: thames })).includes(id));
    assert.equal(
      (
        await request('PATCH', `/member-joining-rules/${id}`, {
          token: thames,
          body: { type: 'allow', capacity_max: 900 },
        })
      ).status,
      403,
    );
    assert.equal((await request('DELETE', `/member-joining-rules/${id}`, { token: thames })).status, 403);

    // A third account learns nothing of it.
    assert.equal((await rule(id, petit)).status, 404);
    assert.deepEqual(
      ids(await request('GET', `/member-joining-rules?network_service=${service}`, { token: petit })),
      [],
    );
    assert.equal(
      (await request('PATCH', `/member-joining-rules/${id}`, { token: petit, body: { type: 'allow' } }))
        .status,
      404,
    );
    assert.equal((await request('DELETE', `/member-joining-rules/${id}`, { token: petit })).status, 404);
    assert.equal((await rule(id)).body.capacity_max, 500);

    for (const token of [spree, thames]) {
      const events = await readEvents<{ payload: { member_joining_rule: { id: string } } }>(
        token,
        '?type=member_joining_rule.created',
      );
      assert.ok(events.some((event) => event.payload.member_joining_rule.id === id));
    }
    const seenByPetit = await readEvents(petit, '?type=member_joining_rule.created');
    assert.ok(!JSON.stringify(seenByPetit).includes(id));
  });

  it('lets the service consumer and those acting for it see the rules; only the service’s manager makes and changes them', async () => {
    // A reseller's service for its sub-account, with a point-to-multipoint topology.
    const service = await multipoint({ type: 'p2mp_vc', managing: TRANSIT, consuming: PETIT });
    const created = await create(transit, {
      type: 'allow',
      network_service: service,
      consuming_account: SPREE,
      managing_account: TRANSIT,
      external_ref: 'transit-ref',
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    // The consumer sees the rule whole, the member without the manager's reference.
    assert.deepEqual((await rule(id, petit)).body, created.body);
    const { external_ref: _hidden, ...asMember } = created.body;
    assert.deepEqual((await rule(id, spree)).body, asMember);
    assert.equal((await rule(id, thames)).status, 404);
    const patched = await request('PATCH', `/member-joining-rules/${id}`, {
      token: petit,
      body: { type: 'allow', external_ref: 'mine' },
    });
    assert.equal(patched.status, 403);
    // The consumer decides nothing of who joins, even in a rule it names itself the manager of.
    const own = await create(petit, {
      type: 'allow',
      network_service: service,
      consuming_account: THAMES,
      managing_account: PETIT,
    });
    assert.equal(own.status, 403, own.text);
    assert.equal((await request('GET', `/network-services/${service}`, { token: thames })).status, 404);
    assert.equal((await request('DELETE', `/member-joining-rules/${id}`, { token: petit })).status, 403);
    const removed = await request('DELETE', `/member-joining-rules/${id}`, { token: transit });
    assert.equal(removed.status, 200);
    assert.equal(removed.body.id, id);
    assert.equal((await rule(id, transit)).status, 404);
  });

  it('shows the member a rule without the manager’s external_ref: not in reads, lists or events', async () => {
    const marker = `spree-ref-${suffix()}`;
    const service = await multipoint();
    const created = await create(
      spree,
      allowFor(service, THAMES, { external_ref: marker, capacity_max: 500 }),
    );
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    const changed = await request('PATCH', `/member-joining-rules/${id}`, {
      token: spree,
      body: { type: 'allow', capacity_max: 600 },
    });
    assert.equal(changed.status, 200, changed.text);
    const whole = changed.body;
    assert.equal(whole.external_ref, marker);
    const { external_ref: _hidden, ...asMember } = whole;
    const listed = async (token: string): Promise<unknown> =>
      (await request('GET', `/member-joining-rules?network_service=${service}`, { token })).body;

    assert.deepEqual((await rule(id)).body, whole);
    assert.deepEqual(await listed(spree), [whole]);
    assert.deepEqual((await rule(id, thames)).body, asMember);
    assert.deepEqual(await listed(thames), [asMember]);

    assert.equal((await request('DELETE', `/member-joining-rules/${id}`, { token: spree })).status, 200);
    type RuleEvent = { type: string; payload: { member_joining_rule?: Record<string, unknown> } };
    const ofRule = (events: RuleEvent[]) =>
      events.filter((event) => event.payload.member_joining_rule?.id === id);
    const told = ofRule(await readEvents<RuleEvent>(spree));
    assert.deepEqual(
      told.map((event) => [event.type, event.payload.member_joining_rule!.external_ref]),
      [
        ['member_joining_rule.created', marker],
        ['member_joining_rule.changed', marker],
        ['member_joining_rule.deleted', marker],
      ],
    );
    const toMember = await readEvents<RuleEvent>(thames);
    assert.ok(!JSON.stringify(toMember).includes(marker));
    assert.deepEqual(
      ofRule(toMember).map((event) => [event.type, Object.keys(event.payload.member_joining_rule!).sort()]),
      told.map((event) => [event.type, Object.keys(asMember).sort()]),
    );
  });

  it('needs a multipoint service of the caller that is not going away', async () => {
    const foreign = await multipoint({ managing: THAMES });
    const going = await multipoint({ state: 'decommission_requested' });
    const p2p = await multipoint();
    await sql().query("UPDATE network_services SET type = 'p2p_vc' WHERE id = :p2p", {
      replacements: { p2p },
    });
    for (const network_service of ['ns-mjr-nowhere', foreign, going, p2p, 'ns-exchange-lan-fra']) {
      const refused = await create(spree, allowFor(network_service, THAMES));
      assert.equal(refused.status, 400, network_service);
      assert.deepEqual(propertyNames(refused), ['network_service'], network_service);
    }
    for (const network_service of [p2p, 'ns-exchange-lan-fra']) {
      const refused = await create(spree, allowFor(network_service, THAMES));
      assert.match(refused.body.properties[0].reason, /joining rules apply to multipoint services/);
    }
    // A public service of somebody else's is known to everyone, but its rules are its owners'.
    const open = await multipoint({ managing: THAMES, public: true });
    const foreignPublic = await create(spree, allowFor(open, TRANSIT));
    assert.deepEqual(propertyNames(foreignPublic), ['network_service']);
    assert.match(foreignPublic.body.properties[0].reason, /not yours/);
    const count = await sql().query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM member_joining_rules WHERE network_service IN (:services)',
      { replacements: { services: ['ns-exchange-lan-fra', foreign, going, p2p] }, type: QueryTypes.SELECT },
    );
    assert.equal(Number(count[0].n), 0);
  });

  it('names an existing account other than the consumer, for a managing account the caller acts for', async () => {
    const service = await multipoint();
    assert.deepEqual(propertyNames(await create(spree, allowFor(service, 'acc-nobody'))), [
      'consuming_account',
    ]);
    assert.deepEqual(propertyNames(await create(spree, allowFor(service, SPREE))), ['consuming_account']);
    assert.deepEqual(
      propertyNames(await create(spree, allowFor(service, THAMES, { managing_account: THAMES }))),
      ['managing_account'],
    );
  });

  it('keeps one rule per account and service, naming the first', async () => {
    const service = await multipoint();
    const first = await create(spree, allowFor(service, THAMES));
    assert.equal(first.status, 201, first.text);
    const second = await create(spree, { ...allowFor(service, THAMES), type: 'deny' });
    assert.equal(second.status, 400);
    assert.match(second.body.type, /unable-to-fulfill/);
    assert.deepEqual(conflictsOf(second), [['member-joining-rules', first.body.id, 'accounts', THAMES]]);

    // Two at once for another account: one is stored, the other names it.
    const both = await Promise.all([
      create(spree, allowFor(service, TRANSIT)),
      create(spree, allowFor(service, TRANSIT, { capacity_max: 500 })),
    ]);
    assert.deepEqual(both.map((response) => response.status).sort(), [201, 400]);
    const stored = both.find((response) => response.status === 201)!;
    const refused = both.find((response) => response.status === 400)!;
    assert.deepEqual(conflictsOf(refused), [['member-joining-rules', stored.body.id, 'accounts', TRANSIT]]);

    // Moving a rule onto an account that has one is the same conflict.
    const moved = await request('PATCH', `/member-joining-rules/${stored.body.id}`, {
      token: spree,
      body: { type: 'allow', consuming_account: THAMES },
    });
    assert.equal(moved.status, 400);
    assert.deepEqual(conflictsOf(moved), [['member-joining-rules', first.body.id, 'accounts', THAMES]]);
  });

  it('keeps capacities within the offering, the minimum not above the maximum; deny rules have none', async () => {
    const service = await multipoint();
    assert.deepEqual(propertyNames(await create(spree, allowFor(service, THAMES, { capacity_min: 50 }))), [
      'capacity_min',
    ]);
    assert.deepEqual(
      propertyNames(await create(spree, allowFor(service, THAMES, { capacity_max: 200_000 }))),
      ['capacity_max'],
    );
    assert.deepEqual(
      propertyNames(
        await create(spree, allowFor(service, THAMES, { capacity_min: 2000, capacity_max: 1000 })),
      ),
      ['capacity_max'],
    );
    const denied = await create(spree, { ...allowFor(service, THAMES), type: 'deny', capacity_max: 500 });
    assert.equal(denied.status, 201, denied.text);
    assert.ok(!('capacity_max' in denied.body) && !('capacity_min' in denied.body));
    const [row] = await sql().query<{ capacity_max: number | null }>(
      'SELECT capacity_max FROM member_joining_rules WHERE id = :id',
      { replacements: { id: denied.body.id }, type: QueryTypes.SELECT },
    );
    assert.equal(row.capacity_max, null);
  });

  it('replaces a rule with PUT and changes parts of it with PATCH, the service staying', async () => {
    const service = await multipoint();
    const created = await create(
      spree,
      allowFor(service, THAMES, { external_ref: 'first', capacity_min: 200 }),
    );
    const id = created.body.id as string;
    const path = `/member-joining-rules/${id}`;

    const patched = await request('PATCH', path, {
      token: spree,
      body: { type: 'allow', capacity_max: 800 },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      [patched.body.external_ref, patched.body.capacity_min, patched.body.capacity_max],
      ['first', 200, 800],
    );
    // A partial update may leave the type out; it may not change it.
    const untyped = await request('PATCH', path, {
      token: spree,
      body: { external_ref: 'second' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    assert.equal(untyped.status, 200, untyped.text);
    assert.equal(untyped.body.external_ref, 'second');
    assert.deepEqual(propertyNames(await request('PATCH', path, { token: spree, body: { type: 'deny' } })), [
      'type',
    ]);
    assert.deepEqual(
      propertyNames(
        await request('PATCH', path, { token: spree, body: { type: 'allow', capacity_min: 900 } }),
      ),
      ['capacity_max'],
    );

    for (const [body, property] of [
      [{ type: 'allow', consuming_account: 'acc-nobody' }, 'consuming_account'],
      [{ type: 'allow', consuming_account: SPREE }, 'consuming_account'],
      [{ type: 'allow', managing_account: THAMES }, 'managing_account'],
      [[{ type: 'deny' }], 'body'],
    ] as const)
      assert.deepEqual(propertyNames(await request('PATCH', path, { token: spree, body })), [property]);
    assert.equal((await rule(id)).body.external_ref, 'second');

    const other = await multipoint();
    const moved = await request('PUT', path, {
      token: spree,
      body: { type: 'allow', network_service: other, consuming_account: THAMES, managing_account: SPREE },
    });
    assert.deepEqual(propertyNames(moved), ['network_service']);

    const replaced = await request('PUT', path, {
      token: spree,
      body: { type: 'allow', consuming_account: THAMES, managing_account: SPREE, capacity_max: 300 },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(
      [
        replaced.body.network_service,
        replaced.body.external_ref,
        replaced.body.capacity_min,
        replaced.body.capacity_max,
      ],
      [service, null, null, 300],
    );

    // Turned into a deny rule, it loses its capacities.
    const denied = await request('PUT', path, {
      token: spree,
      body: { type: 'deny', consuming_account: THAMES, managing_account: SPREE },
    });
    assert.equal(denied.status, 200, denied.text);
    assert.equal(denied.body.type, 'deny');
    assert.ok(!('capacity_max' in denied.body));
    const [row] = await sql().query<{ capacity_max: number | null }>(
      'SELECT capacity_max FROM member_joining_rules WHERE id = :id',
      { replacements: { id }, type: QueryTypes.SELECT },
    );
    assert.equal(row.capacity_max, null);
    const events = await readEvents(thames, '?type=member_joining_rule.changed');
    assert.ok(JSON.stringify(events).includes(id));

    const removed = await request('DELETE', path, { token: spree });
    assert.equal(removed.status, 200);
    assert.equal(removed.body.type, 'deny');
    assert.equal((await rule(id)).status, 404);
    assert.ok(JSON.stringify(await readEvents(spree, '?type=member_joining_rule.deleted')).includes(id));
  });

  describe('with live configs of the member', () => {
    it('will not strand a member of a private service', async () => {
      const service = await multipoint();
      const created = await create(spree, allowFor(service, THAMES, { capacity_max: 500 }));
      const id = created.body.id as string;
      const config = await liveConfig(service, THAMES);
      const expected = [['member-joining-rules', id, 'network-service-configs', config]];

      const deleted = await request('DELETE', `/member-joining-rules/${id}`, { token: spree });
      assert.equal(deleted.status, 400);
      assert.match(deleted.body.type, /unable-to-fulfill/);
      assert.deepEqual(conflictsOf(deleted), expected);
      const denied = await request('PUT', `/member-joining-rules/${id}`, {
        token: spree,
        body: { type: 'deny', consuming_account: THAMES, managing_account: SPREE },
      });
      assert.deepEqual(conflictsOf(denied), expected);
      const moved = await request('PATCH', `/member-joining-rules/${id}`, {
        token: spree,
        body: { type: 'allow', consuming_account: TRANSIT },
      });
      assert.deepEqual(conflictsOf(moved), expected);
      assert.deepEqual((await rule(id)).body, created.body);
      assert.equal(await revisionOf(config), 1);

      // A config on its way out holds nothing.
      await sql().query(
        "UPDATE network_service_configs SET state = 'decommission_requested' WHERE id = :config",
        {
          replacements: { config },
        },
      );
      assert.equal((await request('DELETE', `/member-joining-rules/${id}`, { token: spree })).status, 200);
    });

    it('will not deny a member of a public service', async () => {
      const service = await multipoint({ public: true });
      const config = await liveConfig(service, THAMES);
      const denied = await create(spree, { ...allowFor(service, THAMES), type: 'deny' });
      assert.equal(denied.status, 400);
      assert.match(denied.body.type, /unable-to-fulfill/);
      assert.deepEqual(
        (denied.body.conflicts as Array<Record<string, unknown>>).map((c) => [
          c.resource_type,
          c.remote_resource_type,
          c.remote_resource_id,
        ]),
        [['member-joining-rules', 'network-service-configs', config]],
      );
      assert.deepEqual(
        ids(await request('GET', `/member-joining-rules?network_service=${service}`, { token: spree })),
        [],
      );
      // Another account of the public service can be denied.
      assert.equal((await create(spree, { ...allowFor(service, TRANSIT), type: 'deny' })).status, 201);
    });

    it('will not raise the minimum above what a live config books', async () => {
      const service = await multipoint({ public: true });
      const config = await liveConfig(service, THAMES, 1000);
      const fresh = await create(spree, allowFor(service, THAMES, { capacity_min: 2000 }));
      assert.deepEqual(propertyNames(fresh), ['capacity_min']);
      assert.match(fresh.body.properties[0].reason, new RegExp(config));
      const created = await create(spree, allowFor(service, THAMES, { capacity_min: 500 }));
      assert.equal(created.status, 201, created.text);
      const raised = await request('PATCH', `/member-joining-rules/${created.body.id}`, {
        token: spree,
        body: { type: 'allow', capacity_min: 1500 },
      });
      assert.deepEqual(propertyNames(raised), ['capacity_min']);
      assert.equal((await rule(created.body.id as string)).body.capacity_min, 500);
    });

    it('passes a new cap on to the live configs of the member', async () => {
      const service = await multipoint({ public: true });
      const config = await liveConfig(service, THAMES, 1000);
      const bystander = await liveConfig(service, PETIT, 1000);
      const reconsiderations = async () => {
        const rows = await sql().query<{ signal_name: string; delivered_at: Date | null }>(
          'SELECT signal_name, delivered_at FROM workflow_outbox WHERE workflow_id = :workflow ORDER BY id',
          { replacements: { workflow: configWorkflowId(config) }, type: QueryTypes.SELECT },
        );
        return rows;
      };

      const created = await create(spree, allowFor(service, THAMES, { capacity_max: 500 }));
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      assert.equal(await revisionOf(config), 2);
      assert.deepEqual(
        (await reconsiderations()).map((row) => row.signal_name),
        ['reconsider'],
      );

      const raised = await request('PATCH', `/member-joining-rules/${id}`, {
        token: spree,
        body: { type: 'allow', capacity_max: 800 },
      });
      assert.equal(raised.status, 200, raised.text);
      assert.equal(await revisionOf(config), 3);
      await eventually('the reconsider signals delivered', async () =>
        (await reconsiderations()).every((row) => row.delivered_at !== null) ? true : undefined,
      );
      assert.equal((await reconsiderations()).length, 2);

      const renamed = await request('PATCH', `/member-joining-rules/${id}`, {
        token: spree,
        body: { type: 'allow', external_ref: 'renamed' },
      });
      assert.equal(renamed.status, 200);
      assert.equal(await revisionOf(config), 3);

      // Deleting the allow rule of a public service lifts the cap.
      assert.equal((await request('DELETE', `/member-joining-rules/${id}`, { token: spree })).status, 200);
      assert.equal(await revisionOf(config), 4);
      assert.equal((await reconsiderations()).length, 3);
      assert.equal(await revisionOf(bystander), 1);
    });
  });
});
