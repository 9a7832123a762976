import assert from 'node:assert/strict';
import { LabDriver } from '../../drivers/lab/driver';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { settleConnections } from '../support/connections';
import { configOrder, deviceOf, orderConnection, propertyNames, reaches } from '../support/exchange-lan';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import { connectionFor, roomiestFrankfurtOfferings, vcConfig } from '../support/virtual-circuits';
import { eventually } from '../support/wait';
import type { Config } from '../support/virtual-circuit-configs';
import {
  SPREE,
  THAMES,
  PETIT,
  TRANSIT,
  SHARED,
  OWN,
  sql,
  serviceFixture,
  joiningRule,
  configCount,
  petitConfig,
  lockWaits,
} from '../support/virtual-circuit-configs';
import { describeChangingConfigs } from '../support/virtual-circuit-config-changes';

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

  describeChangingConfigs({
    get spree() {
      return spree;
    },
    get thames() {
      return thames;
    },
    get reseller() {
      return reseller;
    },
    get spreeFra() {
      return spreeFra;
    },
    get thamesFra() {
      return thamesFra;
    },
    get petitFra() {
      return petitFra;
    },
    get spreeMac() {
      return spreeMac;
    },
    created,
    read,
    conflicting,
    retire,
  });
});
