import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { LabDriver } from '../../drivers/lab/driver';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { settleConnections } from '../support/connections';
import { configOrder, deviceOf, orderConnection, propertyNames, reaches } from '../support/exchange-lan';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import {
  connectionFor,
  CUSTOMERS,
  decommissionNow,
  roomiestFrankfurtOfferings,
  vcConfig,
} from '../support/virtual-circuits';
import { eventually } from '../support/wait';

const SPREE = CUSTOMERS.spree.account;
const THAMES = CUSTOMERS.thames.account;
const PETIT = 'acc-petit-reseau';
const TRANSIT = 'acc-transit-partners';

/** What a config of every type shows. */
const SHARED = [
  'id',
  'type',
  'state',
  'status',
  'network_service',
  'managing_account',
  'consuming_account',
  'billing_account',
  'role_assignments',
  'connection',
  'vlan_config',
  'network_feature_configs',
  'external_ref',
  'purchase_order',
  'contract_ref',
  'decommission_at',
  'charged_until',
  'current_billing_start_date',
];

/** What a config of each type shows besides. */
const OWN: Record<string, string[]> = {
  exchange_lan: ['asns', 'capacity', 'ips', 'listed', 'macs', 'product_offering'],
  p2p_vc: ['capacity', 'product_offering'],
  mp2mp_vc: ['capacity', 'macs', 'product_offering'],
  p2mp_vc: ['capacity', 'product_offering', 'role'],
  cloud_vc: ['cloud_vlan', 'handover'],
};

interface Config {
  id: string;
  type: string;
  state: string;
  connection: string;
  vlan_config: { vlan_type: string; vlan?: number | null };
  [property: string]: unknown;
}

const sql = <T extends object>(query: string, replacements: Record<string, unknown> = {}) =>
  stack().db.sequelize.query<T>(query, { replacements, type: QueryTypes.SELECT });
const run = (query: string, replacements: Record<string, unknown> = {}) =>
  stack().db.sequelize.query(query, { replacements });

let fixtures = 0;

/** A customer's service of `type`, stored as its owner's order leaves it (Spree's unless said). */
async function serviceFixture(
  type: string,
  fields: {
    product_offering: string;
    managing_account?: string;
    consuming_account?: string;
    joining_member_account?: string;
    state?: string;
    capacity?: number;
    public?: boolean;
    diversity?: number;
    cloud_key?: string;
  },
): Promise<string> {
  fixtures += 1;
  const id = `ns-vcc-${type.replace('_', '-')}-${fixtures}`;
  const consuming = fields.consuming_account ?? SPREE;
  await run(
    `INSERT INTO network_services (id, type, name, display_name, product_offering, metro_area_network,
       managing_account, consuming_account, billing_account, state, status, external_ref, purchase_order,
       contract_ref, nsc_required_contact_roles, joining_member_account, capacity, public, cloud_key, diversity,
       created_at, updated_at)
     VALUES (:id, :type, NULL, :display_name, :product_offering, 'man-fra', :managing_account, :consuming_account,
       :consuming_account, :state, '[]', NULL, '', NULL, '["role-noc"]', :joining_member_account, :capacity,
       :public, :cloud_key, :diversity, NOW(3), NOW(3))`,
    {
      id,
      type,
      display_name: `Fixture ${id}`,
      product_offering: fields.product_offering,
      managing_account: fields.managing_account ?? consuming,
      consuming_account: consuming,
      state: fields.state ?? 'requested',
      joining_member_account: fields.joining_member_account ?? null,
      capacity: fields.capacity ?? null,
      public: fields.public ? 1 : 0,
      cloud_key: fields.cloud_key ?? null,
      diversity: fields.diversity ?? null,
    },
  );
  return id;
}

/** A member joining rule of a service for `account`, set by the service's owner. */
async function joiningRule(
  service: string,
  account: string,
  type: 'allow' | 'deny',
  bounds: { capacity_min?: number; capacity_max?: number } = {},
): Promise<void> {
  fixtures += 1;
  await run(
    `INSERT INTO member_joining_rules (id, type, network_service, consuming_account, managing_account,
       external_ref, capacity_min, capacity_max, created_at, updated_at)
     SELECT :id, :type, s.id, :account, s.managing_account, NULL, :min, :max, NOW(3), NOW(3)
     FROM network_services s WHERE s.id = :service`,
    {
      id: `mjr-vcc-${fixtures}`,
      type,
      service,
      account,
      min: bounds.capacity_min ?? null,
      max: bounds.capacity_max ?? null,
    },
  );
}

/** How many configs a service has; a refused order adds none. */
async function configCount(service: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    'SELECT COUNT(*) AS n FROM network_service_configs WHERE network_service = :service',
    { service },
  );
  return Number(row.n);
}

/** A config order of Petit Reseau's (through its reseller) on `connection`. */
const petitConfig = (
  type: string,
  service: string,
  connection: string,
  extra: Record<string, unknown> = {},
) => ({
  type,
  network_service: service,
  managing_account: PETIT,
  consuming_account: PETIT,
  billing_account: PETIT,
  role_assignments: ['ra-petit-reseau-noc'],
  connection,
  vlan_config: { vlan_type: 'dot1q' },
  ...extra,
});

/** How many statements of this database wait for a lock. */
async function lockWaits(): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX t
     JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
     WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()`,
  );
  return Number(row.n);
}

/** The rate limit the lab device applies to a config, once it carries it. */
async function rateLimitOf(connection: string, config: string): Promise<number | null> {
  return eventually(`${config} on the device`, async () => {
    const [found] = await new LabDriver(stack().db.sequelize).readServices(await deviceOf(connection), [
      config,
    ]);
    return found ? found.rateLimit : undefined;
  });
}

describe('network service configs of virtual circuits', function () {
  this.timeout(300_000);
  let spree: string;
  let thames: string;
  let reseller: string;
  let spreeFra: string;
  let thamesFra: string;
  let petitFra: string;
  let spreeAms: string;
  let spreeMac: string;

  const post = (token: string, body: Record<string, unknown>) =>
    request('POST', '/network-service-configs', { token, body });
  const created = async (token: string, body: Record<string, unknown>): Promise<Config> => {
    const response = await post(token, body);
    assert.equal(response.status, 201, response.text);
    return response.body as Config;
  };
  const read = async (token: string, id: string) =>
    (await request('GET', `/network-service-configs/${id}`, { token })).body as Config;
  /** A 400 naming `property`, with nothing stored for the service. */
  const refused = async (
    token: string,
    body: Record<string, unknown>,
    property: string,
  ): Promise<HttpResponse> => {
    const service = body.network_service as string;
    const before = await configCount(service);
    const response = await post(token, body);
    assert.equal(response.status, 400, `${property}: ${response.text}`);
    assert.ok(propertyNames(response).includes(property), `${property}: ${response.text}`);
    assert.equal(await configCount(service), before, `${property}: nothing stored`);
    return response;
  };
  /** A 400 unable-to-fulfill naming `holder` among its conflicts, with nothing stored. */
  const conflicting = async (response: Promise<HttpResponse>, holder: string) => {
    const answer = await response;
    assert.equal(answer.status, 400, answer.text);
    assert.match(answer.body.type as string, /unable-to-fulfill/);
    assert.ok(
      (answer.body.conflicts as Array<{ resource_id: string }>).some((c) => c.resource_id === holder),
      answer.text,
    );
  };
  /** Cancels a config and waits until it is gone (decommissioned at once when it was live). */
  const retire = async (token: string, id: string) => {
    const deleted = await request('DELETE', `/network-service-configs/${id}`, { token });
    assert.equal(deleted.status, 202, deleted.text);
    const handle = stack().temporal.client.workflow.getHandle(configWorkflowId(id));
    return eventually(
      `${id} gone`,
      async () => {
        const { state } = await read(token, id);
        if (state === 'decommissioned' || state === 'cancelled') return state;
        const step = await handle.query<string>('provisioningStep').catch(() => '');
        if (String(step).startsWith('decommissioning on')) await handle.signal('decommissionNow');
        return undefined;
      },
      30_000,
    );
  };

  before(async () => {
    spree = (await login('customer', 0)).accessToken;
    thames = (await login('customer', 1)).accessToken;
    reseller = (await login('reseller', 0)).accessToken;
    spreeFra = await connectionFor(spree, 'spree');
    thamesFra = await connectionFor(thames, 'thames');
    // In Amsterdam the subscriber makes the cross-connect: this one stays short of production.
    spreeAms = await orderConnection(spree, {
      product_offering: 'po-connection-ams-10g',
      subscriber_side_demarcs: [],
    });
    const petit = await request('POST', '/connections', {
      token: reseller,
      body: {
        managing_account: PETIT,
        consuming_account: PETIT,
        billing_account: PETIT,
        role_assignments: ['ra-petit-reseau-implementation', 'ra-petit-reseau-noc'],
        product_offering: 'po-connection-fra-10g',
        mode: 'standalone',
        port_quantity: 1,
        subscriber_side_demarcs: ['cage 2, panel 3, port 4'],
      },
    });
    assert.equal(petit.status, 201, petit.text);
    petitFra = petit.body.id as string;
    const mac = await request('POST', '/macs', {
      token: spree,
      body: { managing_account: SPREE, consuming_account: SPREE, address: '02:5e:00:00:bb:01' },
    });
    assert.equal(mac.status, 201, mac.text);
    spreeMac = mac.body.id as string;
    // A circuit handed over in Amsterdam and delivered in Frankfurt: its sides are in different places.
    await stack().db.sequelize.transaction(async (transaction) => {
      const statements = [
        `CREATE TEMPORARY TABLE vcc_offering AS SELECT * FROM product_offerings WHERE id = 'po-p2p-vc-fra'`,
        `UPDATE vcc_offering SET id = 'po-p2p-vc-ams-fra', handover_metro_area = 'ma-ams',
           handover_metro_area_network = 'man-ams'`,
        'INSERT INTO product_offerings SELECT * FROM vcc_offering',
        'DROP TEMPORARY TABLE vcc_offering',
      ];
      for (const statement of statements) await stack().db.sequelize.query(statement, { transaction });
    });
  });

  after(async () => {
    const cancelled = await request('DELETE', `/connections/${spreeAms}`, { token: spree });
    assert.equal(cancelled.status, 202, cancelled.text);
    await settleConnections();
  });

  it('lists every config type in the implementation', async () => {
    const implementation = await request('GET', '/implementation', { token: spree });
    assert.deepEqual(implementation.body.supported_network_service_config_types, [
      'exchange_lan',
      'p2p_vc',
      'mp2mp_vc',
      'p2mp_vc',
      'cloud_vc',
    ]);
  });

  it('shows each type of config with exactly its properties and takes each to production on the device', async () => {
    const p2p = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      joining_member_account: THAMES,
    });
    const mp2mp = await serviceFixture('mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra' });
    const p2mp = await serviceFixture('p2mp_vc', { product_offering: 'po-p2mp-vc-fra' });
    const cloud = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-nimbus-fra',
      diversity: 2,
      cloud_key: 'nimbus-spree-0001',
    });
    const configs = [
      await created(spree, configOrder(spreeFra)),
      await created(
        spree,
        vcConfig('spree', 'p2p_vc', p2p, spreeFra, { capacity: 500, product_offering: 'po-p2p-vc-fra' }),
      ),
      await created(spree, vcConfig('spree', 'mp2mp_vc', mp2mp, spreeFra, { macs: [spreeMac] })),
      await created(spree, vcConfig('spree', 'p2mp_vc', p2mp, spreeFra)),
      await created(spree, vcConfig('spree', 'p2mp_vc', p2mp, spreeFra, { role: 'root' })),
      await created(spree, vcConfig('spree', 'cloud_vc', cloud, spreeFra, { handover: 1, cloud_vlan: 300 })),
    ];
    for (const config of configs) {
      const expected = [...SHARED, ...OWN[config.type]].sort();
      assert.deepEqual(Object.keys(config).sort(), expected, `${config.type} as ordered`);
      assert.deepEqual(Object.keys(await read(spree, config.id)).sort(), expected, `${config.type} as read`);
      const [listed] = (await request('GET', `/network-service-configs?id=${config.id}`, { token: spree }))
        .body as Config[];
      assert.deepEqual(Object.keys(listed).sort(), expected, `${config.type} as listed`);
    }
    const [lan, end, member, leaf, root, handover] = configs;
    assert.equal((lan.ips as string[]).length, 2, 'exchange-LAN configs get their addresses');
    const [addresses] = await sql<{ n: number }>(
      'SELECT COUNT(*) AS n FROM ip_addresses WHERE network_service_config IN (:ids)',
      { ids: [end, member, leaf, root, handover].map((c) => c.id) },
    );
    assert.equal(Number(addresses.n), 0, 'virtual circuits get none');
    assert.equal(end.capacity, 500);
    assert.equal(end.product_offering, 'po-p2p-vc-fra');
    assert.deepEqual(member.macs, [spreeMac]);
    assert.equal(leaf.role, 'leaf');
    assert.equal(root.role, 'root');
    assert.equal(handover.handover, 1);
    assert.equal(handover.cloud_vlan, 300);

    const lab = new LabDriver(stack().db.sequelize);
    for (const config of configs) {
      const live = (await reaches(spree, `/network-service-configs/${config.id}`, 'production')) as Config;
      const [carried] = await lab.readServices(await deviceOf(spreeFra), [config.id]);
      assert.ok(carried, `${config.type} on the device`);
      assert.equal(carried.outerVlan, live.vlan_config.vlan);
    }
  });

  it('keeps a point-to-point circuit to its two sides, one end on each, each on its side’s network', async () => {
    const circuit = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      joining_member_account: THAMES,
    });
    const aSide = (extra: Record<string, unknown> = {}) =>
      vcConfig('spree', 'p2p_vc', circuit, spreeFra, extra);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['network_service', vcConfig('spree', 'mp2mp_vc', circuit, spreeFra)],
      ['connection', aSide({ connection: spreeAms })],
      ['product_offering', aSide({ product_offering: 'po-mp2mp-vc-fra' })],
      ['capacity', aSide({ capacity: 50 })],
      ['macs', aSide({ macs: [spreeMac] })],
      ['asns', aSide({ asns: [64511] })],
      ['role', aSide({ role: 'leaf' })],
      ['role_assignments', aSide({ role_assignments: [] })],
    ];
    for (const [property, body] of cases) await refused(spree, body, property);
    const missing = await refused(spree, aSide({ network_service: 'ns-nowhere' }), 'network_service');
    assert.equal(missing.body.properties[0].reason, 'no network service ns-nowhere');

    // Somebody else's circuit is unknown, as a missing one.
    const elsewhere = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      joining_member_account: PETIT,
    });
    const unknown = await refused(
      thames,
      vcConfig('thames', 'p2p_vc', elsewhere, thamesFra),
      'network_service',
    );
    assert.deepEqual(unknown.body.properties, [
      { name: 'network_service', reason: `no network service ${elsewhere}` },
    ]);
    // An end is consumed by the A side or the B side, nobody else.
    const resold = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      managing_account: TRANSIT,
      consuming_account: PETIT,
      joining_member_account: SPREE,
    });
    await refused(
      reseller,
      petitConfig('p2p_vc', resold, petitFra, { consuming_account: TRANSIT }),
      'consuming_account',
    );
    await created(reseller, petitConfig('p2p_vc', resold, petitFra));
    // A circuit that is going takes no ends.
    const going = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      joining_member_account: THAMES,
      state: 'decommission_requested',
    });
    await refused(spree, vcConfig('spree', 'p2p_vc', going, spreeFra), 'network_service');

    // Handed over in Amsterdam, delivered in Frankfurt: the A side hands over, the B side is delivered.
    const sided = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-ams-fra',
      joining_member_account: THAMES,
    });
    await refused(spree, vcConfig('spree', 'p2p_vc', sided, spreeFra), 'connection');
    await created(thames, vcConfig('thames', 'p2p_vc', sided, thamesFra));

    // One live end on each side.
    const a = await created(spree, aSide());
    await conflicting(post(spree, aSide()), a.id);
    const b = await created(thames, vcConfig('thames', 'p2p_vc', circuit, thamesFra));
    await conflicting(post(thames, vcConfig('thames', 'p2p_vc', circuit, thamesFra)), b.id);
    await retire(spree, a.id);
    await created(spree, aSide());
  });

  it('admits members to multipoint services by the services’ rules, at least at a rule’s capacity', async () => {
    for (const [type, offering] of [
      ['mp2mp_vc', 'po-mp2mp-vc-fra'],
      ['p2mp_vc', 'po-p2mp-vc-fra'],
    ]) {
      const closed = await serviceFixture(type, { product_offering: offering });
      // Private: unknown to whom it allows nothing, as a missing service.
      const unknown = await refused(thames, vcConfig('thames', type, closed, thamesFra), 'network_service');
      assert.deepEqual(unknown.body.properties, [
        { name: 'network_service', reason: `no network service ${closed}` },
      ]);
      // Allowed for Petit Reseau, it is known to its reseller, which still cannot join on its own.
      await joiningRule(closed, PETIT, 'allow');
      const outsider = await refused(
        reseller,
        petitConfig(type, closed, petitFra, { consuming_account: TRANSIT, managing_account: TRANSIT }),
        'network_service',
      );
      assert.match(outsider.body.properties[0].reason, /do not admit acc-transit-partners/);
      await created(reseller, petitConfig(type, closed, petitFra));
      // An allow rule's least capacity; no capacity at all is no limit.
      await joiningRule(closed, THAMES, 'allow', { capacity_min: 1_000 });
      await refused(thames, vcConfig('thames', type, closed, thamesFra, { capacity: 999 }), 'capacity');
      await created(thames, vcConfig('thames', type, closed, thamesFra, { capacity: 1_000 }));
      await created(thames, vcConfig('thames', type, closed, thamesFra));
      // The owner joins its own service.
      await created(spree, vcConfig('spree', type, closed, spreeFra));

      // Public: every account but the denied.
      const open = await serviceFixture(type, { product_offering: offering, public: true });
      await created(thames, vcConfig('thames', type, open, thamesFra));
      await joiningRule(open, PETIT, 'deny');
      const denied = await refused(reseller, petitConfig(type, open, petitFra), 'network_service');
      assert.match(denied.body.properties[0].reason, /do not admit acc-petit-reseau/);
      await refused(spree, vcConfig('spree', type, open, spreeAms), 'connection');
      await refused(spree, vcConfig('spree', type, open, spreeFra, { capacity: 50 }), 'capacity');
      await refused(
        spree,
        vcConfig('spree', type, open, spreeFra, { product_offering: 'po-p2p-vc-fra' }),
        'product_offering',
      );
      if (type === 'p2mp_vc') {
        await refused(spree, vcConfig('spree', type, open, spreeFra, { macs: [spreeMac] }), 'macs');
        await refused(spree, vcConfig('spree', type, open, spreeFra, { role: 'trunk' }), 'role');
      } else {
        await refused(spree, vcConfig('spree', type, open, spreeFra, { role: 'root' }), 'role');
        await refused(spree, vcConfig('spree', type, open, spreeFra, { macs: ['mac-nowhere'] }), 'macs.0');
      }
    }
  });

  it('hands a cloud service over to its owners, one config per handover and provider VLAN, handovers on distinct devices', async () => {
    const [roomiest, next] = await roomiestFrankfurtOfferings();
    const first = await connectionFor(spree, 'spree', roomiest);
    const second = await connectionFor(spree, 'spree', next);
    assert.notEqual(await deviceOf(first), await deviceOf(second));
    const nimbus = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-nimbus-fra',
      diversity: 2,
      cloud_key: 'nimbus-spree-0002',
    });
    const stratus = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-stratus-fra',
      diversity: 1,
      cloud_key: 'stratus-spree002',
    });
    const at = (service: string, connection: string, handover: number, cloud_vlan: number | null) =>
      vcConfig('spree', 'cloud_vc', service, connection, { handover, cloud_vlan });

    const unknown = await refused(
      thames,
      vcConfig('thames', 'cloud_vc', nimbus, thamesFra, { handover: 1, cloud_vlan: null }),
      'network_service',
    );
    assert.deepEqual(unknown.body.properties, [
      { name: 'network_service', reason: `no network service ${nimbus}` },
    ]);
    await refused(spree, at(nimbus, first, 3, null), 'handover');
    await refused(spree, at(stratus, first, 2, null), 'handover');
    await refused(spree, at(stratus, first, 1, 10), 'cloud_vlan');
    await refused(spree, at(nimbus, spreeAms, 1, null), 'connection');
    await refused(spree, { ...at(nimbus, first, 1, null), capacity: 500 }, 'capacity');
    await refused(
      spree,
      { ...at(nimbus, first, 1, null), product_offering: 'po-cloud-nimbus-fra' },
      'product_offering',
    );
    await refused(spree, { ...at(nimbus, first, 1, null), macs: [spreeMac] }, 'macs');

    const all = await created(spree, at(nimbus, first, 1, null));
    await conflicting(post(spree, at(nimbus, first, 1, null)), all.id);
    const picked = await created(spree, at(nimbus, first, 1, 300));
    await conflicting(post(spree, at(nimbus, first, 1, 300)), picked.id);
    await created(spree, at(nimbus, first, 1, 301));
    const sameDevice = await refused(spree, at(nimbus, first, 2, null), 'connection');
    assert.match(sameDevice.text, new RegExp(await deviceOf(first)));
    const other = await created(spree, at(nimbus, second, 2, null));
    const single = await created(spree, at(stratus, first, 1, null));
    await conflicting(post(spree, at(stratus, second, 1, null)), single.id);

    // An order waits for the service while a change of its other configs is under way, then sees it.
    const held = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-nimbus-fra',
      diversity: 2,
      cloud_key: 'nimbus-spree-0004',
    });
    const rival = await created(spree, at(held, first, 1, 8));
    const { sequelize } = stack().db;
    let answer: HttpResponse | undefined;
    const { seen, pending } = await sequelize.transaction(async (transaction) => {
      await sequelize.query('SELECT id FROM network_services WHERE id = :id FOR UPDATE', {
        replacements: { id: held },
        transaction,
      });
      await sequelize.query('UPDATE network_service_configs SET cloud_vlan = 7 WHERE id = :id', {
        replacements: { id: rival.id },
        transaction,
      });
      const order = post(spree, at(held, second, 1, 7)).then((response) => (answer = response));
      const state = await eventually('the order answered or waiting for the service', async () =>
        answer ? 'answered' : (await lockWaits()) > 0 ? 'waiting' : undefined,
      );
      return { seen: state, pending: order };
    });
    await pending;
    assert.equal(seen, 'waiting', answer?.text);
    await conflicting(Promise.resolve(answer!), rival.id);

    await reaches(spree, `/network-service-configs/${all.id}`, 'production');
    await reaches(spree, `/network-service-configs/${other.id}`, 'production');
  });

  it('takes a cloud config that leaves cloud_vlan out as one with cloud_vlan null, ordered or replaced', async () => {
    // The Terraform provider leaves cloud_vlan out when it is not set; out means null.
    const stratus = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-stratus-fra',
      diversity: 1,
      cloud_key: 'stratus-spree004',
    });
    const ordered = await created(spree, vcConfig('spree', 'cloud_vc', stratus, spreeFra, { handover: 1 }));
    assert.equal(ordered.cloud_vlan, null);
    assert.equal((await read(spree, ordered.id)).cloud_vlan, null);
    await conflicting(
      post(spree, vcConfig('spree', 'cloud_vc', stratus, spreeFra, { handover: 1, cloud_vlan: null })),
      ordered.id,
    );

    const nimbus = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-nimbus-fra',
      diversity: 2,
      cloud_key: 'nimbus-spree-0005',
    });
    const picked = await created(
      spree,
      vcConfig('spree', 'cloud_vc', nimbus, spreeFra, { handover: 1, cloud_vlan: 300 }),
    );
    const { network_service: _service, ...replacing } = vcConfig('spree', 'cloud_vc', nimbus, spreeFra, {
      handover: 1,
      vlan_config: picked.vlan_config,
    });
    const replaced = await request('PUT', `/network-service-configs/${picked.id}`, {
      token: spree,
      body: replacing,
    });
    assert.equal(replaced.status, 202, replaced.text);
    assert.equal(
      replaced.body.cloud_vlan,
      null,
      'a replacement without cloud_vlan takes the unmatched VLANs',
    );
    await reaches(spree, `/network-service-configs/${ordered.id}`, 'production');
    await reaches(spree, `/network-service-configs/${picked.id}`, 'production');
    assert.equal((await read(spree, picked.id)).cloud_vlan, null);
  });

  it('changes a config by PUT and PATCH under the same rules; a new role or handover goes onto the device', async () => {
    const p2mp = await serviceFixture('p2mp_vc', { product_offering: 'po-p2mp-vc-fra' });
    const leaf = await created(spree, vcConfig('spree', 'p2mp_vc', p2mp, spreeFra));
    const path = `/network-service-configs/${leaf.id}`;
    await reaches(spree, path, 'production');
    const revision = async (id: string) =>
      Number(
        (
          await sql<{ revision: number }>('SELECT revision FROM network_service_configs WHERE id = :id', {
            id,
          })
        )[0].revision,
      );
    const before = await revision(leaf.id);
    const rooted = await request('PATCH', path, { token: spree, body: { role: 'root' } });
    assert.equal(rooted.status, 202, rooted.text);
    assert.equal(rooted.body.state, 'production_change_pending');
    assert.equal(rooted.body.role, 'root');
    assert.equal(await revision(leaf.id), before + 1);
    await reaches(spree, path, 'production');
    // A replacement that leaves the role out makes the config a leaf again.
    const { network_service: _service, ...replacing } = vcConfig('spree', 'p2mp_vc', p2mp, spreeFra, {
      vlan_config: rooted.body.vlan_config,
    });
    const replaced = await request('PUT', path, { token: spree, body: replacing });
    assert.equal(replaced.status, 202, replaced.text);
    assert.equal(replaced.body.role, 'leaf');
    await reaches(spree, path, 'production');
    for (const [property, body] of [
      ['macs', { macs: [spreeMac] }],
      ['capacity', { capacity: 50 }],
      ['handover', { handover: 1 }],
      ['role', { role: 'trunk' }],
      ['type', { type: 'mp2mp_vc' }],
      ['network_service', { network_service: 'ns-exchange-lan-fra' }],
    ] as const) {
      const refusedChange = await request('PATCH', path, { token: spree, body });
      assert.equal(refusedChange.status, 400, `${property}: ${refusedChange.text}`);
      assert.ok(propertyNames(refusedChange).includes(property), `${property}: ${refusedChange.text}`);
    }
    assert.equal((await read(spree, leaf.id)).role, 'leaf');

    // A cloud handover moves within the service's rules.
    const [roomiest] = await roomiestFrankfurtOfferings(1);
    const first = await connectionFor(spree, 'spree', roomiest);
    const nimbus = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-nimbus-fra',
      diversity: 2,
      cloud_key: 'nimbus-spree-0003',
    });
    const all = await created(
      spree,
      vcConfig('spree', 'cloud_vc', nimbus, first, { handover: 1, cloud_vlan: null }),
    );
    const picked = await created(
      spree,
      vcConfig('spree', 'cloud_vc', nimbus, first, { handover: 1, cloud_vlan: 300 }),
    );
    const pickedPath = `/network-service-configs/${picked.id}`;
    await conflicting(request('PATCH', pickedPath, { token: spree, body: { cloud_vlan: null } }), all.id);
    const moved = await request('PATCH', pickedPath, { token: spree, body: { handover: 2 } });
    assert.ok(propertyNames(moved).includes('connection'), moved.text);
    const beyond = await request('PATCH', pickedPath, { token: spree, body: { handover: 3 } });
    assert.ok(propertyNames(beyond).includes('handover'), beyond.text);
    const revisionBefore = await revision(picked.id);
    const repicked = await request('PATCH', pickedPath, { token: spree, body: { cloud_vlan: 301 } });
    assert.equal(repicked.status, 202, repicked.text);
    assert.equal(repicked.body.cloud_vlan, 301);
    assert.equal(await revision(picked.id), revisionBefore + 1);
    const stratus = await serviceFixture('cloud_vc', {
      product_offering: 'po-cloud-stratus-fra',
      diversity: 1,
      cloud_key: 'stratus-spree003',
    });
    const single = await created(
      spree,
      vcConfig('spree', 'cloud_vc', stratus, first, { handover: 1, cloud_vlan: null }),
    );
    const vlan = await request('PATCH', `/network-service-configs/${single.id}`, {
      token: spree,
      body: { cloud_vlan: 5 },
    });
    assert.ok(propertyNames(vlan).includes('cloud_vlan'), vlan.text);

    // An end of a circuit stays with a side of it.
    const resold = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      managing_account: TRANSIT,
      consuming_account: PETIT,
      joining_member_account: SPREE,
    });
    const end = await created(reseller, petitConfig('p2p_vc', resold, petitFra));
    const handedOn = await request('PATCH', `/network-service-configs/${end.id}`, {
      token: reseller,
      body: { consuming_account: TRANSIT },
    });
    assert.ok(propertyNames(handedOn).includes('consuming_account'), handedOn.text);
    assert.equal((await read(reseller, end.id)).consuming_account, PETIT);
  });

  it('limits a config’s rate to the least of its capacity, its service’s and its joining rule’s cap', async () => {
    const circuit = await serviceFixture('p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      joining_member_account: THAMES,
      capacity: 800,
    });
    const a = await created(spree, vcConfig('spree', 'p2p_vc', circuit, spreeFra));
    const b = await created(thames, vcConfig('thames', 'p2p_vc', circuit, thamesFra, { capacity: 500 }));
    const shared = await serviceFixture('mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra' });
    await joiningRule(shared, THAMES, 'allow', { capacity_max: 300 });
    const own = await created(spree, vcConfig('spree', 'mp2mp_vc', shared, spreeFra));
    const member = await created(
      thames,
      vcConfig('thames', 'mp2mp_vc', shared, thamesFra, { capacity: 1_000 }),
    );
    await reaches(spree, `/network-service-configs/${a.id}`, 'production');
    await reaches(thames, `/network-service-configs/${b.id}`, 'production');
    await reaches(spree, `/network-service-configs/${own.id}`, 'production');
    await reaches(thames, `/network-service-configs/${member.id}`, 'production');
    assert.equal(await rateLimitOf(spreeFra, a.id), 800, 'the circuit’s bandwidth');
    assert.equal(await rateLimitOf(thamesFra, b.id), 500, 'the end’s own capacity');
    assert.equal(await rateLimitOf(spreeFra, own.id), null, 'no limit anywhere');
    assert.equal(await rateLimitOf(thamesFra, member.id), 300, 'the rule’s cap over the config’s capacity');
    assert.equal((await read(thames, member.id)).capacity, 1_000, 'the config keeps what it asked for');
  });

  it('cancels a config by its policy, and asks every live config of a service to go with it', async () => {
    const shared = await serviceFixture('mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra', public: true });
    const own = await created(spree, vcConfig('spree', 'mp2mp_vc', shared, spreeFra));
    const member = await created(thames, vcConfig('thames', 'mp2mp_vc', shared, thamesFra));
    const early = await created(spree, vcConfig('spree', 'mp2mp_vc', shared, spreeFra));
    for (const [token, config] of [
      [spree, own],
      [thames, member],
      [spree, early],
    ] as const)
      await reaches(token, `/network-service-configs/${config.id}`, 'production');
    const policy = await request('GET', `/network-service-configs/${early.id}/cancellation-policy`, {
      token: spree,
    });
    assert.equal(policy.status, 200, policy.text);
    assert.equal(await retire(spree, early.id), 'decommissioned');
    assert.equal(
      (await request('DELETE', `/network-service-configs/${early.id}`, { token: spree })).body.state,
      'archived',
    );

    const { db } = stack();
    const messages = await db.sequelize.transaction((transaction) =>
      db.networkServiceConfigs.cascadeFromService(
        shared,
        { decommission_at: '2099-01-01', charged_until: '2099-01-01' },
        transaction,
      ),
    );
    assert.equal(messages.length, 2, 'one reconsideration for each live config');
    for (const [token, config] of [
      [spree, own],
      [thames, member],
    ] as const) {
      const going = await read(token, config.id);
      assert.equal(going.state, 'decommission_requested');
      assert.equal(going.decommission_at, '2099-01-01');
    }
    assert.equal((await read(spree, early.id)).state, 'archived', 'what is gone stays so');
    await decommissionNow(configWorkflowId(own.id));
    await decommissionNow(configWorkflowId(member.id));
    await reaches(spree, `/network-service-configs/${own.id}`, 'decommissioned');
    await reaches(thames, `/network-service-configs/${member.id}`, 'decommissioned');
  });
});
