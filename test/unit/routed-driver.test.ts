import assert from 'node:assert/strict';
import type { DeviceDriver, DeviceIntent } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import { RoutedDriver } from '../../drivers/routed-driver';

/** A driver that answers with its own name and records what it was asked. */
function recordingDriver(kind: string, calls: string[], capabilities: Partial<DeviceDriver['capabilities']>) {
  const note = (call: string) => calls.push(`${kind} ${call}`);
  const driver: DeviceDriver = {
    kind,
    capabilities: {
      lags: false,
      lacp: false,
      optics: false,
      rollback: false,
      services: false,
      bgpSessions: false,
      counters: false,
      ...capabilities,
    },
    load: (intent: DeviceIntent) => {
      note(`load ${intent.device}`);
      return Promise.resolve({ id: `${kind}-candidate`, device: intent.device, changes: [] });
    },
    diff: (id) => (note(`diff ${id}`), Promise.resolve([])),
    commit: (id, key) => {
      note(`commit ${id}`);
      if (id !== `${kind}-candidate` && key !== `${kind}-key`)
        return Promise.reject(new DriverError('stale-candidate', `no candidate ${id}`));
      return Promise.resolve({ commitId: `${kind}-commit`, device: 'd', changes: [] });
    },
    rollback: (device) => (note(`rollback ${device}`), Promise.resolve()),
    readInterfaces: (device) => (note(`readInterfaces ${device}`), Promise.resolve([])),
    readLags: (device) => (note(`readLags ${device}`), Promise.resolve([])),
    readOptics: (device) => (note(`readOptics ${device}`), Promise.resolve([])),
    readServices: (device) => (note(`readServices ${device}`), Promise.resolve([])),
    readBgpSessions: (device) => (note(`readBgpSessions ${device}`), Promise.resolve([])),
    readCounters: (device) => (note(`readCounters ${device}`), Promise.resolve([])),
  };
  return driver;
}

describe('a driver routed by device', () => {
  let calls: string[];
  let routed: RoutedDriver;

  beforeEach(() => {
    calls = [];
    routed = new RoutedDriver({
      switches: recordingDriver('ovs', calls, { services: true, lags: true }),
      routeServers: recordingDriver('lab', calls, { bgpSessions: true, services: true, optics: true }),
      isRouteServer: (device) => Promise.resolve(device.startsWith('nf-')),
    });
  });

  it("has the switches' capabilities, with the route servers' BGP sessions", () => {
    assert.equal(routed.kind, 'ovs+lab');
    assert.deepEqual(routed.capabilities, {
      lags: true,
      lacp: false,
      optics: false,
      rollback: false,
      services: true,
      bgpSessions: true,
      counters: false,
    });
  });

  it('sends each call to the driver of the device it names, and a commit to the one that loaded it', async () => {
    const server = await routed.load({ device: 'nf-rs1', bgpSessions: [] });
    const port = await routed.load({ device: 'dev-sw1', interfaces: [] });
    await routed.commit(server.id, 'k1');
    await routed.commit(port.id, 'k2');
    await routed.diff(port.id);
    await routed.rollback('nf-rs1', 'c');
    await routed.readBgpSessions('nf-rs1');
    await routed.readServices('dev-sw1');
    await routed.readInterfaces('dev-sw1');
    await routed.readLags('nf-rs1');
    await routed.readOptics('dev-sw1', []);
    await routed.readCounters('dev-sw1', []);
    assert.deepEqual(calls, [
      'lab load nf-rs1',
      'ovs load dev-sw1',
      'lab commit lab-candidate',
      'ovs commit ovs-candidate',
      'ovs diff ovs-candidate',
      'lab rollback nf-rs1',
      'lab readBgpSessions nf-rs1',
      'ovs readServices dev-sw1',
      'ovs readInterfaces dev-sw1',
      'lab readLags nf-rs1',
      'ovs readOptics dev-sw1',
      'ovs readCounters dev-sw1',
    ]);
  });

  it('asks both drivers for the key of a candidate it does not know, and else says it is stale', async () => {
    assert.equal((await routed.commit('forgotten', 'lab-key')).commitId, 'lab-commit');
    assert.equal((await routed.commit('forgotten', 'ovs-key')).commitId, 'ovs-commit');
    await assert.rejects(
      routed.commit('forgotten', 'unknown-key'),
      (error) => error instanceof DriverError && error.code === 'stale-candidate',
    );
    await assert.rejects(
      routed.diff('forgotten'),
      (error) => error instanceof DriverError && error.code === 'stale-candidate',
    );
  });
});
