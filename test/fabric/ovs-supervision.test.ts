import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import type { Activities } from '../../activities';
import { FABRIC_SUPERVISOR_WORKFLOW_ID } from '../../domain/supervision';
import { OvsDriver } from '../../drivers/ovs/driver';
import type { OvsFabric } from '../../drivers/ovs/fabric';
import type { FabricDevice } from '../../drivers/ovs/topology';
import { runProgram } from '../../drivers/ovs/program';
import { bridgeName, linkOf } from '../../drivers/ovs/topology';
import { startFabricSupervisor } from '../../temporal/client';
import type { FabricSupervisorStatus } from '../../workflows/fabric-supervision';
import { activitiesFor } from '../../worker/create-worker';
import { settleConnections } from '../support/connections';
import { configOrder, deviceOf, liveConnection, reaches, SPREE } from '../support/exchange-lan';
import { recordHistory } from '../support/histories';
import { login, request } from '../support/http';
import { startFabric, stopFabric, whyOvsCannotRun } from '../support/ovs';
import { stack } from '../support/stack';
import { cannotRun } from '../support/system-tools';
import { eventually } from '../support/wait';

/**
 * A customer of the exchange LAN: its connection's port, its config (untagged on the port), and the
 * address and MAC its router speaks from (the config's MAC, the only one the LAN takes frames from).
 */
interface Customer {
  connection: string;
  port: string;
  config: string;
  address: string;
  mac: string;
}

describe('the ovs fabric under supervision', function () {
  this.timeout(180_000);
  let fabric: OvsFabric | undefined;
  let ovs: OvsDriver;
  let activities: Activities;
  let device: string;
  let catalogue: FabricDevice;
  const customers: Customer[] = [];

  const namespaceOf = (customer: Customer) => linkOf(device, customer.port).namespace;
  /** Whether the first customer's router reaches the second's over the exchange LAN. */
  const pings = () =>
    runProgram('ip', [
      'netns',
      'exec',
      namespaceOf(customers[0]),
      'ping',
      '-c',
      '2',
      '-i',
      '0.2',
      '-W',
      '1',
      customers[1].address,
    ]).then(
      () => true,
      () => false,
    );
  /** Waits for the customers to reach each other: a link just up takes the switch a moment to see. */
  const reachEachOther = (what: string) =>
    eventually(what, async () => ((await pings()) ? true : undefined), 10_000, 200);
  /** Each customer's router speaks on the exchange LAN from an address and its config's MAC. */
  const addressRouters = async () => {
    for (const customer of customers) {
      const { customerEnd } = linkOf(device, customer.port);
      const ip = (args: string[]) => runProgram('ip', ['-n', namespaceOf(customer), ...args]);
      await ip(['link', 'set', 'dev', customerEnd, 'address', customer.mac]);
      await ip(['addr', 'flush', 'dev', customerEnd]);
      await ip(['addr', 'add', `${customer.address}/24`, 'dev', customerEnd]);
    }
  };

  before(async function () {
    const reason = whyOvsCannotRun();
    if (reason) cannotRun(this, `Open vSwitch cannot run (${reason})`);
    const { accessToken: token } = await login('customer', 0);
    // Both connections on one device, on two of three ports kept spare on it (the last 10G ports of
    // the metro's last device): the rest are put out of service in this file's database.
    const { sequelize } = stack().db;
    const spare = await sequelize.query<{ id: string; device: string; name: string }>(
      `SELECT p.id, p.device, p.name FROM ports p JOIN pops o ON o.id = p.pop
       JOIN product_offerings f ON f.handover_metro_area_network = o.metro_area_network
       WHERE f.id = 'po-connection-fra-10g' AND p.speed = 10000 AND p.connection IS NULL
         AND p.state = 'production' ORDER BY p.device DESC, p.id DESC LIMIT 3`,
      { type: QueryTypes.SELECT },
    );
    await sequelize.query(
      "UPDATE ports SET state = 'testing' WHERE speed = 10000 AND connection IS NULL AND id NOT IN (:kept)",
      { replacements: { kept: spare.map((port) => port.id) } },
    );
    for (const [address, mac] of [
      ['198.51.100.11', '02:00:5e:00:53:11'],
      ['198.51.100.12', '02:00:5e:00:53:12'],
    ]) {
      const connection = await liveConnection(token);
      const registered = await request('POST', '/macs', {
        token,
        body: { managing_account: SPREE, consuming_account: SPREE, address: mac },
      });
      assert.equal(registered.status, 201, registered.text);
      const created = await request('POST', '/network-service-configs', {
        token,
        body: configOrder(connection, { vlan_config: { vlan_type: 'port' }, macs: [registered.body.id] }),
      });
      assert.equal(created.status, 201, created.text);
      const config = created.body.id as string;
      await reaches(token, `/network-service-configs/${config}`, 'production');
      const [{ port }] = await stack().db.sequelize.query<{ port: string }>(
        'SELECT name AS port FROM ports WHERE connection = :connection',
        { replacements: { connection }, type: QueryTypes.SELECT },
      );
      customers.push({ connection, config, port, address, mac });
    }
    device = await deviceOf(customers[0].connection);
    assert.equal(await deviceOf(customers[1].connection), device, 'both connections are on one device');
    // The fabric has the device with the customers' ports and one spare port.
    catalogue = { device, ports: spare.map(({ name }) => ({ name, speed: 10_000 })) };
    fabric = await startFabric(this, 'ixapi-ovs-sup-', [catalogue]);
    ovs = new OvsDriver(fabric);
    activities = activitiesFor(stack().db, {
      ...stack().config,
      deviceDriver: 'ovs',
      ovsRunDir: fabric.runDir,
    });
    for (const customer of customers) {
      await activities.configureConnection({ connectionId: customer.connection });
      await activities.configureNetworkServiceConfig({ configId: customer.config });
    }
    await addressRouters();
    await reachEachOther('the customers reach each other over the exchange LAN');
  });

  after(async () => {
    if (fabric) await stopFabric(fabric);
    await settleConnections();
  });

  it('starts a killed ovs-vswitchd again and installs the rules it lost, so that traffic flows again', async () => {
    const { pids } = await fabric!.record();
    process.kill(pids.ovsVswitchd!, 'SIGKILL');
    await eventually('ovs-vswitchd gone', async () =>
      (await fabric!.status()).ovsVswitchd.running ? undefined : true,
    );
    assert.equal(await pings(), false, 'nothing forwards without ovs-vswitchd');

    const round = await activities.superviseDevices();
    assert.deepEqual(round.restarted, ['ovs-vswitchd']);
    assert.deepEqual(round.restored, [`rules of ${device}`]);
    assert.deepEqual(round.failures, []);
    const { ovsVswitchd } = await fabric!.status();
    assert.ok(ovsVswitchd.running && ovsVswitchd.pid !== pids.ovsVswitchd, 'a new ovs-vswitchd runs');
    await reachEachOther('the customers reach each other again');

    assert.deepEqual(
      await activities.superviseDevices().then(({ restarted, restored }) => ({ restarted, restored })),
      { restarted: [], restored: [] },
      'a fabric in good health is left as it is',
    );
  });

  it('starts a killed ovsdb-server again, after which the driver reads the device as before', async () => {
    const { pids } = await fabric!.record();
    const services = await ovs.readServices(device);
    process.kill(pids.ovsdbServer!, 'SIGKILL');
    await eventually('ovsdb-server gone', async () =>
      (await fabric!.status()).ovsdbServer.running ? undefined : true,
    );
    await assert.rejects(ovs.readServices(device), /unreachable|connect|No such file/i);

    const round = await activities.superviseDevices();
    assert.deepEqual(round.restarted, ['ovsdb-server']);
    assert.deepEqual(round.failures, []);
    assert.deepEqual(await ovs.readServices(device), services);
    await reachEachOther('ovs-vswitchd forwarded on meanwhile, and does now');
  });

  it('brings a fabric that came back empty in line with the database: ports, services, and nothing else', async () => {
    await fabric!.down({ purge: true });
    await fabric!.up([catalogue]);
    await addressRouters();
    const used = customers.map((customer) => customer.port);
    assert.deepEqual(await ovs.readServices(device), [], 'the fabric came back empty');
    assert.equal(await pings(), false);
    // A service the database does not know, which the reconciliation takes away.
    const spare = catalogue.ports.map((port) => port.name).find((name) => !used.includes(name))!;
    const stray = await ovs.load({
      device,
      services: [
        {
          name: 'stray-service',
          description: '',
          parent: spare,
          vlanType: 'port',
          outerVlan: null,
          innerVlan: null,
          macs: [],
          macFilter: false,
          rateLimit: null,
          segment: 'stray',
          isolated: false,
        },
      ],
    });
    await ovs.commit(stray.id, `stray-${Date.now()}`);

    const reconciliation = await activities.reconcileDevices();
    const changed = reconciliation.changed.find((entry) => entry.device === device);
    assert.ok(changed, JSON.stringify(reconciliation));
    assert.ok(
      !reconciliation.refused.some((entry) => entry.device === device),
      JSON.stringify(reconciliation),
    );
    assert.ok(changed.changes.includes('delete service stray-service'), changed.changes.join(', '));
    assert.deepEqual(
      (await ovs.readServices(device)).map((service) => service.name),
      customers.map((customer) => customer.config).sort(),
    );
    for (const port of await ovs.readInterfaces(device, used)) assert.equal(port.enabled, true, port.name);
    await reachEachOther('the customers reach each other again');

    const again = await activities.reconcileDevices();
    assert.ok(
      !again.changed.some((entry) => entry.device === device),
      'a device in line with the database is left as it is',
    );
  });

  it('reports a device that refuses what the database says it holds, and moves no resource', async () => {
    const { port } = customers[1];
    await fabric!.vsctl(['del-port', bridgeName(device), linkOf(device, port).exchangeEnd]);
    try {
      const reconciliation = await activities.reconcileDevices();
      const refused = reconciliation.refused.find((entry) => entry.device === device);
      assert.ok(refused, JSON.stringify(reconciliation));
      assert.match(refused.error, new RegExp(`no interface ${port}`));
      const states = await stack().db.sequelize.query<{ state: string }>(
        `SELECT state FROM connections WHERE id IN (:connections)
         UNION ALL SELECT state FROM network_service_configs WHERE id IN (:configs)`,
        {
          replacements: {
            connections: customers.map((customer) => customer.connection),
            configs: customers.map((customer) => customer.config),
          },
          type: QueryTypes.SELECT,
        },
      );
      assert.deepEqual(
        states.map((row) => row.state),
        ['production', 'production', 'production', 'production'],
      );
    } finally {
      await fabric!.up([catalogue]);
    }
  });
});

describe('the fabric supervisor workflow', function () {
  this.timeout(120_000);

  it('runs rounds one per interval and shows operators how they went', async () => {
    const { api, config } = stack();
    assert.equal(
      await startFabricSupervisor(api.temporal.client, {
        taskQueue: config.temporalTaskQueue,
        intervalSeconds: 1,
      }),
      true,
    );
    const handle = api.temporal.client.workflow.getHandle(FABRIC_SUPERVISOR_WORKFLOW_ID);
    try {
      const status = await eventually(
        'two rounds',
        async () => {
          const now = await handle.query<FabricSupervisorStatus>('fabricSupervisorStatus');
          return now.rounds >= 2 ? now : undefined;
        },
        60_000,
        250,
      );
      assert.equal(status.lastError, null);
      assert.deepEqual(status.lastSupervision?.restarted, [], 'the lab has nothing to restart');
      assert.ok(status.lastReconciliation && status.lastReconciliation.devices > 0);
      await recordHistory('superviseFabric', 'supervising', FABRIC_SUPERVISOR_WORKFLOW_ID);
    } finally {
      await handle.terminate('the test is over');
    }
  });
});
