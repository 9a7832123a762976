import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import type { StatusEntry } from '../../domain/status';
import { LabDriver } from '../../drivers/lab/driver';
import { LabCloudProvider, createCustomerCircuit } from '../../drivers/cloud/lab-provider';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { serviceWorkflowId } from '../../db/repositories/network-service-repository';
import { settleConnections } from '../support/connections';
import { deviceOf, propertyNames, reaches } from '../support/exchange-lan';
import { recordHistory } from '../support/histories';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import {
  connectionFor,
  CUSTOMERS,
  decommissionNow,
  roomiestFrankfurtOfferings,
  serviceOrder,
  vcConfig,
} from '../support/virtual-circuits';
import { eventually } from '../support/wait';

const SPREE = CUSTOMERS.spree.account;
const THAMES = CUSTOMERS.thames.account;

interface Service {
  id: string;
  type: string;
  state: string;
  capacity?: number | null;
  product_offering: string;
  billing_account: string;
  provider_ref?: string | null;
  status: Array<{ tag: string; message: string }>;
}

async function serviceCount(): Promise<number> {
  const [row] = await stack().db.sequelize.query<{ n: number }>(
    "SELECT COUNT(*) AS n FROM network_services WHERE type <> 'exchange_lan'",
    { type: QueryTypes.SELECT },
  );
  return Number(row.n);
}

/** The rate limit the lab device applies to a config. */
async function rateLimitOf(connection: string, config: string): Promise<number | null | undefined> {
  const [found] = await new LabDriver(stack().db.sequelize).readServices(await deviceOf(connection), [
    config,
  ]);
  return found?.rateLimit;
}

describe('network services ordered by customers', function () {
  this.timeout(240_000);
  after(() => settleConnections());
  let spree: string;
  let thames: string;
  let reseller: string;
  let spreeConnection: string;
  let thamesConnection: string;

  const order = async (token: string, body: Record<string, unknown>) => {
    const created = await request('POST', '/network-services', { token, body });
    assert.equal(created.status, 201, created.text);
    return created.body as Service;
  };
  const configure = async (token: string, body: Record<string, unknown>) => {
    const created = await request('POST', '/network-service-configs', { token, body });
    assert.equal(created.status, 201, created.text);
    return created.body.id as string;
  };

  before(async () => {
    spree = (await login('customer', 0)).accessToken;
    thames = (await login('customer', 1)).accessToken;
    reseller = (await login('reseller', 0)).accessToken;
    spreeConnection = await connectionFor(spree, 'spree');
    thamesConnection = await connectionFor(thames, 'thames');
  });

  it('refuses orders that break a rule with a 400 naming the property, and stores nothing', async () => {
    const before = await serviceCount();
    const p2p = serviceOrder('spree', 'p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      joining_member_account: THAMES,
    });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...p2p, product_offering: 'po-mp2mp-vc-fra' }, 'product_offering'],
      [{ ...p2p, product_offering: 'po-nowhere' }, 'product_offering'],
      [{ ...p2p, capacity: 50 }, 'capacity'],
      [{ ...p2p, capacity: 100_001 }, 'capacity'],
      [{ ...p2p, joining_member_account: SPREE }, 'joining_member_account'],
      [{ ...p2p, joining_member_account: 'acc-nobody' }, 'joining_member_account'],
      [{ ...p2p, managing_account: THAMES }, 'managing_account'],
      [{ ...p2p, billing_account: THAMES }, 'billing_account'],
      [
        serviceOrder('spree', 'cloud_vc', {
          product_offering: 'po-cloud-stratus-fra',
          cloud_key: 'nimbus-12345678',
        }),
        'cloud_key',
      ],
    ];
    for (const [body, property] of cases) {
      const refused = await request('POST', '/network-services', { token: spree, body });
      assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
      assert.ok(propertyNames(refused).includes(property), `${property}: ${refused.text}`);
    }
    const lan = await request('POST', '/network-services', {
      token: spree,
      body: { ...p2p, type: 'exchange_lan' },
    });
    assert.equal(lan.status, 400, lan.text);
    assert.equal(await serviceCount(), before);
  });

  it('takes a p2p circuit between two customers to production, through a change request, and decommissions it with both ends', async () => {
    const created = await order(
      spree,
      serviceOrder('spree', 'p2p_vc', {
        product_offering: 'po-p2p-vc-fra',
        joining_member_account: THAMES,
        capacity: 1000,
        display_name: 'Spree to Thames',
      }),
    );
    assert.equal(created.state, 'requested');
    const path = `/network-services/${created.id}`;

    // The B side sees the circuit without the A side's billing; others do not see it at all.
    const seen = await request('GET', path, { token: thames });
    assert.equal(seen.status, 200, seen.text);
    assert.equal(seen.body.billing_account, '');
    assert.equal(seen.body.joining_member_account, THAMES);
    assert.equal((await request('GET', path, { token: reseller })).status, 404);
    assert.equal((await request('PATCH', path, { token: thames, body: { capacity: 200 } })).status, 403);

    await eventually('the circuit waits for its ends', async () => {
      const body = (await request('GET', path, { token: spree })).body as Service;
      return body.status.some((s) => s.tag === 'waiting_for_configs') ? true : undefined;
    });
    const a = await configure(spree, vcConfig('spree', 'p2p_vc', created.id, spreeConnection));
    const b = await configure(thames, vcConfig('thames', 'p2p_vc', created.id, thamesConnection));
    await reaches(spree, `/network-service-configs/${a}`, 'production');
    await reaches(thames, `/network-service-configs/${b}`, 'production');
    await reaches(spree, path, 'production');
    await eventually('the circuit’s bandwidth on both ends', async () =>
      (await rateLimitOf(spreeConnection, a)) === 1000 && (await rateLimitOf(thamesConnection, b)) === 1000
        ? true
        : undefined,
    );

    // Only the B side asks for a change, one at a time.
    const ask = { product_offering: 'po-p2p-vc-fra', capacity: 2000 };
    const fromA = await request('POST', `${path}/change-request`, { token: spree, body: ask });
    assert.equal(fromA.status, 403, fromA.text);
    const same = await request('POST', `${path}/change-request`, {
      token: thames,
      body: { product_offering: 'po-p2p-vc-fra', capacity: 1000 },
    });
    assert.equal(same.status, 400, same.text);
    const elsewhere = await request('POST', `${path}/change-request`, {
      token: thames,
      body: { product_offering: 'po-p2p-vc-ams', capacity: 2000 },
    });
    assert.ok(propertyNames(elsewhere).includes('product_offering'), elsewhere.text);
    const asked = await request('POST', `${path}/change-request`, { token: thames, body: ask });
    assert.equal(asked.status, 202, asked.text);
    assert.deepEqual(asked.body, ask);
    assert.equal((await request('GET', path, { token: spree })).body.state, 'production_change_pending');
    for (const token of [spree, thames]) {
      const open = await request('GET', `${path}/change-request`, { token });
      assert.equal(open.status, 200, open.text);
      assert.deepEqual(open.body, ask);
    }
    const twice = await request('POST', `${path}/change-request`, { token: thames, body: ask });
    assert.equal(twice.status, 400, twice.text);
    assert.equal(twice.body.conflicts?.[0]?.resource_id, created.id, twice.text);

    // The A side accepts by applying exactly what was asked.
    const other = await request('PATCH', path, { token: spree, body: { capacity: 1500 } });
    assert.ok(propertyNames(other).includes('capacity'), other.text);
    const accepted = await request('PATCH', path, { token: spree, body: { capacity: 2000 } });
    assert.equal(accepted.status, 202, accepted.text);
    const changed = (await reaches(spree, path, 'production')) as unknown as Service;
    assert.equal(changed.capacity, 2000);
    assert.equal((await request('GET', `${path}/change-request`, { token: thames })).status, 404);
    await eventually('the new bandwidth on both ends', async () =>
      (await rateLimitOf(spreeConnection, a)) === 2000 && (await rateLimitOf(thamesConnection, b)) === 2000
        ? true
        : undefined,
    );

    // A second request, rejected by the A side: the circuit stays as it is.
    const again = await request('POST', `${path}/change-request`, {
      token: thames,
      body: { product_offering: 'po-p2p-vc-fra', capacity: 500 },
    });
    assert.equal(again.status, 202, again.text);
    const rejected = await request('DELETE', `${path}/change-request`, { token: spree });
    assert.equal(rejected.status, 202, rejected.text);
    assert.equal(((await reaches(spree, path, 'production')) as unknown as Service).capacity, 2000);
    await recordHistory('provisionNetworkService', 'change', serviceWorkflowId(created.id));

    // Decommissioned with both ends.
    const deleted = await request('DELETE', path, { token: spree });
    assert.equal(deleted.status, 202, deleted.text);
    assert.equal(deleted.body.state, 'decommission_requested');
    for (const [token, config] of [
      [spree, a],
      [thames, b],
    ])
      assert.equal(
        (await request('GET', `/network-service-configs/${config}`, { token })).body.state,
        'decommission_requested',
      );
    await decommissionNow(configWorkflowId(a));
    await decommissionNow(configWorkflowId(b));
    await decommissionNow(serviceWorkflowId(created.id));
    await reaches(spree, `/network-service-configs/${a}`, 'decommissioned');
    await reaches(thames, `/network-service-configs/${b}`, 'decommissioned');
    await reaches(spree, path, 'decommissioned');
    await recordHistory('provisionNetworkService', 'decommission', serviceWorkflowId(created.id));
    assert.equal((await request('DELETE', path, { token: spree })).body.state, 'archived');
  });

  it('admits to a private multipoint service only the accounts its rules allow, capped by their rules', async () => {
    const service = await order(
      spree,
      serviceOrder('spree', 'mp2mp_vc', {
        product_offering: 'po-mp2mp-vc-fra',
        display_name: 'Spree private',
      }),
    );
    const path = `/network-services/${service.id}`;
    assert.equal((await request('GET', path, { token: thames })).status, 404, 'private: unseen');
    const unknown = await request('POST', '/network-service-configs', {
      token: thames,
      body: vcConfig('thames', 'mp2mp_vc', service.id, thamesConnection),
    });
    assert.ok(propertyNames(unknown).includes('network_service'), unknown.text);

    const rule = await request('POST', '/member-joining-rules', {
      token: spree,
      body: {
        type: 'allow',
        network_service: service.id,
        consuming_account: THAMES,
        managing_account: SPREE,
        capacity_max: 500,
      },
    });
    assert.equal(rule.status, 201, rule.text);
    const member = await request('GET', path, { token: thames });
    assert.equal(member.status, 200, member.text);
    assert.deepEqual(member.body.member_joining_rules, [], 'a member does not see the rules');
    assert.deepEqual((await request('GET', path, { token: spree })).body.member_joining_rules, [
      rule.body.id,
    ]);
    const own = await configure(spree, vcConfig('spree', 'mp2mp_vc', service.id, spreeConnection));
    const joined = await configure(
      thames,
      vcConfig('thames', 'mp2mp_vc', service.id, thamesConnection, { capacity: 1000 }),
    );
    await reaches(thames, `/network-service-configs/${joined}`, 'production');
    await reaches(spree, `/network-service-configs/${own}`, 'production');
    assert.equal(await rateLimitOf(thamesConnection, joined), 500, 'the rule caps the member');
    await reaches(spree, path, 'production');
    await recordHistory('provisionNetworkService', 'production', serviceWorkflowId(service.id));

    const outsider = await request('POST', '/network-service-configs', {
      token: reseller,
      body: {
        ...vcConfig('thames', 'mp2mp_vc', service.id, thamesConnection),
        managing_account: 'acc-petit-reseau',
        consuming_account: 'acc-petit-reseau',
        billing_account: 'acc-petit-reseau',
      },
    });
    assert.equal(outsider.status, 400, outsider.text);
  });

  it('ends services deleted right after their order, however the workflow was busy then', async () => {
    // Deletes that come while the workflow moves the service on, or with its look at the configs,
    // must not be lost.
    const orders = await Promise.all(
      [0, 1, 2, 3].map(() =>
        order(spree, serviceOrder('spree', 'mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra' })),
      ),
    );
    for (const [index, service] of orders.entries()) {
      await new Promise((resolve) => setTimeout(resolve, index * 100));
      const deleted = await request('DELETE', `/network-services/${service.id}`, { token: spree });
      assert.equal(deleted.status, 202, deleted.text);
      // Going like a live one, on the day its policy gives (today: nothing was billed).
      assert.equal(deleted.body.state, 'decommission_requested', deleted.text);
      assert.equal(deleted.body.charged_until, deleted.body.decommission_at, deleted.text);
    }
    for (const service of orders) await reaches(spree, `/network-services/${service.id}`, 'decommissioned');
    await recordHistory(
      'provisionNetworkService',
      'cancel-before-production',
      serviceWorkflowId(orders[3].id),
    );
  });

  it('keeps a deleted service from saying it waits for configs, whatever its workflow records after', async () => {
    const service = await order(
      spree,
      serviceOrder('spree', 'mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra' }),
    );
    const waiting = await eventually(`service ${service.id} saying it waits for configs`, async () => {
      const read = await request('GET', `/network-services/${service.id}`, { token: spree });
      return (read.body as Service).status.find((e) => e.tag === 'waiting_for_configs') as
        StatusEntry | undefined;
    });
    // While it is provisioned, what the workflow records is what the service shows.
    const again = { ...waiting, message: 'Still waiting for a first member.' };
    await stack().db.networkServices.recordStatus(service.id, [again]);
    const before = await request('GET', `/network-services/${service.id}`, { token: spree });
    assert.deepEqual(
      (before.body as Service).status.map((e) => e.message),
      [again.message],
    );

    const deleted = await request('DELETE', `/network-services/${service.id}`, { token: spree });
    assert.equal(deleted.status, 202, deleted.text);
    // A workflow that looked at the configs just before the DELETE records its waiting status late.
    await stack().db.networkServices.recordStatus(service.id, [waiting]);
    const after = await request('GET', `/network-services/${service.id}`, { token: spree });
    assert.deepEqual(
      (after.body as Service).status.filter((e) => e.tag === 'waiting_for_configs'),
      [],
      `deleted service ${service.id} says it waits for configs: ${after.text}`,
    );
    await reaches(spree, `/network-services/${service.id}`, 'decommissioned');
  });

  describe('cloud services', () => {
    it('gets an exchange-first circuit at the provider and goes live with two handovers on distinct devices', async () => {
      const [roomiest, next] = await roomiestFrankfurtOfferings();
      const first = await connectionFor(spree, 'spree', roomiest);
      const second = await connectionFor(spree, 'spree', next);
      assert.notEqual(await deviceOf(first), await deviceOf(second));
      const service = await order(
        spree,
        serviceOrder('spree', 'cloud_vc', {
          product_offering: 'po-cloud-nimbus-fra',
          cloud_key: 'nimbus-account-4711',
          capacity: 1000,
        }),
      );
      const path = `/network-services/${service.id}`;
      assert.equal((await request('GET', path, { token: spree })).body.diversity, 2);
      const handover1 = await configure(
        spree,
        vcConfig('spree', 'cloud_vc', service.id, first, { handover: 1, cloud_vlan: null }),
      );
      await reaches(spree, `/network-service-configs/${handover1}`, 'production');
      // Its status follows each end going live: it waits for the second handover only.
      await eventually('the service waiting for handover 2 only', async () => {
        const waiting = (await request('GET', path, { token: spree })).body as Service;
        return waiting.state === 'allocated' &&
          waiting.status.length === 1 &&
          waiting.status[0].tag === 'waiting_for_configs' &&
          waiting.status[0].message.includes('handover 2') &&
          !waiting.status[0].message.includes('handover 1')
          ? true
          : undefined;
      });
      const same = await request('POST', '/network-service-configs', {
        token: spree,
        body: vcConfig('spree', 'cloud_vc', service.id, first, { handover: 2, cloud_vlan: null }),
      });
      assert.ok(propertyNames(same).includes('connection'), same.text);
      const handover2 = await configure(
        spree,
        vcConfig('spree', 'cloud_vc', service.id, second, { handover: 2, cloud_vlan: null }),
      );
      await reaches(spree, `/network-service-configs/${handover1}`, 'production');
      await reaches(spree, `/network-service-configs/${handover2}`, 'production');
      const live = (await reaches(spree, path, 'production')) as unknown as Service;
      assert.ok(live.provider_ref, 'the exchange filled in the provider’s reference');
      const circuit = await new LabCloudProvider(stack().db.sequelize).readCircuit(live.provider_ref);
      assert.deepEqual(circuit?.connected, [1, 2]);
    });

    it('takes over a provider-first circuit by its key and goes live with one handover', async () => {
      const service = await order(
        spree,
        serviceOrder('spree', 'cloud_vc', {
          product_offering: 'po-cloud-stratus-fra',
          cloud_key: 'stratus-spree001',
        }),
      );
      const path = `/network-services/${service.id}`;
      const single = await request('POST', '/network-service-configs', {
        token: spree,
        body: vcConfig('spree', 'cloud_vc', service.id, spreeConnection, { handover: 1, cloud_vlan: 10 }),
      });
      assert.ok(propertyNames(single).includes('cloud_vlan'), single.text);
      const config = await configure(
        spree,
        vcConfig('spree', 'cloud_vc', service.id, spreeConnection, { handover: 1, cloud_vlan: null }),
      );
      await reaches(spree, `/network-service-configs/${config}`, 'production');
      const live = (await reaches(spree, path, 'production')) as unknown as Service;
      assert.ok(live.provider_ref);
      const circuit = await new LabCloudProvider(stack().db.sequelize).readCircuit(live.provider_ref);
      assert.equal(circuit?.key, 'stratus-spree001');
      assert.deepEqual(circuit?.connected, [1]);
    });

    it('puts a service the provider refuses in error, and orders the circuit again when an operator asks', async () => {
      const cloud = new LabCloudProvider(stack().db.sequelize);
      const { key } = await createCustomerCircuit(stack().db.sequelize, {
        provider: 'Stratus Compute',
        pop: 'stratus-fra1',
        bandwidth: 1000,
      });
      await cloud.injectFault({
        provider: 'Stratus Compute',
        operation: 'acceptCircuit',
        code: 'conflict',
        message: 'the circuit is being moved',
      });
      try {
        const service = await order(
          spree,
          serviceOrder('spree', 'cloud_vc', { product_offering: 'po-cloud-stratus-fra', cloud_key: key }),
        );
        const path = `/network-services/${service.id}`;
        const failed = (await reaches(spree, path, 'error')) as unknown as Service;
        assert.equal(failed.status[0].tag, 'configuration_failed');
        assert.match(failed.status[0].message, /being moved.*retryProvisioning/);
        await stack()
          .temporal.client.workflow.getHandle(serviceWorkflowId(service.id))
          .signal('retryProvisioning');
        const config = await configure(
          spree,
          vcConfig('spree', 'cloud_vc', service.id, spreeConnection, { handover: 1, cloud_vlan: null }),
        );
        await reaches(spree, `/network-service-configs/${config}`, 'production');
        const live = (await reaches(spree, path, 'production')) as unknown as Service;
        assert.equal((await cloud.readCircuit(live.provider_ref!))?.key, key);
        await recordHistory('provisionNetworkService', 'error-retry', serviceWorkflowId(service.id));
      } finally {
        await cloud.clearFaults();
      }
    });

    it('puts a provider-first service whose key the provider does not know in error, saying so', async () => {
      const service = await order(
        spree,
        serviceOrder('spree', 'cloud_vc', {
          product_offering: 'po-cloud-stratus-fra',
          cloud_key: 'stratus-zz999999',
        }),
      );
      const failed = (await reaches(spree, `/network-services/${service.id}`, 'error')) as unknown as Service;
      assert.ok(
        failed.status.some((s) => s.message.includes('stratus-zz999999')),
        JSON.stringify(failed.status),
      );
    });
  });
});
