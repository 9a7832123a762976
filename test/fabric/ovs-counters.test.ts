import assert from 'node:assert/strict';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { Counters } from '../../drivers/counters';
import type { CounterReading, ServiceAttachment } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import { OvsDriver } from '../../drivers/ovs/driver';
import type { FabricDevice } from '../../drivers/ovs/topology';
import { OvsFabric } from '../../drivers/ovs/fabric';
import { linkOf } from '../../drivers/ovs/topology';
import { activitiesFor } from '../../worker/create-worker';
import { settleConnections } from '../support/connections';
import { configOrder, deviceOf, FRA_LAN, liveConnection, reaches, SPREE } from '../support/exchange-lan';
import { login, request } from '../support/http';
import {
  customerMac,
  inCustomerSide,
  sendTaggedFrames,
  serviceAttachment,
  startFabric,
  stopFabric,
} from '../support/ovs';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const DEVICE = `ovs-c${process.pid % 100000}`;
const PORTS = ['et-0/0/0', 'et-0/0/1', 'et-0/0/2', 'et-0/0/3'];
const FABRIC: FabricDevice = { device: DEVICE, ports: PORTS.map((name) => ({ name, speed: 10_000 })) };

/** What each counter of `after` gained over `before`. */
const grown = (before: CounterReading, after: CounterReading): Counters => ({
  octetsIn: after.octetsIn - before.octetsIn,
  octetsOut: after.octetsOut - before.octetsOut,
  packetsIn: after.packetsIn - before.packetsIn,
  packetsOut: after.packetsOut - before.packetsOut,
  errorsIn: after.errorsIn - before.errorsIn,
  errorsOut: after.errorsOut - before.errorsOut,
  discardsIn: after.discardsIn - before.discardsIn,
  discardsOut: after.discardsOut - before.discardsOut,
});

/** Counters as text, for messages. */
const shown = (counters: Counters) =>
  Object.entries(counters)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(' ');

describe('traffic counters of the ovs driver on a real Open vSwitch', function () {
  this.timeout(120_000);
  let fabric: OvsFabric | undefined;
  let driver: OvsDriver;

  before(async function () {
    fabric = await startFabric(this, 'ixapi-ovs-counters-', [FABRIC]);
    driver = new OvsDriver(fabric);
  });

  after(async () => {
    if (fabric) await stopFabric(fabric);
  });

  /**
   * The growth of the counters of `names` since `before`, once `done` holds of it: OVS writes an
   * interface's statistics to OVSDB every five seconds, and a rule's a moment after the datapath
   * counted them.
   */
  async function growthUntil(
    device: string,
    before: CounterReading[],
    done: (growth: Map<string, Counters>) => boolean,
  ): Promise<Map<string, Counters>> {
    const names = before.map((reading) => reading.interface);
    let last = new Map<string, Counters>();
    try {
      return await eventually(
        'the counters showing the traffic',
        async () => {
          const after = await driver.readCounters(device, names);
          last = new Map(after.map((reading, index) => [reading.interface, grown(before[index], reading)]));
          return done(last) ? last : undefined;
        },
        20_000,
        250,
      );
    } catch (error) {
      throw new Error(
        `${(error as Error).message}; last growth: ${[...last].map(([name, counters]) => `${name} ${shown(counters)}`).join('; ')}`,
        {
          cause: error,
        },
      );
    }
  }

  describe('on a device of its own', () => {
    const [first, second, third, fourth] = PORTS;
    const service = (name: string, parent: string, extra: Partial<ServiceAttachment>) =>
      serviceAttachment(name, parent, { segment: 'counted-ping', ...extra });

    before(async () => {
      const candidate = await driver.load({
        device: DEVICE,
        interfaces: PORTS.map((name) => ({ name, description: 'counted', enabled: true })),
        services: [
          service('counted-a', first, {}),
          service('counted-b', second, {}),
          service('counted-c', third, {
            segment: 'counted-tags',
            vlanType: 'dot1q',
            outerVlan: 100,
            rateLimit: 1,
          }),
          service('counted-d', fourth, {
            segment: 'counted-tags',
            vlanType: 'qinq',
            outerVlan: 300,
            innerVlan: 30,
          }),
        ],
      });
      await driver.commit(candidate.id, `counted-${Date.now()}`);
      for (const [index, port] of [first, second].entries())
        await inCustomerSide(DEVICE, port, [
          'ip',
          'addr',
          'add',
          `198.51.100.${index + 1}/24`,
          'dev',
          linkOf(DEVICE, port).customerEnd,
        ]);
    });

    it('counts a ping between two customer sides on both interfaces, both ways', async () => {
      const before = await driver.readCounters(DEVICE, [first, second]);
      const [count, size] = [20, 1000];
      // An echo request or reply: Ethernet, IPv4 and ICMP headers around the payload.
      const frame = 14 + 20 + 8 + size;
      await inCustomerSide(DEVICE, first, [
        'ping',
        '-q',
        '-c',
        String(count),
        '-i',
        '0.01',
        '-s',
        String(size),
        '-W',
        '1',
        '198.51.100.2',
      ]);
      const growth = await growthUntil(DEVICE, before, (seen) =>
        [...seen.values()].every(
          (counters) => counters.octetsIn >= count * frame && counters.octetsOut >= count * frame,
        ),
      );
      for (const port of [first, second]) {
        const counters = growth.get(port)!;
        assert.ok(counters.packetsIn >= count && counters.packetsOut >= count, `${port}: ${shown(counters)}`);
        assert.equal(counters.errorsIn + counters.errorsOut, 0n, port);
      }
    });

    it("counts tagged frames on the sub-interfaces of the services they enter and leave, and what a service's meter drops", async () => {
      const names = [third, fourth, `${third}.100`, `${fourth}.300`];
      const before = await driver.readCounters(DEVICE, names);
      // 600 frames of 1000 octets into the service limited to 1 Mbit/s (a burst of 125 kB), a
      // millisecond apart: far faster than the 3.8 s the rest would take at that rate, so its meter
      // drops some.
      await sendTaggedFrames(DEVICE, third, {
        to: await customerMac(DEVICE, fourth),
        tags: [100],
        size: 1000,
        count: 600,
      });
      await sendTaggedFrames(DEVICE, fourth, {
        to: await customerMac(DEVICE, third),
        tags: [300, 30],
        size: 600,
        count: 50,
      });
      const growth = await growthUntil(DEVICE, before, (seen) => {
        const [tagged, stacked] = [seen.get(`${third}.100`)!, seen.get(`${fourth}.300`)!];
        return (
          tagged.packetsIn === 600n &&
          stacked.packetsIn === 50n &&
          seen.get(third)!.octetsIn >= 600n * 1000n &&
          seen.get(fourth)!.octetsOut >= stacked.octetsOut &&
          seen.get(third)!.octetsOut >= tagged.octetsOut
        );
      });
      const tagged = growth.get(`${third}.100`)!;
      const stacked = growth.get(`${fourth}.300`)!;
      // What entered each service, tags included, and what the meter dropped of it.
      assert.equal(tagged.octetsIn, 600n * 1000n);
      assert.ok(tagged.discardsIn > 0n && tagged.discardsIn < 600n, `dropped ${tagged.discardsIn}`);
      assert.deepEqual([stacked.packetsIn, stacked.octetsIn, stacked.discardsIn], [50n, 50n * 600n, 0n]);
      // What left each: the other's frames, less what the meter dropped, with the tags swapped
      // (one tag of 4 octets for two of 8, and back).
      const passed = 600n - tagged.discardsIn;
      assert.deepEqual([stacked.packetsOut, stacked.octetsOut], [passed, passed * 1004n]);
      assert.deepEqual([tagged.packetsOut, tagged.octetsOut], [50n, 50n * 596n]);
      // The interfaces carried that (and the customer sides' untagged chatter, which no service takes).
      assert.equal(growth.get(fourth)!.packetsOut, passed, 'the exchange end sent what the services sent');
      assert.equal(growth.get(fourth)!.octetsOut, passed * 1004n);
      assert.equal(growth.get(third)!.octetsOut, 50n * 596n);
      assert.ok(growth.get(third)!.packetsIn >= 600n && growth.get(fourth)!.octetsIn >= 50n * 600n);
    });

    it('refuses a name the device does not have, naming it, and reads nothing', async () => {
      for (const name of ['et-9/9/9', `${first}.4095`, 'et-9/9/9.100']) {
        await assert.rejects(
          driver.readCounters(DEVICE, [first, name]),
          (error) =>
            error instanceof DriverError &&
            error.code === 'invalid-config' &&
            error.message.endsWith(` ${name}`),
        );
      }
      // A sub-interface of a known interface on a tag no service takes carries nothing.
      const [quiet] = await driver.readCounters(DEVICE, [`${first}.42`]);
      assert.deepEqual([quiet.octetsIn, quiet.octetsOut], [0n, 0n]);
    });

    it('says a fabric that does not answer is unreachable', async () => {
      const nowhere = new OvsDriver(new OvsFabric(path.join(fabric!.runDir, 'nowhere')));
      await assert.rejects(
        nowhere.readCounters(DEVICE, [first, `${first}.100`]),
        (error) => error instanceof DriverError && error.code === 'unreachable' && error.retryable,
      );
    });
  });

  describe('through the sampling to the API', () => {
    after(() => settleConnections());

    it("shows the traffic between two connections' exchange-LAN configs in their statistics", async () => {
      const { accessToken: token } = await login('customer', 0);
      const connections = [await liveConnection(token), await liveConnection(token)];
      // An exchange LAN takes frames only from the MACs a config names: each customer side sends
      // from its config's.
      const macs = ['02:00:5e:00:53:21', '02:00:5e:00:53:22'];
      const configs: string[] = [];
      for (const [index, connection] of connections.entries()) {
        const mac = await request('POST', '/macs', {
          token,
          body: { managing_account: SPREE, consuming_account: SPREE, address: macs[index] },
        });
        assert.equal(mac.status, 201, mac.text);
        const created = await request('POST', '/network-service-configs', {
          token,
          body: configOrder(connection, { macs: [mac.body.id] }),
        });
        assert.equal(created.status, 201, created.text);
        configs.push(created.body.id as string);
        await reaches(token, `/network-service-configs/${created.body.id}`, 'production');
      }
      const device = await deviceOf(connections[0]);
      assert.equal(await deviceOf(connections[1]), device, 'both connections on one device');
      const { sequelize } = stack().db;
      const select = <T extends object>(sql: string, replacements: Record<string, unknown>) =>
        sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
      const ports = await select<{ connection: string; name: string; speed: number }>(
        'SELECT connection, name, speed FROM ports WHERE connection IN (:connections) ORDER BY name',
        { connections },
      );
      const portOf = (connection: string) => ports.find((port) => port.connection === connection)!.name;
      const vlanOf = async (config: string) =>
        Number(
          (
            await select<{ outer_vlan: number }>(
              'SELECT outer_vlan FROM network_service_configs WHERE id = :config',
              { config },
            )
          )[0].outer_vlan,
        );
      const [portA, portB] = connections.map(portOf);
      const [vlanA, vlanB] = [await vlanOf(configs[0]), await vlanOf(configs[1])];

      // The device joins the fabric with the two connections' ports; the worker's activities,
      // under the ovs driver, configure it and sample it.
      await fabric!.up([{ device, ports: ports.map(({ name, speed }) => ({ name, speed: Number(speed) })) }]);
      const activities = activitiesFor(stack().db, {
        ...stack().config,
        deviceDriver: 'ovs',
        ovsRunDir: fabric!.runDir,
      });
      for (const connectionId of connections)
        await activities.configureConnection({ connectionId, key: `counted-${connectionId}` });
      for (const configId of configs) await activities.configureNetworkServiceConfig({ configId });
      for (const [index, port] of [portA, portB].entries())
        await inCustomerSide(device, port, [
          'ip',
          'link',
          'set',
          'dev',
          linkOf(device, port).customerEnd,
          'address',
          macs[index],
        ]);

      const names = [portA, portB, `${portA}.${vlanA}`, `${portB}.${vlanB}`];
      const before = await driver.readCounters(device, names);
      const first = await activities.sampleTraffic({ intervalSeconds: 1 });
      assert.ok(first.sampled >= 4, `sampled ${JSON.stringify(first)}`);
      await sendTaggedFrames(device, portA, {
        to: await customerMac(device, portB),
        tags: [vlanA],
        size: 800,
        count: 200,
      });
      await sendTaggedFrames(device, portB, {
        to: await customerMac(device, portA),
        tags: [vlanB],
        size: 500,
        count: 50,
      });
      await growthUntil(device, before, (seen) => {
        const [a, b] = [seen.get(portA)!, seen.get(portB)!];
        return (
          seen.get(`${portA}.${vlanA}`)!.packetsIn === 200n &&
          seen.get(`${portB}.${vlanB}`)!.packetsIn === 50n &&
          a.octetsIn >= 200n * 800n &&
          a.octetsOut >= 50n * 500n &&
          b.octetsIn >= 50n * 500n &&
          b.octetsOut >= 200n * 800n
        );
      });
      await activities.sampleTraffic({ intervalSeconds: 1 });

      // The window from the first round's samples to the second's.
      const [window] = await select<{ start: Date; end: Date }>(
        `SELECT MIN(sampled_at) AS start, MAX(sampled_at) AS end FROM traffic_samples
          WHERE subject_id IN (:subjects)`,
        { subjects: [...connections, ...configs] },
      );
      const seconds = (new Date(window.end).getTime() - new Date(window.start).getTime()) / 1000;
      const query = `start=${encodeURIComponent(new Date(window.start).toISOString())}&end=${encodeURIComponent(new Date(window.end).toISOString())}`;
      /** Octets and packets in and out over the window, from the averages the API shows. */
      const carried = async (subject: string) => {
        const response = await request('GET', `${subject}/statistics?${query}`, { token });
        assert.equal(response.status, 200, response.text);
        const custom = response.body.aggregates.custom as Record<string, number>;
        assert.ok(custom.accuracy > 0, `${subject}: ${JSON.stringify(custom)}`);
        return {
          octetsIn: custom.average_ops_in * seconds,
          octetsOut: custom.average_ops_out * seconds,
          packetsIn: custom.average_pps_in * seconds,
          packetsOut: custom.average_pps_out * seconds,
        };
      };
      // Averages are whole octets and packets per second: half of one per second either way.
      const about = (figure: number, expected: number, what: string) =>
        assert.ok(Math.abs(figure - expected) <= seconds, `${what}: ${figure}, not about ${expected}`);

      const [configA, configB] = [
        await carried(`/network-service-configs/${configs[0]}`),
        await carried(`/network-service-configs/${configs[1]}`),
      ];
      about(configA.octetsIn, 200 * 800, 'octets into the first config');
      about(configA.packetsIn, 200, 'packets into the first config');
      about(configA.octetsOut, 50 * 500, 'octets out of the first config');
      about(configB.octetsIn, 50 * 500, 'octets into the second config');
      about(configB.octetsOut, 200 * 800, 'octets out of the second config');
      about(configB.packetsOut, 200, 'packets out of the second config');

      const [connectionA, connectionB] = [
        await carried(`/connections/${connections[0]}`),
        await carried(`/connections/${connections[1]}`),
      ];
      for (const [what, figure, least] of [
        ['into the first connection', connectionA.octetsIn, 200 * 800],
        ['out of the first connection', connectionA.octetsOut, 50 * 500],
        ['into the second connection', connectionB.octetsIn, 50 * 500],
        ['out of the second connection', connectionB.octetsOut, 200 * 800],
      ] as const)
        assert.ok(figure >= least - seconds, `octets ${what}: ${figure}, fewer than ${least}`);

      // The exchange LAN shows the customer what its two configs carry together.
      const lan = await carried(`/network-services/${FRA_LAN}`);
      about(lan.octetsIn, 200 * 800 + 50 * 500, 'octets into the exchange LAN');
      about(lan.octetsOut, 200 * 800 + 50 * 500, 'octets out of the exchange LAN');
    });
  });
});
