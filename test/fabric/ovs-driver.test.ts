import assert from 'node:assert/strict';
import path from 'node:path';
import type { ServiceAttachment } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import { OvsDriver } from '../../drivers/ovs/driver';
import type { ProgramError } from '../../drivers/ovs/program';
import type { FabricDevice } from '../../drivers/ovs/topology';
import { OvsFabric } from '../../drivers/ovs/fabric';
import { runProgram } from '../../drivers/ovs/program';
import { bridgeName, linkOf } from '../../drivers/ovs/topology';
import { describeDriverContract, sameSpeed } from '../contracts/driver-contract';
import { QueryTypes } from 'sequelize';
import { activitiesFor } from '../../worker/create-worker';
import { settleConnections } from '../support/connections';
import { deviceOf, FRA_LAN, liveConfig, liveConnection } from '../support/exchange-lan';
import { login } from '../support/http';
import { stack } from '../support/stack';
import { serviceAttachment, startFabric, stopFabric } from '../support/ovs';

const DEVICE = `ovs-t${process.pid % 100000}`;
const PORTS = Array.from({ length: 10 }, (_, index) => `et-0/0/${index}`);
const FABRIC: FabricDevice = { device: DEVICE, ports: PORTS.map((name) => ({ name, speed: 10_000 })) };

describe('the ovs driver on a real Open vSwitch', function () {
  this.timeout(120_000);
  let fabric: OvsFabric | undefined;
  let driver: OvsDriver;

  before(async function () {
    fabric = await startFabric(this, 'ixapi-ovs-', [FABRIC]);
    driver = new OvsDriver(fabric);
  });

  after(async () => {
    if (fabric) await stopFabric(fabric);
  });

  describeDriverContract('ovs', async () => ({
    driver,
    device: DEVICE,
    interfaces: sameSpeed(await driver.readInterfaces(DEVICE, PORTS.slice(0, 4))),
  }));

  // Runs before the contract's tests (a suite's own tests come before those of its suites), on the
  // device as the fabric made it.
  it('finds nothing to restore on a device as the fabric made it, and installs its default rules', async () => {
    const fresh = await driver.restore(DEVICE);
    assert.deepEqual({ restored: fresh.restored, meters: fresh.meters }, { restored: false, meters: 0 });
    assert.equal(fresh.flows, 2, 'the default rules of both tables');
    assert.equal((await driver.restore(DEVICE)).restored, false, 'and nothing the second time');
  });

  it('keeps the newest commits of a device, and forgets older ones with their keys', async () => {
    const forgetful = new OvsDriver(fabric!, { keepCommits: 2 });
    const port = PORTS[3];
    const commits: string[] = [];
    for (const description of ['one', 'two', 'three']) {
      const candidate = await forgetful.load({
        device: DEVICE,
        interfaces: [{ name: port, description: `kept-${description}`, enabled: false }],
      });
      commits.push((await forgetful.commit(candidate.id, `kept-${description}-${Date.now()}`)).commitId);
    }
    await assert.rejects(
      forgetful.rollback(DEVICE, commits[0]),
      (error) => error instanceof DriverError && error.code === 'invalid-config',
    );
    await forgetful.rollback(DEVICE, commits[2]);
    assert.equal((await forgetful.readInterfaces(DEVICE, [port]))[0].description, 'kept-two');
    const reset = await forgetful.load({
      device: DEVICE,
      interfaces: [{ name: port, description: '', enabled: false }],
    });
    await forgetful.commit(reset.id, `kept-reset-${Date.now()}`);
  });

  it('reads a service recorded before services said whether their MACs filter as one that lets every source in', async () => {
    const legacy = serviceAttachment('legacy', PORTS[3], { macFilter: true });
    const created = await driver.load({ device: DEVICE, services: [legacy] });
    await driver.commit(created.id, `legacy-${Date.now()}`);
    const key = JSON.stringify('ixapi-service:legacy');
    const bridge = bridgeName(DEVICE);
    const { stdout } = await fabric!.vsctl(['get', 'Bridge', bridge, `external_ids:${key}`]);
    const { macFilter, ...record } = JSON.parse(JSON.parse(stdout) as string) as Record<string, unknown>;
    assert.equal(macFilter, true, 'the record keeps the filter');
    await fabric!.vsctl([
      'set',
      'Bridge',
      bridge,
      `external_ids:${key}=${JSON.stringify(JSON.stringify(record))}`,
    ]);
    assert.deepEqual(await driver.readServices(DEVICE, ['legacy']), [{ ...legacy, macFilter: false }]);
    const removal = await driver.load({ device: DEVICE, removeServices: ['legacy'] });
    await driver.commit(removal.id, `legacy-gone-${Date.now()}`);
  });

  it('says a fabric that does not answer is unreachable, which a retry may cure', async () => {
    const nowhere = new OvsDriver(new OvsFabric(path.join(fabric!.runDir, 'nowhere')));
    for (const attempt of [nowhere.readInterfaces(DEVICE), nowhere.load({ device: DEVICE, interfaces: [] })])
      await assert.rejects(
        attempt,
        (error) => error instanceof DriverError && error.code === 'unreachable' && error.retryable,
      );
  });

  describe('provisioning on the fabric', () => {
    after(() => settleConnections());

    it("puts a connection's port and an exchange-LAN config on the device through the worker's activities", async () => {
      const { accessToken: token } = await login('customer', 0);
      const connection = await liveConnection(token);
      const configId = await liveConfig(token, connection);

      // The connection's device joins the fabric with its ports; the worker's activities drive it.
      const device = await deviceOf(connection);
      const ports = await stack().db.sequelize.query<{
        name: string;
        speed: number;
        connection: string | null;
      }>('SELECT name, speed, connection FROM ports WHERE device = :device ORDER BY name', {
        replacements: { device },
        type: QueryTypes.SELECT,
      });
      await fabric!.up([{ device, ports: ports.map(({ name, speed }) => ({ name, speed: Number(speed) })) }]);
      const activities = activitiesFor(stack().db, {
        ...stack().config,
        deviceDriver: 'ovs',
        ovsRunDir: fabric!.runDir,
      });
      const ovs = new OvsDriver(fabric!);
      const used = ports.filter((port) => port.connection === connection).map((port) => port.name);
      assert.ok(used.length > 0, 'the connection has ports');
      await activities.configureConnection({ connectionId: connection, key: `ovs-${connection}` });
      for (const port of await ovs.readInterfaces(device, used)) assert.equal(port.enabled, true, port.name);

      assert.deepEqual(await activities.verifyNetworkServiceConfig({ configId }), {
        differences: [`service ${configId} on ${device} is missing`],
      });
      await activities.configureNetworkServiceConfig({ configId });
      assert.deepEqual(await activities.verifyNetworkServiceConfig({ configId }), { differences: [] });
      const [carried] = await ovs.readServices(device, [configId]);
      const { segment, vlanType, macs, macFilter } = carried;
      assert.deepEqual(
        { segment, vlanType, parent: used.includes(carried.parent), macs, macFilter },
        // An exchange-LAN config without MACs takes no frames in until it names one.
        { segment: FRA_LAN, vlanType: 'dot1q', parent: true, macs: [], macFilter: true },
      );
      await activities.deconfigureNetworkServiceConfig({ configId });
      assert.deepEqual(await ovs.readServices(device, [configId]), []);
    });
  });

  describe('traffic between customer sides', () => {
    const [first, second, third] = PORTS.slice(4);
    const ns = (port: string) => linkOf(DEVICE, port).namespace;
    const customerEnd = (port: string) => linkOf(DEVICE, port).customerEnd;
    const inNamespace = (port: string, args: string[]) =>
      runProgram('ip', ['netns', 'exec', ns(port), ...args]);
    const pings = async (from: string, address: string) =>
      inNamespace(from, ['ping', '-c', '1', '-W', '1', address]).then(
        () => true,
        () => false,
      );
    const attachment = (name: string, parent: string, extra: Partial<ServiceAttachment> = {}) =>
      serviceAttachment(name, parent, { segment: 'traffic-lan', ...extra });
    const macOf = async (port: string) => {
      const { stdout } = await runProgram('ip', ['-n', ns(port), '-j', 'link', 'show', customerEnd(port)]);
      return (JSON.parse(stdout) as Array<{ address: string }>)[0].address;
    };
    const apply = async (services: ServiceAttachment[]) => {
      const candidate = await driver.load({
        device: DEVICE,
        interfaces: [first, second, third].map((name) => ({ name, description: 'traffic', enabled: true })),
        services,
      });
      await driver.commit(candidate.id, `traffic-${Date.now()}-${Math.random()}`);
    };

    before(async () => {
      for (const [index, port] of [first, second, third].entries()) {
        await inNamespace(port, ['ip', 'addr', 'flush', 'dev', customerEnd(port)]);
        await inNamespace(port, [
          'ip',
          'addr',
          'add',
          `198.51.100.${index + 1}/24`,
          'dev',
          customerEnd(port),
        ]);
      }
    });

    it('carries frames between two services of one segment, and none to a third segment', async () => {
      await apply([
        attachment('traffic-a', first),
        attachment('traffic-b', second),
        attachment('traffic-c', third, { segment: 'traffic-other' }),
      ]);
      assert.equal(
        await pings(first, '198.51.100.2'),
        true,
        'one segment: the customer sides reach each other',
      );
      assert.equal(await pings(first, '198.51.100.3'), false, 'another segment is out of reach');
      assert.equal(await pings(third, '198.51.100.2'), false, 'another segment is out of reach');
    });

    it('lets an isolated service reach the services of its segment that are not, and no other isolated one', async () => {
      const p2mp = { segment: 'traffic-p2mp' };
      await apply([
        attachment('traffic-a', first, p2mp),
        attachment('traffic-b', second, { ...p2mp, isolated: true }),
        attachment('traffic-c', third, { ...p2mp, isolated: true }),
      ]);
      assert.equal(await pings(second, '198.51.100.1'), true, 'a leaf reaches the root');
      assert.equal(await pings(third, '198.51.100.1'), true, 'a leaf reaches the root');
      assert.equal(await pings(second, '198.51.100.3'), false, 'a leaf does not reach another leaf');
    });

    it('drops frames from a MAC the service does not list, and carries those from one it lists', async () => {
      const own = await macOf(first);
      const peer = await macOf(second);
      await apply([
        attachment('traffic-a', first, { macs: ['02:00:5e:00:53:01'] }),
        attachment('traffic-b', second, { macs: [peer] }),
      ]);
      assert.equal(await pings(first, '198.51.100.2'), false, `${own} is not a MAC of traffic-a`);
      await apply([
        attachment('traffic-a', first, { macs: [own] }),
        attachment('traffic-b', second, { macs: [peer] }),
      ]);
      assert.equal(await pings(first, '198.51.100.2'), true);
      const [read] = await driver.readServices(DEVICE, ['traffic-a']);
      assert.deepEqual(read.macs, [own], 'the MACs read back from the flow table');
    });

    it('drops every frame from a service whose MACs filter while it lists none, and carries them once it lists the sender', async () => {
      const own = await macOf(first);
      await apply([attachment('traffic-a', first, { macFilter: true }), attachment('traffic-b', second)]);
      assert.equal(await pings(first, '198.51.100.2'), false, 'a service without MACs reaches no one');
      assert.equal(await pings(second, '198.51.100.1'), false, 'nor answers anyone');
      const [read] = await driver.readServices(DEVICE, ['traffic-a']);
      assert.deepEqual({ macs: read.macs, macFilter: read.macFilter }, { macs: [], macFilter: true });
      await apply([
        attachment('traffic-a', first, { macFilter: true, macs: [own] }),
        attachment('traffic-b', second),
      ]);
      assert.equal(await pings(first, '198.51.100.2'), true);
    });

    it('drops what a rate-limited service sends beyond its rate', async () => {
      /** The share of 300 pings of 1400 bytes, 2 ms apart (5.6 Mbit/s), that got no answer. */
      const loss = async () => {
        const { stdout } = await inNamespace(first, [
          'ping',
          '-q',
          '-c',
          '300',
          '-i',
          '0.002',
          '-s',
          '1400',
          '-W',
          '1',
          '198.51.100.2',
        ]).catch((error: ProgramError) => ({ stdout: error.stdout }));
        return Number(/(\d+(?:\.\d+)?)% packet loss/.exec(stdout)?.[1] ?? 100);
      };
      await apply([attachment('traffic-a', first), attachment('traffic-b', second)]);
      assert.ok((await loss()) < 10, 'without a limit the pings pass');
      await apply([attachment('traffic-a', first, { rateLimit: 1 }), attachment('traffic-b', second)]);
      const limited = await loss();
      // How fast ping sends depends on how busy the machine is; the meter's band says what it dropped.
      const { stdout: meters } = await fabric!.ofctl(bridgeName(DEVICE), ['meter-stats', '{}']);
      const dropped = [...meters.matchAll(/^\s*\d+: packet_count:(\d+)/gm)].reduce(
        (sum, [, count]) => sum + Number(count),
        0,
      );
      assert.ok(dropped > 0, `the meter's drop band counted nothing:\n${meters}`);
      assert.ok(limited > 5, `at 1 Mbit/s the meter drops what passes its rate (${limited}% lost)`);
    });

    /** The datapath actions OVS takes for an ARP frame with `tags` (outermost first) entering `port`. */
    const trace = async (port: string, tags: number[]): Promise<string> => {
      const exchangeEnd = linkOf(DEVICE, port).exchangeEnd;
      const ofport = (await fabric!.vsctl(['get', 'Interface', exchangeEnd, 'ofport'])).stdout.trim();
      const frame = [
        '02005e0053ff02005e0053aa',
        ...tags.map((tag) => `8100${tag.toString(16).padStart(4, '0')}`),
        '0806',
        '00'.repeat(28),
      ].join('');
      const { stdout } = await runProgram(
        'ovs-appctl',
        [
          '-t',
          path.join(fabric!.runDir, 'ovs-vswitchd.ctl'),
          'ofproto/trace',
          bridgeName(DEVICE),
          `in_port=${ofport}`,
          frame,
        ],
        { env: fabric!.env },
      );
      return /^Datapath actions: (.*)$/m.exec(stdout)![1];
    };
    /** Datapath port numbers of the exchange ends, by port name. */
    const datapathPorts = async (): Promise<Map<string, string>> => {
      const { stdout } = await runProgram(
        'ovs-appctl',
        ['-t', path.join(fabric!.runDir, 'ovs-vswitchd.ctl'), 'dpif/show'],
        { env: fabric!.env },
      );
      const ports = new Map<string, string>();
      for (const port of PORTS) {
        const found = new RegExp(`${linkOf(DEVICE, port).exchangeEnd} \\d+/(\\d+):`).exec(stdout);
        if (found) ports.set(port, found[1]);
      }
      return ports;
    };

    it('translates tags between a dot1q, a qinq and a LAG service of one segment, and drops other tags', async () => {
      const [lagA, lagB] = PORTS.slice(8);
      const tags = { segment: 'traffic-tags' };
      const candidate = await driver.load({
        device: DEVICE,
        interfaces: [first, second, lagA, lagB].map((name) => ({ name, description: 'tags', enabled: true })),
        lags: [
          { name: 'traffic-lag', description: '', mode: 'static', lacpTimeout: null, members: [lagA, lagB] },
        ],
        services: [
          attachment('traffic-a', first, { ...tags, vlanType: 'dot1q', outerVlan: 100 }),
          attachment('traffic-b', second, { ...tags, vlanType: 'qinq', outerVlan: 300, innerVlan: 30 }),
          attachment('traffic-c', 'traffic-lag', { ...tags, rateLimit: 50 }),
        ],
      });
      await driver.commit(candidate.id, `tags-${Date.now()}`);
      const dp = await datapathPorts();
      const lag = `(${dp.get(lagA)}|${dp.get(lagB)})`;
      const qinq = `push_vlan\\(vid=30,pcp=0\\),push_vlan\\(tpid=0x88a8,vid=300,pcp=0\\),${dp.get(second)}`;
      assert.match(await trace(first, [100]), new RegExp(`^pop_vlan,${qinq},pop_vlan,pop_vlan,${lag}$`));
      assert.match(
        await trace(second, [300, 30]),
        new RegExp(`^pop_vlan,pop_vlan,push_vlan\\(vid=100,pcp=0\\),${dp.get(first)},pop_vlan,${lag}$`),
      );
      assert.match(
        await trace(lagB, []),
        new RegExp(`^meter\\(\\d+\\),push_vlan\\(vid=100,pcp=0\\),${dp.get(first)},pop_vlan,${qinq}$`),
      );
      assert.equal(await trace(first, [101]), 'drop', 'a tag no service takes');
      assert.equal(await trace(second, [300, 31]), 'drop', 'an inner tag no service takes');
      assert.equal(await trace(first, []), 'drop', 'untagged frames on a tagged port');
      const removal = await driver.load({
        device: DEVICE,
        removeLags: ['traffic-lag'],
        removeServices: ['traffic-a', 'traffic-b', 'traffic-c'],
      });
      await driver.commit(removal.id, `tags-gone-${Date.now()}`);
    });

    it('reports a change Open vSwitch refuses as rejected, with its message', async () => {
      // The exchange end of a port vanishes under OVS; re-creating its port fails.
      const gone = linkOf(DEVICE, PORTS[7]);
      await runProgram('ip', ['link', 'del', gone.exchangeEnd]);
      const before = { interfaces: await driver.readInterfaces(DEVICE), lags: await driver.readLags(DEVICE) };
      const candidate = await driver.load({
        device: DEVICE,
        lags: [
          { name: 'traffic-lag', description: '', mode: 'static', lacpTimeout: null, members: [PORTS[7]] },
        ],
      });
      await assert.rejects(
        driver.commit(candidate.id, `refused-${Date.now()}`),
        (error) =>
          error instanceof DriverError &&
          error.code === 'rejected' &&
          !error.retryable &&
          /could not open network device/.test(error.message),
      );
      assert.deepEqual(
        { interfaces: await driver.readInterfaces(DEVICE), lags: await driver.readLags(DEVICE) },
        before,
        'what OVS took of the refused change was undone',
      );
    });
  });
});
