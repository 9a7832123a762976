import assert from 'node:assert/strict';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { propertyNames, reaches } from './exchange-lan';
import { request } from './http';
import { stack } from './stack';
import { connectionFor, decommissionNow, roomiestFrankfurtOfferings, vcConfig } from './virtual-circuits';
import type { VirtualCircuitConfigs } from './virtual-circuit-configs';
import {
  SPREE,
  THAMES,
  PETIT,
  TRANSIT,
  sql,
  serviceFixture,
  joiningRule,
  petitConfig,
  rateLimitOf,
} from './virtual-circuit-configs';

/**
 * Changing and ending configs of virtual circuits: by PUT and PATCH, within their rate limits, and
 * cancelled by policy with the live configs of their service. Registered inside the describe of
 * test/integration/virtual-circuit-configs.test.ts, after its other tests.
 */
export function describeChangingConfigs(scope: VirtualCircuitConfigs): void {
  let spree: string;
  let thames: string;
  let reseller: string;
  let spreeFra: string;
  let thamesFra: string;
  let petitFra: string;
  let spreeMac: string;
  before(() => ({ spree, thames, reseller, spreeFra, thamesFra, petitFra, spreeMac } = scope));
  const { created, read, conflicting, retire } = scope;

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
    const [{ last }] = await sql<{ last: number | string | null }>(
      'SELECT MAX(id) AS last FROM workflow_outbox',
    );
    await db.sequelize.transaction((transaction) =>
      db.networkServiceConfigs.cascadeFromService(
        shared,
        { decommission_at: '2099-01-01', charged_until: '2099-01-01' },
        transaction,
      ),
    );
    const told = await sql<{ workflow_id: string }>(
      `SELECT workflow_id FROM workflow_outbox WHERE id > :last AND signal_name IS NOT NULL
         AND workflow_id IN (:configs) ORDER BY workflow_id`,
      { last: Number(last ?? 0), configs: [own, member, early].map((config) => configWorkflowId(config.id)) },
    );
    assert.deepEqual(
      told.map((row) => row.workflow_id),
      [own, member].map((config) => configWorkflowId(config.id)).sort(),
      'one reconsideration for each live config',
    );
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
}
