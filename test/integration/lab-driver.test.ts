import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import type { BgpSession } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import { describeDriverContract, sameSpeed } from '../contracts/driver-contract';
import { LabDriver } from '../../drivers/lab/driver';
import { serviceAttachment } from '../../activities/network-service-configs';
import { activitiesFor } from '../../worker/create-worker';
import { settleConnections } from '../support/connections';
import { deviceOf, FRA_LAN, liveConfig, liveConnection } from '../support/exchange-lan';
import { login } from '../support/http';
import { stack } from '../support/stack';

async function devices(): Promise<string[]> {
  const rows = await stack().db.sequelize.query<{ id: string }>('SELECT id FROM devices ORDER BY id', {
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => row.id);
}

/** The route servers of the catalogue: network features the lab keeps as devices of their own. */
async function routeServers(): Promise<string[]> {
  const rows = await stack().db.sequelize.query<{ id: string }>(
    "SELECT id FROM network_features WHERE type = 'route_server' ORDER BY id",
    { type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.id);
}

async function labDriver(): Promise<LabDriver> {
  const driver = new LabDriver(stack().db.sequelize);
  await driver.store.syncFromCatalogue();
  return driver;
}

/** Interfaces of spare ports only: connections own the others. */
async function spareInterfaces(driver: LabDriver, device: string) {
  const spare = await stack().db.sequelize.query<{ name: string }>(
    'SELECT name FROM ports WHERE device = :device AND connection IS NULL',
    { replacements: { device }, type: QueryTypes.SELECT },
  );
  const names = new Set(spare.map((row) => row.name));
  return (await driver.readInterfaces(device)).filter((i) => names.has(i.name) && i.lag === null);
}

describeDriverContract('lab', async () => {
  const driver = await labDriver();
  const [device] = await devices();
  const [routeServer] = await routeServers();
  return { driver, device, interfaces: sameSpeed(await spareInterfaces(driver, device)), routeServer };
});

describe('the lab driver', () => {
  let driver: LabDriver;
  let first: string;
  let second: string;
  let port: string;

  before(async () => {
    driver = await labDriver();
    [, first, second] = await devices();
    [port] = sameSpeed(await spareInterfaces(driver, first), 1);
  });

  afterEach(() => driver.store.clearFaults());

  const enable = async (description: string) => {
    const candidate = await driver.load({
      device: first,
      interfaces: [{ name: port, description, enabled: true }],
    });
    return driver.commit(candidate.id, `lab-test-${description}`);
  };

  it('has an interface for every port name of every catalogue device, and keeps its configuration on a second sync', async () => {
    const [{ ports }] = await stack().db.sequelize.query<{ ports: number }>(
      'SELECT COUNT(DISTINCT device, name) AS ports FROM ports',
      {
        type: QueryTypes.SELECT,
      },
    );
    const [{ interfaces }] = await stack().db.sequelize.query<{ interfaces: number }>(
      'SELECT COUNT(*) AS interfaces FROM lab_interfaces',
      { type: QueryTypes.SELECT },
    );
    assert.equal(Number(interfaces), Number(ports));
    await enable('synced');
    await driver.store.syncFromCatalogue();
    assert.equal((await driver.readInterfaces(first, [port]))[0].description, 'synced');
  });

  it('has a device for every route server of the catalogue, with no interfaces, and keeps its sessions on a second sync', async () => {
    const servers = await routeServers();
    assert.ok(servers.length > 0, 'the catalogue has route servers');
    for (const server of servers) assert.deepEqual(await driver.readInterfaces(server), []);
    const kept: BgpSession = {
      name: 'lab-synced',
      peerAsn: 64496,
      peerAddress: '198.18.1.1',
      passive: true,
      password: null,
      asSet: null,
      maxPrefix: null,
      insertIxpAsn: false,
      flags: [],
    };
    const candidate = await driver.load({ device: servers[0], bgpSessions: [kept] });
    await driver.commit(candidate.id, 'lab-test-synced-session');
    await driver.store.syncFromCatalogue();
    assert.deepEqual(await driver.readBgpSessions(servers[0], [kept.name]), [kept]);
    const removal = await driver.load({ device: servers[0], removeBgpSessions: [kept.name] });
    await driver.commit(removal.id, 'lab-test-synced-session-removed');
  });

  it('fails retryably while a device is unreachable, then answers again', async () => {
    await driver.store.injectFault({ device: first, operation: 'load', code: 'unreachable', times: 2 });
    for (let i = 0; i < 2; i += 1) {
      await assert.rejects(
        driver.load({ device: first, interfaces: [] }),
        (error) => error instanceof DriverError && error.code === 'unreachable' && error.retryable,
      );
    }
    assert.deepEqual((await driver.load({ device: first, interfaces: [] })).changes, []);
  });

  it('reads services through the device, which may time out like any other read', async () => {
    await driver.store.injectFault({ device: first, operation: 'readServices', code: 'timeout' });
    await assert.rejects(
      driver.readServices(first),
      (error) => error instanceof DriverError && error.code === 'timeout' && error.retryable,
    );
    assert.ok(Array.isArray(await driver.readServices(first)), 'the fault applied once');
  });

  it('reads BGP sessions through the route server, which may time out like any other read', async () => {
    const [server] = await routeServers();
    await driver.store.injectFault({ device: server, operation: 'readBgpSessions', code: 'timeout' });
    await assert.rejects(
      driver.readBgpSessions(server),
      (error) => error instanceof DriverError && error.code === 'timeout' && error.retryable,
    );
    assert.ok(Array.isArray(await driver.readBgpSessions(server)), 'the fault applied once');
  });

  it('applies nothing when the device rejects a commit, and says it cannot be retried', async () => {
    const before = await driver.readInterfaces(first, [port]);
    await driver.store.injectFault({
      device: first,
      operation: 'commit',
      code: 'rejected',
      message: 'config locked',
    });
    await assert.rejects(
      enable('rejected'),
      (error) =>
        error instanceof DriverError &&
        error.code === 'rejected' &&
        !error.retryable &&
        /config locked/.test(error.message),
    );
    assert.deepEqual(await driver.readInterfaces(first, [port]), before);
  });

  it('reads optics out of range where low light was injected, for that device only', async () => {
    // Named by interface too: the traffic collector reads the optics of ports in service meanwhile.
    await driver.store.injectFault({
      device: first,
      interface: port,
      operation: 'readOptics',
      code: 'optics-low',
    });
    const [other] = sameSpeed(await spareInterfaces(driver, second), 1);
    assert.equal((await driver.readOptics(second, [other]))[0].inRange, true);
    const [low] = await driver.readOptics(first, [port]);
    assert.equal(low.inRange, false);
    assert.ok(low.rxDbm < -14);
    assert.equal((await driver.readOptics(first, [port]))[0].inRange, true, 'the fault applied once');
  });

  it('carries traffic on enabled interfaces only, along a daily curve, and keeps counting where it stopped', async () => {
    let now = Date.parse('2031-05-01T00:00:00Z');
    const timed = new LabDriver(stack().db.sequelize, { clock: () => new Date(now) });
    const [, name] = sameSpeed(
      (await spareInterfaces(driver, first)).filter((i) => !i.enabled),
      2,
    );
    const at = async (ms: number) => {
      now = ms;
      const [{ readAt: _readAt, ...counters }] = await timed.readCounters(first, [name]);
      return counters;
    };
    const setEnabled = async (enabled: boolean, ms: number) => {
      now = ms;
      const candidate = await timed.load({
        device: first,
        interfaces: [{ name, description: enabled ? 'lab traffic' : '', enabled }],
      });
      await timed.commit(candidate.id, `lab-traffic-${enabled}-${ms}`);
    };
    const start = now;
    const hour = 3_600_000;
    const idle = await at(start);
    assert.equal((await at(start + hour)).octetsIn, idle.octetsIn, 'a disabled interface carries nothing');
    await setEnabled(true, start);
    const running = await at(start + hour);
    assert.ok(running.octetsIn > idle.octetsIn && running.octetsOut > idle.octetsOut);
    assert.ok(running.packetsIn > idle.packetsIn);
    assert.deepEqual(await at(start + hour), running, 'the same instant reads the same');
    const hourly: number[] = [];
    for (let h = 0; h < 24; h += 1)
      hourly.push(
        Number((await at(start + (h + 1) * hour)).octetsIn - (await at(start + h * hour)).octetsIn),
      );
    assert.ok(Math.max(...hourly) > 1.5 * Math.min(...hourly), `a daily curve: ${hourly.join(' ')}`);
    await setEnabled(false, start + 48 * hour);
    const stopped = await at(start + 48 * hour);
    assert.deepEqual(await at(start + 72 * hour), stopped, 'no traffic while disabled');
    await setEnabled(true, start + 72 * hour);
    const resumed = await at(start + 73 * hour);
    assert.ok(resumed.octetsIn > stopped.octetsIn, 'counting goes on from where it stopped');
    const difference = resumed.octetsIn - stopped.octetsIn - (running.octetsIn - idle.octetsIn);
    assert.ok(difference >= -2n && difference <= 2n, 'the same hour of the day carries the same traffic');
    const [sub] = await timed.readCounters(first, [`${name}.42`]);
    assert.ok(sub.octetsIn > 0n && sub.octetsIn < resumed.octetsIn, 'a sub-interface carries a share');
    await setEnabled(false, start + 74 * hour);
  });

  it('knows only the devices of the catalogue', async () => {
    await assert.rejects(
      driver.load({ device: 'no-such-device', interfaces: [] }),
      (error) => error instanceof DriverError && error.code === 'invalid-config',
    );
    await assert.rejects(
      driver.readCounters('no-such-device', ['et-0/0/0']),
      (error) => error instanceof DriverError && error.code === 'invalid-config',
    );
  });
});

describe('service segments of configs on the lab fabric', function () {
  this.timeout(120_000);
  after(() => settleConnections());

  it('puts a config into its network service as a segment, isolated as a leaf, and reads back a drifted one as different', async () => {
    const { accessToken: token } = await login('customer', 0);
    const connection = await liveConnection(token);
    const id = await liveConfig(token, connection);

    const driver = new LabDriver(stack().db.sequelize);
    const device = await deviceOf(connection);
    const [carried] = await driver.readServices(device, [id]);
    assert.deepEqual(
      { segment: carried.segment, isolated: carried.isolated },
      { segment: FRA_LAN, isolated: false },
    );
    const placement = (await stack().db.networkServiceConfigs.placement(id))!;
    assert.deepEqual(
      { segment: placement.segment, isolated: placement.isolated },
      { segment: FRA_LAN, isolated: false },
    );

    const activities = activitiesFor(stack().db, stack().config);
    const verify = (configId: string) => activities.verifyNetworkServiceConfig({ configId });
    assert.deepEqual(await verify(id), { differences: [] });

    // The device drifts: the service joins another segment, isolated.
    const drift = await driver.load({
      device,
      services: [{ ...carried, segment: 'ns-elsewhere', isolated: true }],
    });
    await driver.commit(drift.id, `lab-test-drift-${id}`);
    assert.deepEqual(await verify(id), {
      differences: [`segment is "ns-elsewhere", not "${FRA_LAN}"`, 'isolated is true, not false'],
    });

    // As a leaf the config is meant to be isolated: only the segment still differs.
    await stack().db.sequelize.query("UPDATE network_service_configs SET role = 'leaf' WHERE id = :id", {
      replacements: { id },
    });
    try {
      const leaf = (await stack().db.networkServiceConfigs.placement(id))!;
      assert.equal(leaf.isolated, true);
      assert.equal(serviceAttachment(leaf).isolated, true);
      assert.deepEqual(await verify(id), {
        differences: [`segment is "ns-elsewhere", not "${FRA_LAN}"`],
      });
    } finally {
      await stack().db.sequelize.query('UPDATE network_service_configs SET role = NULL WHERE id = :id', {
        replacements: { id },
      });
    }
    const repair = await driver.load({ device, services: [serviceAttachment(placement)] });
    await driver.commit(repair.id, `lab-test-repair-${id}`);
    assert.deepEqual(await verify(id), { differences: [] });
  });
});
