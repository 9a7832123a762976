import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { CloudProviderError } from '../../drivers/cloud/contract';
import type { CloudProviderUnderTest } from '../contracts/cloud-provider-contract';
import { describeCloudProviderContract } from '../contracts/cloud-provider-contract';
import { createCustomerCircuit, LabCloudProvider } from '../../drivers/cloud/lab-provider';
import { DEMO_CLOUD_CIRCUITS, seedDemoCloudCircuits } from '../../db/seed/demo';
import { runAdmin } from '../support/admin';
import { stack } from '../support/stack';

interface Offering {
  provider: string;
  region: string;
  pop: string;
  bandwidth_max: number;
  diversity: number;
  provider_vlans: string;
  cloud_key_pattern: string | null;
}

async function offering(id: string): Promise<Offering> {
  const [row] = await stack().db.sequelize.query<Offering>(
    `SELECT service_provider AS provider, service_provider_region AS region, service_provider_pop AS pop,
       bandwidth_max, diversity, provider_vlans, cloud_key_pattern
     FROM product_offerings WHERE id = :id`,
    { replacements: { id }, type: QueryTypes.SELECT },
  );
  assert.ok(row, `the catalogue has ${id}`);
  return { ...row, bandwidth_max: Number(row.bandwidth_max), diversity: Number(row.diversity) };
}

async function devices(): Promise<[string, string]> {
  const rows = await stack().db.sequelize.query<{ id: string }>(
    'SELECT id FROM devices ORDER BY id LIMIT 2',
    {
      type: QueryTypes.SELECT,
    },
  );
  return [rows[0].id, rows[1].id];
}

/** Fails unless `action` is refused with a CloudProviderError of `code`. */
const refusedAs =
  (code: string, retryable = false) =>
  (error: unknown) =>
    error instanceof CloudProviderError && error.code === code && error.retryable === retryable;

describeCloudProviderContract('lab', async (): Promise<CloudProviderUnderTest> => {
  const nimbus = await offering('po-cloud-nimbus-fra');
  const stratus = await offering('po-cloud-stratus-fra');
  return {
    cloud: new LabCloudProvider(stack().db.sequelize),
    exchangeFirst: {
      provider: nimbus.provider,
      region: nimbus.region,
      pop: nimbus.pop,
      customerKey: 'nimbus-account-4711',
      bandwidthLimit: nimbus.bandwidth_max,
      handovers: nimbus.diversity,
    },
    providerFirst: { provider: stratus.provider, region: stratus.region, pop: stratus.pop },
    customerCircuit: async (bandwidth) =>
      (
        await createCustomerCircuit(stack().db.sequelize, {
          provider: stratus.provider,
          pop: stratus.pop,
          bandwidth,
        })
      ).key,
    devices: await devices(),
  };
});

describe('the lab cloud providers', () => {
  let cloud: LabCloudProvider;
  let nimbus: Offering;
  let stratus: Offering;
  let device: string;

  before(async () => {
    cloud = new LabCloudProvider(stack().db.sequelize);
    nimbus = await offering('po-cloud-nimbus-fra');
    stratus = await offering('po-cloud-stratus-fra');
    [device] = await devices();
  });

  afterEach(() => cloud.clearFaults());

  const nimbusRequest = (requestKey: string) => ({
    requestKey,
    provider: nimbus.provider,
    customerKey: 'nimbus-account-4711',
    region: nimbus.region,
    pop: nimbus.pop,
    bandwidth: 1000,
    handovers: 2,
    vlans: 'multi' as const,
  });
  const customerCircuit = (order: Partial<Parameters<typeof createCustomerCircuit>[1]> = {}) =>
    createCustomerCircuit(stack().db.sequelize, {
      provider: stratus.provider,
      pop: stratus.pop,
      bandwidth: 1000,
      ...order,
    });

  it("makes customers' circuits with keys of the provider's form, at the PoP's region, handovers and VLAN mode", async () => {
    const made = await customerCircuit({ bandwidth: 2000 });
    assert.match(made.key, /^stratus-[a-z0-9]{8}$/);
    assert.match(made.key, new RegExp(stratus.cloud_key_pattern!), "the offering's pattern");
    assert.deepEqual(
      { ...made, ref: undefined, key: undefined },
      {
        ref: undefined,
        key: undefined,
        provider: 'Stratus Compute',
        region: stratus.region,
        pop: stratus.pop,
        bandwidth: 2000,
        bandwidthLimit: 2000,
        handovers: stratus.diversity,
        vlans: 'single',
        state: 'pending',
        connected: [],
        attachments: [],
        origin: 'customer',
      },
    );
    assert.deepEqual(await cloud.findCircuit('Stratus Compute', made.key), made);
    const named = await customerCircuit({ key: 'stratus-named001', region: stratus.region });
    assert.equal(named.key, 'stratus-named001');
    const atNimbus = await createCustomerCircuit(stack().db.sequelize, {
      provider: nimbus.provider,
      pop: nimbus.pop,
      bandwidth: 100,
    });
    assert.match(atNimbus.key, /^nimbus-[a-z0-9]{8}$/);
    assert.deepEqual(
      { handovers: atNimbus.handovers, vlans: atNimbus.vlans },
      { handovers: 2, vlans: 'multi' },
    );
  });

  it("refuses customers' circuits a provider would not make, and a key taken", async () => {
    await customerCircuit({ key: 'stratus-taken001' });
    await assert.rejects(customerCircuit({ key: 'stratus-taken001' }), refusedAs('conflict'));
    const refusals = [
      { key: 'nimbus-abcd1234' },
      { key: 'stratus-ABCD1234' },
      { key: 'stratus-abcd123' },
      { pop: 'stratus-ham1' },
      { pop: nimbus.pop },
      { provider: 'Cumulus Hosting' },
      { region: 'nl-central-1' },
      { bandwidth: 0 },
      { bandwidth: stratus.bandwidth_max + 1 },
    ];
    for (const order of refusals)
      await assert.rejects(customerCircuit(order), refusedAs('invalid-request'), JSON.stringify(order));
  });

  it("seeds the demo customer's circuits once, as the provider makes them", async () => {
    const at = (pop: string) => (pop === stratus.pop ? 'po-cloud-stratus-fra' : 'po-cloud-stratus-ams');
    for (const demo of DEMO_CLOUD_CIRCUITS) {
      const seeded = await cloud.findCircuit(demo.provider, demo.key);
      assert.ok(seeded, `${demo.key} is seeded`);
      const site = await offering(at(demo.pop));
      const made = await createCustomerCircuit(stack().db.sequelize, {
        provider: demo.provider,
        pop: demo.pop,
        bandwidth: demo.bandwidth,
      });
      assert.deepEqual(
        { ...seeded, ref: made.ref, key: made.key },
        made,
        'seeded like a circuit the provider makes',
      );
      assert.deepEqual(
        { pop: seeded.pop, region: seeded.region, bandwidth: seeded.bandwidth },
        { pop: demo.pop, region: site.region, bandwidth: 1000 },
      );
    }
    assert.deepEqual(
      DEMO_CLOUD_CIRCUITS.map((demo) => [demo.key, demo.pop]),
      [
        ['stratus-spree001', 'stratus-fra1'],
        ['stratus-spree002', 'stratus-ams1'],
      ],
    );
    const before = await Promise.all(
      DEMO_CLOUD_CIRCUITS.map((demo) => cloud.findCircuit(demo.provider, demo.key)),
    );
    await seedDemoCloudCircuits(stack().db.sequelize);
    await seedDemoCloudCircuits(stack().db.sequelize);
    const [{ count }] = await stack().db.sequelize.query<{ count: number }>(
      "SELECT COUNT(*) AS count FROM lab_cloud_circuits WHERE service_key LIKE 'stratus-spree%'",
      { type: QueryTypes.SELECT },
    );
    assert.equal(Number(count), DEMO_CLOUD_CIRCUITS.length);
    assert.deepEqual(
      await Promise.all(DEMO_CLOUD_CIRCUITS.map((demo) => cloud.findCircuit(demo.provider, demo.key))),
      before,
    );
  });

  it('fails retryably while a provider is down, for that provider only, then answers again', async () => {
    const made = await cloud.createCircuit(nimbusRequest(`lab-down-${Date.now()}`));
    const customers = await customerCircuit();
    await cloud.injectFault({
      provider: nimbus.provider,
      operation: 'readCircuit',
      code: 'unreachable',
      times: 2,
    });
    for (let i = 0; i < 2; i += 1)
      await assert.rejects(cloud.readCircuit(made.ref), refusedAs('unreachable', true));
    assert.deepEqual(await cloud.readCircuit(customers.ref), customers, 'another provider answers');
    assert.deepEqual(await cloud.readCircuit(made.ref), made, 'the fault applied twice');
  });

  it('finds the circuit a request made when the answer was lost, and makes no second one', async () => {
    const requestKey = `lab-lost-${Date.now()}`;
    await cloud.injectFault({ operation: 'createCircuit', code: 'timeout', afterWork: true });
    await assert.rejects(cloud.createCircuit(nimbusRequest(requestKey)), refusedAs('timeout', true));
    const made = await cloud.createCircuit(nimbusRequest(requestKey));
    const [{ count }] = await stack().db.sequelize.query<{ count: number }>(
      'SELECT COUNT(*) AS count FROM lab_cloud_circuits WHERE request_key = :requestKey',
      { replacements: { requestKey }, type: QueryTypes.SELECT },
    );
    assert.equal(Number(count), 1);

    await cloud.injectFault({
      provider: nimbus.provider,
      operation: 'connectHandover',
      code: 'timeout',
      afterWork: true,
    });
    await assert.rejects(
      cloud.connectHandover(made.ref, 1, { device, vlan: 42 }),
      refusedAs('timeout', true),
    );
    const connected = await cloud.connectHandover(made.ref, 1, { device, vlan: 42 });
    assert.deepEqual(connected.attachments, [{ handover: 1, device, vlan: 42 }], 'connected once');
  });

  it('does nothing for a call that fails before the provider gets to it', async () => {
    const { ref } = await customerCircuit();
    await cloud.injectFault({ provider: stratus.provider, operation: 'acceptCircuit', code: 'unreachable' });
    await assert.rejects(
      cloud.acceptCircuit(ref, { requestKey: `lab-first-${ref}` }),
      refusedAs('unreachable', true),
    );
    assert.equal((await cloud.readCircuit(ref))?.state, 'pending', 'nothing was accepted');
    const accepted = await cloud.acceptCircuit(ref, { requestKey: `lab-second-${ref}` });
    assert.equal(accepted.state, 'accepted');
  });

  describe('the admin command', function () {
    this.timeout(60_000);
    const admin = runAdmin;

    it('makes a circuit as a customer would and prints its key', async () => {
      const result = await admin([
        'lab-cloud-circuit',
        '--provider',
        'Stratus Compute',
        '--pop',
        'stratus-fra1',
        '--bandwidth',
        '1000',
      ]);
      assert.equal(result.code, 0, result.stderr);
      const [, key] = /^key\s+(\S+)$/m.exec(result.stdout) ?? [];
      assert.match(key, /^stratus-[a-z0-9]{8}$/);
      const circuit = await cloud.findCircuit('Stratus Compute', key);
      assert.deepEqual(
        { pop: circuit?.pop, bandwidth: circuit?.bandwidth, state: circuit?.state },
        { pop: 'stratus-fra1', bandwidth: 1000, state: 'pending' },
      );
    });

    it('says what is wrong with a circuit the provider would not make, or with the options', async () => {
      const refused = await admin([
        'lab-cloud-circuit',
        '--provider',
        'Stratus Compute',
        '--pop',
        'nowhere',
        '--bandwidth',
        '10',
      ]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /Stratus Compute has no PoP "nowhere"/);
      const usage = await admin([
        'lab-cloud-circuit',
        '--provider',
        'Stratus Compute',
        '--pop',
        'stratus-fra1',
        '--bandwidth',
        'fast',
      ]);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /--bandwidth must be a whole number/);
    });
  });
});
