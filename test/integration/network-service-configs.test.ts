import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { LabDriver } from '../../drivers/lab/driver';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { parseAddress, parsePrefix, prefixContains } from '../../domain/ip-addresses';
import { settleConnections } from '../support/connections';
import {
  configOrder,
  deviceOf,
  FRA_LAN,
  liveConnection,
  orderConnection,
  propertyNames,
  reaches,
  SPREE,
} from '../support/exchange-lan';
import { recordHistory } from '../support/histories';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const LAN = FRA_LAN;

interface Config {
  id: string;
  state: string;
  vlan_config: { vlan_type: string; vlan?: number | null };
  ips: string[];
  macs: string[];
  status: Array<{ tag: string; message: string }>;
}

describe('exchange-LAN network service configs', function () {
  this.timeout(120_000);
  after(() => settleConnections());
  let token: string;
  let other: string;
  const order = configOrder;
  const read = async (id: string) =>
    (await request('GET', `/network-service-configs/${id}`, { token })).body as Config;
  const reached = async (id: string, state: string) =>
    (await reaches(token, `/network-service-configs/${id}`, state)) as unknown as Config;
  const mac = async (address: string) => {
    const created = await request('POST', '/macs', {
      token,
      body: { managing_account: SPREE, consuming_account: SPREE, address },
    });
    assert.equal(created.status, 201, created.text);
    return created.body.id as string;
  };

  before(async () => {
    token = (await login('customer', 0)).accessToken;
    other = (await login('customer', 1)).accessToken;
  });

  it('orders exchange-LAN access: a VLAN, an IPv4 and an IPv6 address, the device configured, production', async () => {
    const connection = await liveConnection(token);
    const created = await request('POST', '/network-service-configs', { token, body: order(connection) });
    assert.equal(created.status, 201, created.text);
    const config = created.body as Config;
    assert.equal(config.state, 'requested');
    assert.equal(config.vlan_config.vlan_type, 'dot1q');
    assert.ok(typeof config.vlan_config.vlan === 'number', 'the exchange chose a VLAN');
    assert.equal(config.ips.length, 2);
    const ips = (await request('GET', `/ips?network_service_config=${config.id}`, { token })).body as Array<{
      id: string;
      version: number;
      address: string;
      prefix_length: number;
    }>;
    assert.deepEqual(ips.map((ip) => ip.id).sort(), [...config.ips].sort());
    const [service] = (await request('GET', `/network-services?id=${LAN}`, { token })).body as Array<{
      subnet_v4: string;
      subnet_v6: string;
    }>;
    for (const ip of ips) {
      const subnet = parsePrefix(ip.version === 4 ? service.subnet_v4 : service.subnet_v6)!;
      const parsed = parseAddress(ip.address)!;
      assert.ok(prefixContains(subnet, parsed.version, parsed.value), `${ip.address} in its subnet`);
      assert.equal(ip.prefix_length, subnet.length);
    }
    assert.deepEqual(ips.map((ip) => ip.version).sort(), [4, 6]);
    const live = await reached(config.id, 'production');
    assert.deepEqual(live.ips, config.ips);
    await recordHistory('provisionNetworkServiceConfig', 'production', configWorkflowId(config.id));
    const [carried] = await new LabDriver(stack().db.sequelize).readServices(await deviceOf(connection), [
      config.id,
    ]);
    assert.equal(carried.vlanType, 'dot1q');
    assert.equal(carried.outerVlan, config.vlan_config.vlan);
    // The config answers its statistics: every sliding window, each holding its accuracy. (Whether
    // samples have arrived yet depends on the collector's rounds, which tests do not time.)
    const statistics = await request('GET', `/network-service-configs/${config.id}/statistics`, { token });
    assert.equal(statistics.status, 200, statistics.text);
    const aggregates = (statistics.body as { aggregates: Record<string, { accuracy: number }> }).aggregates;
    assert.deepEqual(Object.keys(aggregates).sort(), ['P1D', 'P1Y', 'P30D', 'P7D', 'PT1H', 'PT5M']);
    for (const aggregate of Object.values(aggregates))
      assert.ok(aggregate.accuracy >= 0 && aggregate.accuracy <= 1);
    assert.equal(
      (await request('GET', `/network-service-configs/${config.id}/statistics`, { token: other })).status,
      404,
    );
    const capacity = await request('GET', `/connections/${connection}`, { token });
    assert.equal(capacity.body.capacity_allocated, 0, 'a config without a limit books no capacity');
    assert.equal(
      (await request('GET', `/network-service-configs/${config.id}`, { token: other })).status,
      404,
    );
    assert.ok(
      !((await request('GET', '/ips', { token: other })).body as Array<{ id: string }>).some((ip) =>
        config.ips.includes(ip.id),
      ),
    );
    const events = await readEvents<{ type: string; payload: { id?: string; to?: string } }>(token);
    const story = events.filter((e) => e.payload.id === config.id).map((e) => e.payload.to);
    assert.deepEqual(story, ['allocated', 'testing', 'production']);
  });

  it('refuses orders that break a rule, naming the property, and stores nothing', async () => {
    const connection = await liveConnection(token);
    const foreignMac = await request('POST', '/macs', {
      token: other,
      body: {
        managing_account: 'acc-thames-cloud',
        consuming_account: 'acc-thames-cloud',
        address: '02:de:ad:00:00:01',
      },
    });
    const cases: Array<[string, Record<string, unknown>]> = [
      ['network_service', { network_service: 'ns-nowhere' }],
      ['connection', { connection: 'conn-nowhere' }],
      ['connection', { network_service: 'ns-exchange-lan-ams' }],
      ['capacity', { capacity: 10 }],
      ['capacity', { capacity: 500_000 }],
      ['capacity', { capacity: 20_000 }],
      ['asns', { asns: [] }],
      ['asns.0', { asns: [23456] }],
      ['macs.0', { macs: [foreignMac.body.id ?? 'mac-nowhere'] }],
      ['role_assignments', { role_assignments: ['ra-spree-networks-noc'] }],
      ['product_offering', { product_offering: 'po-exchange-lan-ams' }],
      ['vlan_config.vlan_ethertype', { vlan_config: { vlan_type: 'dot1q', vlan_ethertype: '0x88a8' } }],
    ];
    for (const [property, extra] of cases) {
      const refused = await request('POST', '/network-service-configs', {
        token,
        body: order(connection, extra),
      });
      assert.equal(refused.status, 400, `${property}: ${refused.text}`);
      assert.ok(propertyNames(refused).includes(property), `${property}: ${refused.text}`);
    }
    const none = await request('GET', `/network-service-configs?connection=${connection}`, { token });
    assert.deepEqual(none.body, []);
    // An empty list of contacts names nobody: it matches nothing.
    for (const collection of ['network-service-configs', 'connections'])
      assert.deepEqual((await request('GET', `/${collection}?contacts=`, { token })).body, []);
  });

  it('keeps VLANs unique on a connection and addresses unique on the LAN under 20 concurrent orders', async () => {
    const connections = [await liveConnection(token), await liveConnection(token)];
    const orders = await Promise.all(
      [...Array(20).keys()].map((i) =>
        request('POST', '/network-service-configs', { token, body: order(connections[i % 2]) }),
      ),
    );
    for (const created of orders) assert.equal(created.status, 201, created.text);
    const configs = orders.map((created) => created.body as Config & { connection: string });
    for (const connection of connections) {
      const vlans = configs.filter((c) => c.connection === connection).map((c) => c.vlan_config.vlan);
      assert.equal(new Set(vlans).size, 10, `distinct VLANs on ${connection}: ${vlans.join(', ')}`);
    }
    const [row] = await stack().db.sequelize.query<{ total: number; distinct_addresses: number }>(
      `SELECT COUNT(*) AS total, COUNT(DISTINCT address) AS distinct_addresses FROM ip_addresses
       WHERE network_service_config IN (:ids)`,
      { replacements: { ids: configs.map((c) => c.id) }, type: QueryTypes.SELECT },
    );
    assert.equal(Number(row.total), 40);
    assert.equal(Number(row.distinct_addresses), 40);
    // A VLAN taken is refused, naming the config that holds it.
    const taken = configs[0];
    const clash = await request('POST', '/network-service-configs', {
      token,
      body: order(connections[0], { vlan_config: { vlan_type: 'dot1q', vlan: taken.vlan_config.vlan } }),
    });
    assert.equal(clash.status, 400);
    assert.match(clash.body.type, /unable-to-fulfill/);
    assert.ok(
      (clash.body.conflicts as Array<{ resource_id: string }>).some((c) => c.resource_id === taken.id),
    );
    const untagged = await request('POST', '/network-service-configs', {
      token,
      body: order(connections[1], { vlan_config: { vlan_type: 'port' } }),
    });
    assert.equal(untagged.status, 400);
    assert.match(untagged.body.type, /unable-to-fulfill/);
    for (const config of configs) await reached(config.id, 'production');
  });

  it('changes MACs through production_change_pending, holds MACs in use, decommissions and releases', async () => {
    const connection = await liveConnection(token);
    const router = await mac('02:5e:00:00:aa:01');
    const created = await request('POST', '/network-service-configs', {
      token,
      body: order(connection, { capacity: 2_000 }),
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    await reached(id, 'production');
    assert.equal(
      (await request('GET', `/connections/${connection}`, { token })).body.capacity_allocated,
      2_000,
    );

    const patched = await request('PATCH', `/network-service-configs/${id}`, {
      token,
      body: { macs: [router] },
    });
    assert.equal(patched.status, 202, patched.text);
    assert.equal(patched.body.state, 'production_change_pending');
    const changed = await reached(id, 'production');
    assert.deepEqual(changed.macs, [router]);
    await recordHistory('provisionNetworkServiceConfig', 'change', configWorkflowId(id));
    const [carried] = await new LabDriver(stack().db.sequelize).readServices(await deviceOf(connection), [
      id,
    ]);
    assert.deepEqual(carried.macs, ['02:5e:00:00:aa:01']);
    assert.equal(carried.rateLimit, 2_000);
    const listed = await request('GET', `/macs?network_service_config=${id}`, { token });
    assert.deepEqual(
      (listed.body as Array<{ id: string }>).map((m) => m.id),
      [router],
    );

    const held = await request('DELETE', `/macs/${router}`, { token });
    assert.equal(held.status, 400);
    assert.equal(held.body.conflicts[0].remote_resource_id, id);
    const carrying = await request('DELETE', `/connections/${connection}`, { token });
    assert.equal(carrying.status, 400);
    assert.equal(carrying.body.conflicts[0].remote_resource_id, id);

    const deleted = await request('DELETE', `/network-service-configs/${id}`, { token });
    assert.equal(deleted.status, 202, deleted.text);
    assert.equal(deleted.body.state, 'decommission_requested');
    const handle = stack().temporal.client.workflow.getHandle(configWorkflowId(id));
    await eventually('the workflow waiting for the day', async () =>
      String(await handle.query('provisioningStep')).startsWith('decommissioning on') ? true : undefined,
    );
    await handle.signal('decommissionNow');
    const gone = await reached(id, 'decommissioned');
    await recordHistory('provisionNetworkServiceConfig', 'decommission', configWorkflowId(id));
    assert.deepEqual(gone.ips, [], 'the addresses went back');
    for (const ip of created.body.ips as string[])
      assert.equal((await request('GET', `/ips/${ip}`, { token })).status, 404);
    assert.deepEqual(
      await new LabDriver(stack().db.sequelize).readServices(await deviceOf(connection), [id]),
      [],
    );
    assert.equal((await request('GET', `/connections/${connection}`, { token })).body.capacity_allocated, 0);
    assert.equal((await request('DELETE', `/macs/${router}`, { token })).status, 200);
    const archived = await request('DELETE', `/network-service-configs/${id}`, { token });
    assert.equal(archived.body.state, 'archived');
    // Released addresses rest: the next order gets others.
    const next = await request('POST', '/network-service-configs', { token, body: order(connection) });
    assert.equal(next.status, 201, next.text);
    const [reused] = await stack().db.sequelize.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM ip_addresses a JOIN ip_addresses b ON a.address = b.address AND a.id <> b.id
       WHERE a.network_service_config = :next`,
      { replacements: { next: next.body.id }, type: QueryTypes.SELECT },
    );
    assert.equal(Number(reused.n), 0);
  });

  it('lets what a going config holds go too: its MAC at once, its connection no earlier than it and off the device after it', async () => {
    const connection = await liveConnection(token);
    const filter = await mac('02:5e:00:00:aa:07');
    const created = await request('POST', '/network-service-configs', {
      token,
      body: order(connection, { macs: [filter] }),
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    await reached(id, 'production');

    // A live config holds both; the refusals say what to change and name it.
    for (const path of [`/connections/${connection}`, `/macs/${filter}`]) {
      const held = await request('DELETE', path, { token });
      assert.equal(held.status, 400, held.text);
      assert.match(held.body.type, /unable-to-fulfill/);
      assert.deepEqual(propertyNames(held), ['id'], held.text);
      assert.deepEqual(
        (held.body.conflicts as Array<{ remote_resource_id: string }>).map((c) => c.remote_resource_id),
        [id],
      );
    }

    const going = await request('DELETE', `/network-service-configs/${id}`, { token, body: null });
    assert.equal(going.status, 202, going.text);
    assert.equal(going.body.state, 'decommission_requested');
    const configDay = going.body.decommission_at as string;

    // The MAC goes at once, and leaves the config's list.
    const macGone = await request('DELETE', `/macs/${filter}`, { token });
    assert.equal(macGone.status, 200, macGone.text);
    assert.deepEqual((await read(id)).macs, []);
    assert.equal((await request('GET', `/macs/${filter}`, { token })).status, 404);

    // The connection goes no earlier than its config, and its policy says so.
    const policy = await request('GET', `/connections/${connection}/cancellation-policy`, { token });
    assert.equal(policy.status, 200, policy.text);
    assert.ok(policy.body.decommission_at >= configDay, policy.text);
    const today = new Date().toISOString().slice(0, 10);
    if (configDay > today) {
      const early = await request('DELETE', `/connections/${connection}`, {
        token,
        body: { decommission_at: today },
      });
      assert.equal(early.status, 400, early.text);
      assert.match(early.body.type, /cancellation-policy-error/);
      assert.equal(early.body.decommission_at, policy.body.decommission_at);
      assert.deepEqual(propertyNames(early), ['decommission_at']);
    }
    const accepted = await request('DELETE', `/connections/${connection}`, { token, body: {} });
    assert.equal(accepted.status, 202, accepted.text);
    assert.equal(accepted.body.state, 'decommission_requested');
    assert.equal(accepted.body.decommission_at, policy.body.decommission_at);

    // Brought forward first, the connection still waits for its config to be off the device.
    const connectionFlow = stack().temporal.client.workflow.getHandle(`ixapi:connection:${connection}`);
    await eventually('the connection waiting for its day', async () =>
      String(await connectionFlow.query('provisioningStep')).startsWith('decommissioning on')
        ? true
        : undefined,
    );
    await connectionFlow.signal('decommissionNow');
    await eventually('the connection at its teardown', async () =>
      String(await connectionFlow.query('provisioningStep')) === 'taking the connection off the device'
        ? true
        : undefined,
    );
    const device = await deviceOf(connection);
    assert.equal((await read(id)).state, 'decommission_requested');
    assert.equal(
      (await request('GET', `/connections/${connection}`, { token })).body.state,
      'decommission_requested',
      'the connection waits for the config on its ports',
    );
    assert.equal((await new LabDriver(stack().db.sequelize).readServices(device, [id])).length, 1);

    const configFlow = stack().temporal.client.workflow.getHandle(configWorkflowId(id));
    await eventually('the config waiting for its day', async () =>
      String(await configFlow.query('provisioningStep')).startsWith('decommissioning on') ? true : undefined,
    );
    await configFlow.signal('decommissionNow');
    await reached(id, 'decommissioned');
    await reaches(token, `/connections/${connection}`, 'decommissioned');
    const [ports] = await stack().db.sequelize.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM ports WHERE connection = :connection',
      { replacements: { connection }, type: QueryTypes.SELECT },
    );
    assert.equal(Number(ports.n), 0, 'the ports went back to the exchange');
  });

  it('puts a config the device refuses in error, and configures it again when an operator asks', async () => {
    const connection = await liveConnection(token);
    await new LabDriver(stack().db.sequelize).store.injectFault({
      device: await deviceOf(connection),
      operation: 'commit',
      code: 'rejected',
      message: 'commit refused: VLAN table locked',
    });
    const created = await request('POST', '/network-service-configs', { token, body: order(connection) });
    assert.equal(created.status, 201, created.text);
    const failed = await reached(created.body.id as string, 'error');
    assert.equal(failed.status[0].tag, 'configuration_failed');
    assert.match(failed.status[0].message, /VLAN table locked.*retryProvisioning/);
    await stack()
      .temporal.client.workflow.getHandle(configWorkflowId(created.body.id as string))
      .signal('retryProvisioning');
    await reached(created.body.id as string, 'production');
    await recordHistory(
      'provisionNetworkServiceConfig',
      'error-retry',
      configWorkflowId(created.body.id as string),
    );
  });

  it('hands a config the device does not carry as configured to an operator, and goes live once retested', async () => {
    const connection = await liveConnection(token);
    const device = await deviceOf(connection);
    const lab = new LabDriver(stack().db.sequelize);
    const { sequelize } = stack().db;
    // A slow device leaves time to change the service by hand between its commit and its reading.
    await lab.store.setLatency(device, 1_000);
    try {
      const created = await request('POST', '/network-service-configs', { token, body: order(connection) });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      const byHand = (description: string) =>
        sequelize.query(
          'UPDATE lab_services SET description = :description WHERE device = :device AND name = :id',
          {
            replacements: { description, device, id },
          },
        );
      // Someone changes the service on the device as soon as it is there, until the test notices.
      const stuck = await eventually(
        'the config waiting for an operator',
        async () => {
          await byHand('changed by hand');
          const now = await read(id);
          return now.state === 'operator' ? now : undefined;
        },
        30_000,
        50,
      );
      assert.equal(stuck.status[0].tag, 'device_mismatch');
      assert.match(stuck.status[0].message, /changed by hand.*retryTesting/);
      // The operator puts the device right and asks for another test.
      await byHand(`ixapi ${id} on ${connection}`);
      await stack().temporal.client.workflow.getHandle(configWorkflowId(id)).signal('retryTesting');
      await reached(id, 'production');
      await recordHistory('provisionNetworkServiceConfig', 'operator-retest', configWorkflowId(id));
    } finally {
      await lab.store.setLatency(device, null);
    }
  });

  it('waits for a connection not in production yet, saying so when it changes, and is cancelled while it waits', async () => {
    // In Amsterdam the subscriber makes the cross-connect: the connection waits for its LOA.
    const connection = await orderConnection(token, {
      product_offering: 'po-connection-ams-10g',
      subscriber_side_demarcs: [],
    });
    const config = await request('POST', '/network-service-configs', {
      token,
      body: order(connection, { network_service: 'ns-exchange-lan-ams' }),
    });
    assert.equal(config.status, 201, config.text);
    const id = config.body.id as string;
    await eventually('waiting for the connection', async () =>
      (await read(id)).status.some((s) => s.tag === 'waiting_for_connection') ? true : undefined,
    );
    // The workflow looks again and again while the connection waits for its LOA, but records its
    // status only when what it says changes.
    const handle = stack().temporal.client.workflow.getHandle(configWorkflowId(id));
    const history = await eventually(
      'three looks at the waiting connection',
      async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        return events.filter((event) => event.timerFiredEventAttributes).length >= 3 ? events : undefined;
      },
      30_000,
    );
    const said = history
      .map((event) => event.activityTaskScheduledEventAttributes)
      .filter((scheduled) => scheduled?.activityType?.name === 'recordNetworkServiceConfigStatus')
      .map((scheduled) => {
        const input: unknown = JSON.parse(Buffer.from(scheduled!.input!.payloads![0].data!).toString('utf8'));
        return (input as { status: Array<{ message: string }> }).status.map((entry) => entry.message).join();
      });
    assert.ok(said.length >= 1);
    said
      .slice(1)
      .forEach((message, i) =>
        assert.notEqual(message, said[i], 'the waiting status is written when it changes, not on every look'),
      );
    const cancelled = await request('DELETE', `/network-service-configs/${id}`, { token });
    assert.equal(cancelled.status, 202);
    const done = await reached(id, 'cancelled');
    await recordHistory('provisionNetworkServiceConfig', 'cancel-before-production', configWorkflowId(id));
    assert.deepEqual(done.ips, []);
    assert.equal((await request('DELETE', `/connections/${connection}`, { token })).status, 202);
  });

  it('lets the holder name an allocated address but not move it; customers register their own elsewhere', async () => {
    const connection = await liveConnection(token);
    const created = await request('POST', '/network-service-configs', { token, body: order(connection) });
    const [ip] = created.body.ips as string[];
    const named = await request('PATCH', `/ips/${ip}`, {
      token,
      body: { fqdn: 'spree.fra.demo-ix.example' },
    });
    assert.equal(named.status, 200, named.text);
    assert.equal(named.body.fqdn, 'spree.fra.demo-ix.example');
    const moved = await request('PATCH', `/ips/${ip}`, { token, body: { address: '192.0.2.200' } });
    assert.equal(moved.status, 400);
    assert.deepEqual(propertyNames(moved), ['address']);
    const badName = await request('PATCH', `/ips/${ip}`, { token, body: { fqdn: 'not a name' } });
    assert.deepEqual(propertyNames(badName), ['fqdn']);
    const own = { managing_account: SPREE, consuming_account: SPREE, version: 6, prefix_length: 128 };
    const inside = await request('POST', '/ips', { token, body: { ...own, address: '2001:db8:1::77' } });
    assert.deepEqual(propertyNames(inside), ['address']);
    const mismatch = await request('POST', '/ips', { token, body: { ...own, address: '203.0.114.1' } });
    assert.deepEqual(propertyNames(mismatch), ['version']);
    const registered = await request('POST', '/ips', {
      token,
      body: { ...own, address: '2001:DB8:FFFF:0:0::1' },
    });
    assert.equal(registered.status, 201, registered.text);
    assert.equal(registered.body.address, '2001:db8:ffff::1');
    const twice = await request('POST', '/ips', { token, body: { ...own, address: '2001:db8:ffff::1' } });
    assert.match(twice.body.type, /unable-to-fulfill/);
  });
});
