import assert from 'node:assert/strict';
import type { DeviceDriver, DeviceIntent, InterfaceState, LagConfig } from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import type { ContractScope, DriverUnderTest } from './driver-contract-support';
import { byName, dot1q, expectDriverError, key, PEER_V4, service, session } from './driver-contract-support';
import { describeReadingContract } from './driver-contract-readings';
import { describeServiceContract } from './driver-contract-services';
import { describeSessionContract } from './driver-contract-sessions';

export type { DriverUnderTest } from './driver-contract-support';

/**
 * The behaviour every device driver must show, whatever the device behind it. Run it for a driver
 * with `describeDriverContract('name', setup)` inside a mocha file.
 */
export function describeDriverContract(name: string, setup: () => Promise<DriverUnderTest>): void {
  describe(`device driver contract: ${name}`, () => {
    let driver: DeviceDriver;
    let device: string;
    let a: string, b: string, c: string, d: string;
    let routeServer: string | undefined;

    const apply = async (intent: Omit<DeviceIntent, 'device'>) => {
      const candidate = await driver.load({ device, ...intent });
      return driver.commit(candidate.id, key());
    };
    const read = async (names: string[]) => driver.readInterfaces(device, names);
    const readServices = async (names?: string[]) => byName(await driver.readServices(device, names));
    const lagMode = (): Pick<LagConfig, 'mode' | 'lacpTimeout'> =>
      driver.capabilities.lacp
        ? { mode: 'lacp', lacpTimeout: 'fast' }
        : { mode: 'static', lacpTimeout: null };

    /** Without the capability, a driver refuses services and reads none; says whether it has it. */
    const servicesSupported = async (): Promise<boolean> => {
      if (driver.capabilities.services) return true;
      const intent: DeviceIntent = { device, services: [service('contract-svc', a, dot1q(100))] };
      await expectDriverError(driver.load(intent), 'invalid-config');
      assert.deepEqual(await driver.readServices(device), []);
      return false;
    };

    /**
     * The route server to hold sessions on, or none where the driver lacks `bgpSessions`: it then
     * refuses sessions and reads none.
     */
    const sessionsHost = async (): Promise<string | undefined> => {
      if (!driver.capabilities.bgpSessions) {
        const host = routeServer ?? device;
        const intent: DeviceIntent = { device: host, bgpSessions: [session('contract-rs', PEER_V4)] };
        await expectDriverError(driver.load(intent), 'invalid-config');
        assert.deepEqual(await driver.readBgpSessions(host), []);
        return undefined;
      }
      assert.ok(routeServer, 'a driver with BGP sessions is tested on a route server (routeServer)');
      return routeServer;
    };
    const applyOn = async (host: string, intent: Omit<DeviceIntent, 'device'>) => {
      const candidate = await driver.load({ device: host, ...intent });
      return driver.commit(candidate.id, key());
    };
    const readSessions = async (host: string, names?: string[]) =>
      byName(await driver.readBgpSessions(host, names));
    const ourSessions = async (host: string) =>
      (await readSessions(host)).filter((s) => s.name.startsWith('contract-'));

    /** A LAG of a and b to put services on, or interface d where the driver builds no LAGs. */
    const bundleParent = async (): Promise<string> => {
      if (!driver.capabilities.lags) return d;
      await apply({
        lags: [{ name: 'contract-svc-lag', description: '', ...lagMode(), members: [a, b] }],
      });
      return 'contract-svc-lag';
    };

    before(async () => {
      const subject = await setup();
      driver = subject.driver;
      device = subject.device;
      assert.ok(subject.interfaces.length >= 4, 'the contract tests need four interfaces');
      [a, b, c, d] = subject.interfaces;
      routeServer = subject.routeServer;
    });

    // Every test starts from the same state: none of its LAGs or services, the four interfaces
    // disabled and blank.
    beforeEach(async () => {
      const lags = await driver.readLags(device);
      const services = driver.capabilities.services ? await driver.readServices(device) : [];
      const ours = (names: string[]) => names.filter((name) => name.startsWith('contract-'));
      await apply({
        interfaces: [a, b, c, d].map((n) => ({ name: n, description: '', enabled: false })),
        removeLags: ours(lags.map((lag) => lag.name)),
        ...(driver.capabilities.services ? { removeServices: ours(services.map((s) => s.name)) } : {}),
      });
      if (driver.capabilities.bgpSessions && routeServer) {
        const sessions = await ourSessions(routeServer);
        if (sessions.length) await applyOn(routeServer, { removeBgpSessions: sessions.map((s) => s.name) });
      }
    });

    it('reads its interfaces, all of them or the ones named', async () => {
      const all = await driver.readInterfaces(device);
      const names = all.map((i) => i.name);
      assert.equal(new Set(names).size, names.length, 'interface names are unique');
      for (const n of [a, b, c, d]) assert.ok(names.includes(n), n);
      const one = await read([a]);
      assert.deepEqual(
        one.map((i) => i.name),
        [a],
      );
      assert.equal(typeof one[0].speed, 'number');
      assert.deepEqual(
        { lag: one[0].lag, enabled: one[0].enabled, operUp: one[0].operUp },
        {
          lag: null,
          enabled: false,
          operUp: false,
        },
      );
    });

    it('finds nothing to change in an intent equal to what runs', async () => {
      const candidate = await driver.load({
        device,
        interfaces: [{ name: a, description: '', enabled: false }],
      });
      assert.deepEqual(candidate.changes, []);
      assert.deepEqual(await driver.diff(candidate.id), []);
    });

    it('changes nothing on load, and exactly the diff on commit', async () => {
      const before = await read([a, b]);
      const candidate = await driver.load({
        device,
        interfaces: [{ name: a, description: 'cust-1', enabled: true }],
      });
      const diff = await driver.diff(candidate.id);
      assert.deepEqual(
        diff.map((change) => [change.kind, change.name, change.action]),
        [['interface', a, 'update']],
      );
      assert.deepEqual(await read([a, b]), before, 'loading changed the device');
      const result = await driver.commit(candidate.id, key());
      assert.deepEqual(result.changes, diff);
      const [after, untouched] = await read([a, b]);
      assert.deepEqual(
        { description: after.description, enabled: after.enabled },
        { description: 'cust-1', enabled: true },
      );
      assert.deepEqual(untouched, before[1]);
    });

    it('commits a key once, whatever is committed under it again', async () => {
      const commitKey = key();
      const first = await driver.load({
        device,
        interfaces: [{ name: a, description: 'first', enabled: true }],
      });
      const done = await driver.commit(first.id, commitKey);
      assert.deepEqual(await driver.commit(first.id, commitKey), done, 'a retried commit answers the same');
      const second = await driver.load({
        device,
        interfaces: [{ name: b, description: 'second', enabled: true }],
      });
      assert.equal((await driver.commit(second.id, commitKey)).commitId, done.commitId);
      assert.equal((await read([b]))[0].description, '', 'the second candidate was applied under a used key');
    });

    it('refuses a candidate loaded before the device changed, until it is loaded again', async () => {
      const early = await driver.load({
        device,
        interfaces: [{ name: a, description: 'early', enabled: true }],
      });
      await apply({ interfaces: [{ name: b, description: 'meanwhile', enabled: true }] });
      const error = await expectDriverError(driver.commit(early.id, key()), 'stale-candidate');
      assert.equal(error.retryable, false);
      assert.equal((await read([a]))[0].description, '');
      await apply({ interfaces: [{ name: a, description: 'early', enabled: true }] });
      assert.equal((await read([a]))[0].description, 'early');
    });

    it('lets one of two candidates from the same state commit, and refuses the other', async () => {
      const one = await driver.load({ device, interfaces: [{ name: a, description: 'one', enabled: true }] });
      const two = await driver.load({ device, interfaces: [{ name: b, description: 'two', enabled: true }] });
      const results = await Promise.allSettled([driver.commit(one.id, key()), driver.commit(two.id, key())]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      assert.ok(refused.reason instanceof DriverError && refused.reason.code === 'stale-candidate');
      const descriptions = (await read([a, b])).map((i) => i.description).sort();
      assert.ok(
        ['["","one"]', '["","two"]'].includes(JSON.stringify(descriptions)),
        `both or neither applied: ${JSON.stringify(descriptions)}`,
      );
    });

    it('bundles interfaces in a LAG, changes it and takes it away (or refuses LAGs it cannot build)', async () => {
      if (!driver.capabilities.lags) {
        const intent: DeviceIntent = {
          device,
          lags: [
            { name: 'contract-bundle', description: '', mode: 'static', lacpTimeout: null, members: [a] },
          ],
        };
        await expectDriverError(driver.load(intent), 'invalid-config');
        return;
      }
      const lag = { name: 'contract-bundle', description: 'bundle', members: [b, a] };
      const mode = lagMode();
      await apply({ lags: [{ ...lag, ...mode }] });
      const [bundle] = await driver.readLags(device, ['contract-bundle']);
      assert.deepEqual(bundle, { ...lag, ...mode, members: [a, b].sort() });
      assert.deepEqual(
        (await read([a, b, c])).map((i) => i.lag),
        ['contract-bundle', 'contract-bundle', null],
      );
      await apply({ lags: [{ ...lag, ...mode, members: [a, c] }] });
      assert.deepEqual(
        (await read([a, b, c])).map((i) => i.lag),
        ['contract-bundle', null, 'contract-bundle'],
      );
      await apply({ removeLags: ['contract-bundle'] });
      assert.deepEqual(await driver.readLags(device, ['contract-bundle']), []);
      assert.deepEqual(
        (await read([a, b, c])).map((i) => i.lag),
        [null, null, null],
      );
    });

    it('refuses intents the device cannot take, and changes nothing', async () => {
      const before = await driver.readInterfaces(device);
      const refusals: DeviceIntent[] = [
        { device, interfaces: [{ name: 'no-such-interface', description: '', enabled: true }] },
        {
          device,
          lags: [{ name: 'contract-x', description: '', mode: 'static', lacpTimeout: 'fast', members: [a] }],
        },
        {
          device,
          lags: [{ name: 'contract-x', description: '', mode: 'lacp', lacpTimeout: 'slow', members: [] }],
        },
        {
          device,
          lags: [
            { name: 'contract-x', description: '', mode: 'static', lacpTimeout: null, members: [a, b] },
            { name: 'contract-y', description: '', mode: 'static', lacpTimeout: null, members: [b] },
          ],
        },
      ];
      for (const intent of refusals) {
        const error = await expectDriverError(driver.load(intent), 'invalid-config');
        assert.equal(error.retryable, false);
      }
      assert.deepEqual(await driver.readInterfaces(device), before);
    });

    it('rolls a commit back exactly, and a second time changes nothing (or refuses to roll back)', async () => {
      const snapshot = async () => ({
        interfaces: await read([a, b, c, d]),
        lags: await driver.readLags(device),
      });
      await apply({ interfaces: [{ name: d, description: 'kept', enabled: true }] });
      const before = await snapshot();
      const { commitId } = await apply({
        interfaces: [{ name: a, description: 'to undo', enabled: true }],
        lags: [
          { name: 'contract-undo', description: '', mode: 'static', lacpTimeout: null, members: [b, c] },
        ],
      });
      assert.notDeepEqual(await snapshot(), before);
      if (!driver.capabilities.rollback) {
        await expectDriverError(driver.rollback(device, commitId), 'rejected');
        return;
      }
      await driver.rollback(device, commitId);
      assert.deepEqual(await snapshot(), before);
      await driver.rollback(device, commitId);
      assert.deepEqual(await snapshot(), before);
    });

    /** What the contract's parts share of this suite: the driver and interfaces its before hook finds. */
    const scope: ContractScope = {
      get driver() {
        return driver;
      },
      get device() {
        return device;
      },
      get a() {
        return a;
      },
      get b() {
        return b;
      },
      get c() {
        return c;
      },
      get d() {
        return d;
      },
      get routeServer() {
        return routeServer;
      },
      apply,
      read,
      readServices,
      lagMode,
      servicesSupported,
      sessionsHost,
      applyOn,
      readSessions,
      ourSessions,
      bundleParent,
    };
    describeServiceContract(scope);
    describeSessionContract(scope);
    describeReadingContract(scope);
  });
}

/** Interfaces of one speed on one device, for the contract tests. */
export function sameSpeed(interfaces: readonly InterfaceState[], count = 4): string[] {
  const bySpeed = new Map<number, string[]>();
  for (const i of interfaces) bySpeed.set(i.speed, [...(bySpeed.get(i.speed) ?? []), i.name]);
  const group = [...bySpeed.values()].find((names) => names.length >= count);
  if (!group) throw new Error(`no ${count} interfaces of one speed`);
  return group.slice(0, count);
}
