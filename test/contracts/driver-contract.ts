import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  BgpSession,
  CounterReading,
  DeviceDriver,
  DeviceIntent,
  InterfaceState,
  LagConfig,
  ServiceAttachment,
} from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';

/** What the contract tests need of a driver under test. */
export interface DriverUnderTest {
  driver: DeviceDriver;
  device: string;
  /** At least four interfaces of one speed, in no LAG, that the tests may change freely. */
  interfaces: string[];
  /**
   * A route server whose sessions named `contract-…` the tests may change freely; a driver with
   * `bgpSessions` must name one.
   */
  routeServer?: string;
}

const key = () => `contract-${randomBytes(6).toString('hex')}`;

type Tags = Pick<ServiceAttachment, 'vlanType' | 'outerVlan' | 'innerVlan'>;
const untagged: Tags = { vlanType: 'port', outerVlan: null, innerVlan: null };
const dot1q = (tag: number): Tags => ({ vlanType: 'dot1q', outerVlan: tag, innerVlan: null });
const qinq = (outer: number, inner: number): Tags => ({
  vlanType: 'qinq',
  outerVlan: outer,
  innerVlan: inner,
});

const service = (
  name: string,
  parent: string,
  tags: Tags,
  extra: Partial<ServiceAttachment> = {},
): ServiceAttachment => ({
  name,
  description: '',
  parent,
  ...tags,
  macs: [],
  macFilter: false,
  rateLimit: null,
  segment: 'contract-segment',
  isolated: false,
  ...extra,
});

// Addresses outside the peering LANs of the demo catalogue (benchmarking and documentation ranges),
// so that the tests' sessions never take a member's address on a route server in use.
const PEER_V4 = '198.18.0.1';
const PEER_V4_OTHER = '198.18.0.2';
const PEER_V6 = '2001:db8:ffff::1';
const PEER_V6_OTHER = '2001:db8:ffff::2';

const session = (name: string, peerAddress: string, extra: Partial<BgpSession> = {}): BgpSession => ({
  name,
  peerAsn: 64496,
  peerAddress,
  passive: true,
  password: null,
  asSet: null,
  maxPrefix: null,
  insertIxpAsn: false,
  flags: [],
  ...extra,
});

const byName = <T extends { name: string }>(items: T[]): T[] =>
  [...items].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
const COUNTERS = [
  'octetsIn',
  'octetsOut',
  'packetsIn',
  'packetsOut',
  'errorsIn',
  'errorsOut',
  'discardsIn',
  'discardsOut',
] as const;

/** The counters of a reading alone, to compare readings of different instants. */
const countersOf = (reading: CounterReading) => COUNTERS.map((name) => reading[name]);

async function expectDriverError(action: Promise<unknown>, code: DriverError['code']): Promise<DriverError> {
  try {
    await action;
  } catch (error) {
    assert.ok(error instanceof DriverError, `expected a DriverError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected a ${code} DriverError`);
}

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

    it('carries a dot1q service on a LAG and a qinq service on an interface: creates, reads, changes and removes them', async () => {
      if (!(await servicesSupported())) return;
      const lan = service('contract-lan', await bundleParent(), dot1q(100), {
        description: 'peering LAN',
        macs: ['02:00:5e:00:00:02', '02:00:5e:00:00:01'],
        rateLimit: 10000,
      });
      const vc = service('contract-vc', c, qinq(200, 300), { description: 'closed user group' });
      const names = [lan.name, vc.name];
      const candidate = await driver.load({ device, services: [vc, lan] });
      assert.deepEqual(
        candidate.changes.map((change) => [change.kind, change.name, change.action]),
        [
          ['service', lan.name, 'create'],
          ['service', vc.name, 'create'],
        ],
      );
      assert.deepEqual(await readServices(names), [], 'loading changed the device');
      await driver.commit(candidate.id, key());
      const created = { ...lan, macs: ['02:00:5e:00:00:01', '02:00:5e:00:00:02'] };
      assert.deepEqual(await readServices(names), [created, vc], 'MACs read back sorted');
      assert.deepEqual(await readServices([vc.name]), [vc]);

      const changedLan = { ...created, macs: ['02:00:5e:00:00:03'], rateLimit: null };
      const changedVc = { ...vc, macs: ['02:00:5e:00:00:04'], rateLimit: 1000 };
      const { changes } = await apply({ services: [changedLan, changedVc] });
      assert.deepEqual(
        changes.map((change) => [change.kind, change.name, change.action]),
        [
          ['service', lan.name, 'update'],
          ['service', vc.name, 'update'],
        ],
      );
      assert.deepEqual(await readServices(names), [changedLan, changedVc]);

      await apply({ removeServices: names });
      assert.deepEqual(await readServices(names), []);
    });

    it('carries out a change of segment or isolation alone, and reads it back', async () => {
      if (!(await servicesSupported())) return;
      const root = service('contract-root', c, dot1q(100), { segment: 'contract-p2mp' });
      const leaf = service('contract-leaf', d, dot1q(100), { segment: 'contract-p2mp', isolated: true });
      await apply({ services: [root, leaf] });
      assert.deepEqual(await readServices([root.name, leaf.name]), [leaf, root]);

      const moved = { ...root, segment: 'contract-lan' };
      const rooted = { ...leaf, isolated: false };
      const candidate = await driver.load({ device, services: [moved, rooted] });
      assert.deepEqual(
        candidate.changes.map((change) => [change.name, change.action, change.before, change.after]),
        [
          [leaf.name, 'update', leaf, rooted],
          [root.name, 'update', root, moved],
        ],
      );
      await driver.commit(candidate.id, key());
      assert.deepEqual(await readServices([root.name, leaf.name]), [rooted, moved]);
      assert.deepEqual((await driver.load({ device, services: [moved, rooted] })).changes, []);
    });

    it('keeps a service whose MACs filter even when it has none, reads it back as such, and changes the filter alone', async () => {
      if (!(await servicesSupported())) return;
      const closed = service('contract-closed', c, dot1q(100), { macFilter: true });
      const open = service('contract-open', d, dot1q(100));
      await apply({ services: [closed, open] });
      assert.deepEqual(await readServices([closed.name, open.name]), [closed, open]);
      assert.deepEqual((await driver.load({ device, services: [closed, open] })).changes, []);

      const listed = { ...closed, macs: ['02:00:5e:00:00:05'] };
      await apply({ services: [listed] });
      assert.deepEqual(await readServices([closed.name]), [listed]);
      await apply({ services: [closed] });
      assert.deepEqual(
        await readServices([closed.name]),
        [closed],
        'with its last MAC gone it stays filtered',
      );

      const opened = { ...closed, macFilter: false };
      const candidate = await driver.load({ device, services: [opened] });
      assert.deepEqual(
        candidate.changes.map((change) => [change.name, change.action, change.before, change.after]),
        [[closed.name, 'update', closed, opened]],
      );
      await driver.commit(candidate.id, key());
      assert.deepEqual(await readServices([closed.name]), [opened]);
    });

    it('refuses a service without a valid segment, isolation or MAC filter, and changes nothing', async () => {
      if (!(await servicesSupported())) return;
      const before = await readServices();
      const refusals: Array<Partial<ServiceAttachment>> = [
        { segment: '' },
        { segment: 'two words' },
        { segment: 'x'.repeat(81) },
        { segment: null as unknown as string },
        { isolated: 'yes' as unknown as boolean },
        { isolated: undefined },
        { macFilter: 'yes' as unknown as boolean },
        { macFilter: undefined },
      ];
      for (const change of refusals) {
        const intent: DeviceIntent = { device, services: [service('contract-bad', c, dot1q(100), change)] };
        const error = await expectDriverError(driver.load(intent), 'invalid-config');
        assert.equal(error.retryable, false);
        assert.match(error.message, /contract-bad/, 'the refusal names the service');
      }
      assert.deepEqual(await readServices(), before);
    });

    it('refuses services whose tags collide on one parent, and changes nothing', async () => {
      if (!(await servicesSupported())) return;
      await apply({
        services: [service('contract-d100', c, dot1q(100)), service('contract-q200', c, qinq(200, 300))],
      });
      const before = await readServices();
      const refusals: ServiceAttachment[][] = [
        // A dot1q tag taken, a qinq outer tag that is a dot1q tag, a qinq pair taken, an untagged
        // service on a tagged parent: against what runs, and within one intent.
        [service('contract-x', c, dot1q(100))],
        [service('contract-x', c, qinq(100, 5))],
        [service('contract-x', c, qinq(200, 300))],
        [service('contract-x', c, untagged)],
        [service('contract-x', d, dot1q(7)), service('contract-y', d, dot1q(7))],
        [service('contract-x', d, dot1q(7)), service('contract-y', d, qinq(7, 1))],
        [service('contract-x', d, qinq(8, 1)), service('contract-y', d, qinq(8, 1))],
      ];
      for (const services of refusals) {
        const error = await expectDriverError(driver.load({ device, services }), 'invalid-config');
        assert.equal(error.retryable, false);
      }
      assert.deepEqual(await readServices(), before);
      // The same tags on another parent fit, and so does another inner tag under a used outer one.
      await apply({
        services: [service('contract-x', d, dot1q(100)), service('contract-y', c, qinq(200, 301))],
      });
      assert.deepEqual(
        (await readServices()).map((s) => s.name).filter((name) => name.startsWith('contract-')),
        ['contract-d100', 'contract-q200', 'contract-x', 'contract-y'],
      );
    });

    it('gives an untagged (port) service the whole of its parent', async () => {
      if (!(await servicesSupported())) return;
      await apply({ services: [service('contract-port', d, untagged)] });
      for (const tags of [dot1q(100), qinq(100, 1), untagged])
        await expectDriverError(
          driver.load({ device, services: [service('contract-tagged', d, tags)] }),
          'invalid-config',
        );
      assert.deepEqual(await readServices(['contract-port', 'contract-tagged']), [
        service('contract-port', d, untagged),
      ]);
      await apply({
        removeServices: ['contract-port'],
        services: [service('contract-tagged', d, dot1q(100))],
      });
      assert.deepEqual(await readServices(['contract-port', 'contract-tagged']), [
        service('contract-tagged', d, dot1q(100)),
      ]);
      await expectDriverError(
        driver.load({ device, services: [service('contract-port', d, untagged)] }),
        'invalid-config',
      );
    });

    it('keeps a LAG carrying services until they go or move in the same intent', async () => {
      if (!(await servicesSupported()) || !driver.capabilities.lags) return;
      const lag = await bundleParent();
      await apply({
        services: [
          service('contract-lan', lag, dot1q(100)),
          service('contract-vc', lag, qinq(200, 1)),
          service('contract-on-c', c, dot1q(100)),
        ],
      });
      const state = async () => ({
        lags: await driver.readLags(device, [lag]),
        services: await readServices(),
      });
      const before = await state();
      const refusals: DeviceIntent[] = [
        { device, removeLags: [lag] },
        { device, removeLags: [lag], removeServices: ['contract-lan'] },
        // An interface carrying a service cannot join a LAG.
        { device, lags: [{ name: lag, description: '', ...lagMode(), members: [a, b, c] }] },
      ];
      for (const intent of refusals) await expectDriverError(driver.load(intent), 'invalid-config');
      assert.deepEqual(await state(), before);
      await apply({
        removeLags: [lag],
        removeServices: ['contract-lan'],
        services: [service('contract-vc', d, qinq(200, 1))],
      });
      assert.deepEqual(await driver.readLags(device, [lag]), []);
      assert.deepEqual(await readServices(['contract-lan', 'contract-on-c', 'contract-vc']), [
        service('contract-on-c', c, dot1q(100)),
        service('contract-vc', d, qinq(200, 1)),
      ]);
    });

    it('rolls back services exactly (or refuses to roll back)', async () => {
      if (!(await servicesSupported())) return;
      await apply({
        services: [
          service('contract-kept', c, dot1q(100), { macs: ['02:00:5e:00:00:01'], rateLimit: 100 }),
          service('contract-gone', d, qinq(300, 30)),
        ],
      });
      const snapshot = async () => ({
        interfaces: await read([a, b, c, d]),
        lags: await driver.readLags(device),
        services: await readServices(),
      });
      const before = await snapshot();
      const lags = driver.capabilities.lags
        ? [{ name: 'contract-undo', description: '', ...lagMode(), members: [a, b] }]
        : [];
      const { commitId } = await apply({
        lags,
        services: [
          service('contract-kept', c, dot1q(101), {
            macs: ['02:00:5e:00:00:02'],
            macFilter: true,
            rateLimit: null,
            segment: 'contract-other-segment',
            isolated: true,
          }),
          service('contract-new', lags.length ? 'contract-undo' : a, qinq(300, 30)),
        ],
        removeServices: ['contract-gone'],
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

    it('commits services under a key once', async () => {
      if (!(await servicesSupported())) return;
      const commitKey = key();
      const first = await driver.load({ device, services: [service('contract-once', c, dot1q(100))] });
      const done = await driver.commit(first.id, commitKey);
      assert.deepEqual(await driver.commit(first.id, commitKey), done, 'a retried commit answers the same');
      const second = await driver.load({
        device,
        services: [service('contract-twice', c, dot1q(101))],
        removeServices: ['contract-once'],
      });
      assert.equal((await driver.commit(second.id, commitKey)).commitId, done.commitId);
      assert.deepEqual(await readServices(['contract-once', 'contract-twice']), [
        service('contract-once', c, dot1q(100)),
      ]);
    });

    it('holds a passive IPv4 and an active IPv6 session on a route server: creates, reads back, changes and removes them', async () => {
      const host = await sessionsHost();
      if (!host) return;
      const v4 = session('contract-rs-v4', PEER_V4, {
        asSet: 'AS-CONTRACT',
        maxPrefix: 100,
        flags: ['rpki-strict', 'no-export'],
      });
      const v6 = session('contract-rs-v6', PEER_V6, {
        peerAsn: 4200000000,
        passive: false,
        password: 'contract-Secret#1',
        asSet: 'AS-CONTRACT-V6',
        maxPrefix: 20,
        insertIxpAsn: true,
      });
      const names = [v4.name, v6.name];
      const candidate = await driver.load({ device: host, bgpSessions: [v6, v4] });
      assert.deepEqual(
        candidate.changes.map((change) => [change.kind, change.name, change.action]),
        [
          ['bgp_session', v4.name, 'create'],
          ['bgp_session', v6.name, 'create'],
        ],
      );
      assert.deepEqual(await readSessions(host, names), [], 'loading changed the device');
      await driver.commit(candidate.id, key());
      const created = { ...v4, flags: ['no-export', 'rpki-strict'] };
      assert.deepEqual(await readSessions(host, names), [created, v6], 'flags read back sorted');
      assert.deepEqual(await readSessions(host, [v6.name]), [v6]);

      const changedV4 = { ...created, maxPrefix: 250, flags: ['no-export'], password: 'contract-new' };
      const changedV6 = { ...v6, maxPrefix: null, flags: ['graceful-shutdown'], password: null };
      const { changes } = await applyOn(host, { bgpSessions: [changedV4, changedV6] });
      assert.deepEqual(
        changes.map((change) => [change.kind, change.name, change.action]),
        [
          ['bgp_session', v4.name, 'update'],
          ['bgp_session', v6.name, 'update'],
        ],
      );
      assert.deepEqual(await readSessions(host, names), [changedV4, changedV6]);

      await applyOn(host, { removeBgpSessions: names });
      assert.deepEqual(await readSessions(host, names), []);
    });

    it('refuses two sessions with one peer address, and changes nothing', async () => {
      const host = await sessionsHost();
      if (!host) return;
      await applyOn(host, {
        bgpSessions: [session('contract-rs-v4', PEER_V4), session('contract-rs-v6', PEER_V6)],
      });
      const before = await ourSessions(host);
      const refusals: BgpSession[][] = [
        // A running session's address, another running session moved onto it, and two new ones.
        [session('contract-rs-x', PEER_V4, { peerAsn: 64497 })],
        [session('contract-rs-v6', PEER_V4)],
        [session('contract-rs-x', PEER_V6_OTHER), session('contract-rs-y', PEER_V6_OTHER)],
      ];
      for (const bgpSessions of refusals) {
        const error = await expectDriverError(driver.load({ device: host, bgpSessions }), 'invalid-config');
        assert.equal(error.retryable, false);
      }
      assert.deepEqual(await ourSessions(host), before);
      // An address freed in the same intent may be taken.
      await applyOn(host, {
        removeBgpSessions: ['contract-rs-v4'],
        bgpSessions: [session('contract-rs-x', PEER_V4, { peerAsn: 64497 })],
      });
      assert.deepEqual(
        (await ourSessions(host)).map((s) => [s.name, s.peerAddress]),
        [
          ['contract-rs-v6', PEER_V6],
          ['contract-rs-x', PEER_V4],
        ],
      );
    });

    it('refuses sessions with an invalid peer ASN or address, and changes nothing', async () => {
      const host = await sessionsHost();
      if (!host) return;
      await applyOn(host, { bgpSessions: [session('contract-rs-v4', PEER_V4)] });
      const before = await ourSessions(host);
      const refusals: Array<Partial<BgpSession>> = [
        { peerAsn: 0 },
        { peerAsn: 23456 },
        { peerAsn: 4294967295 },
        { peerAddress: '198.18.0.256' },
        { peerAddress: 'rs.example.net' },
        { peerAddress: '2001:DB8:FFFF::3' },
        { peerAddress: '2001:db8:ffff:0:0::3' },
      ];
      for (const change of refusals) {
        const intent: DeviceIntent = {
          device: host,
          bgpSessions: [session('contract-rs-bad', PEER_V4_OTHER, change)],
        };
        const error = await expectDriverError(driver.load(intent), 'invalid-config');
        assert.equal(error.retryable, false);
        assert.match(error.message, /contract-rs-bad/, 'the refusal names the session');
      }
      assert.deepEqual(await ourSessions(host), before);
    });

    it('rolls back sessions exactly (or refuses to roll back)', async () => {
      const host = await sessionsHost();
      if (!host) return;
      await applyOn(host, {
        bgpSessions: [
          session('contract-rs-kept', PEER_V4, { password: 'kept', maxPrefix: 10, flags: ['no-export'] }),
          session('contract-rs-gone', PEER_V6, { passive: false, asSet: 'AS-GONE' }),
        ],
      });
      const before = await ourSessions(host);
      const { commitId } = await applyOn(host, {
        removeBgpSessions: ['contract-rs-gone'],
        bgpSessions: [
          session('contract-rs-kept', PEER_V4, { password: null, maxPrefix: 20, flags: ['rpki-strict'] }),
          // The new session takes the address the removed one frees.
          session('contract-rs-new', PEER_V6, { insertIxpAsn: true }),
        ],
      });
      assert.notDeepEqual(await ourSessions(host), before);
      if (!driver.capabilities.rollback) {
        await expectDriverError(driver.rollback(host, commitId), 'rejected');
        return;
      }
      await driver.rollback(host, commitId);
      assert.deepEqual(await ourSessions(host), before);
      await driver.rollback(host, commitId);
      assert.deepEqual(await ourSessions(host), before);
    });

    it('commits sessions under a key once', async () => {
      const host = await sessionsHost();
      if (!host) return;
      const commitKey = key();
      const first = await driver.load({ device: host, bgpSessions: [session('contract-rs-once', PEER_V4)] });
      const done = await driver.commit(first.id, commitKey);
      assert.deepEqual(await driver.commit(first.id, commitKey), done, 'a retried commit answers the same');
      const second = await driver.load({
        device: host,
        bgpSessions: [session('contract-rs-twice', PEER_V6)],
        removeBgpSessions: ['contract-rs-once'],
      });
      assert.equal((await driver.commit(second.id, commitKey)).commitId, done.commitId);
      assert.deepEqual(await ourSessions(host), [session('contract-rs-once', PEER_V4)]);
    });

    it('reads the optics of its interfaces (none where it cannot)', async () => {
      const readings = await driver.readOptics(device, [a, b]);
      if (!driver.capabilities.optics) {
        assert.deepEqual(readings, []);
        return;
      }
      assert.deepEqual(
        readings.map((r) => r.interface),
        [a, b],
      );
      for (const reading of readings) {
        assert.ok(Number.isFinite(reading.rxDbm) && Number.isFinite(reading.txDbm));
        assert.equal(typeof reading.inRange, 'boolean');
      }
    });

    /** Reads counters again until the device's clock has moved on from `after`. */
    const readLater = async (names: string[], after: string): Promise<CounterReading[]> => {
      for (let attempt = 0; ; attempt += 1) {
        const readings = await driver.readCounters(device, names);
        if (readings[0].readAt > after || attempt >= 200) return readings;
        await sleep(10);
      }
    };

    it('reads counters that only grow, all of one read at one instant (none where it cannot)', async () => {
      if (!driver.capabilities.counters) {
        assert.deepEqual(await driver.readCounters(device, [a]), []);
        return;
      }
      await apply({ interfaces: [{ name: a, description: 'counted', enabled: true }] });
      const first = await driver.readCounters(device, [a, b]);
      assert.deepEqual(
        first.map((r) => r.interface),
        [a, b],
      );
      assert.equal(new Set(first.map((r) => r.readAt)).size, 1, 'one instant for the whole read');
      for (const reading of first)
        for (const value of countersOf(reading)) assert.ok(typeof value === 'bigint' && value >= 0n);
      const later = await readLater([a, b], first[0].readAt);
      assert.ok(later[0].readAt > first[0].readAt, 'the device clock moves on');
      for (const [index, reading] of later.entries())
        for (const [at, value] of countersOf(reading).entries())
          assert.ok(value >= countersOf(first[index])[at], `${reading.interface} ${COUNTERS[at]} went down`);
      assert.deepEqual(countersOf(later[1]), countersOf(first[1]), 'a disabled interface carries no traffic');
      assert.deepEqual(await driver.readCounters(device, []), []);
    });

    it('counts a LAG as the sum of its members', async () => {
      if (!driver.capabilities.counters || !driver.capabilities.lags) return;
      await apply({
        interfaces: [a, b].map((name) => ({ name, description: 'counted', enabled: true })),
        lags: [
          { name: 'contract-counted', description: '', mode: 'static', lacpTimeout: null, members: [a, b] },
        ],
      });
      const [lag, first, second, service] = await driver.readCounters(device, [
        'contract-counted',
        a,
        b,
        'contract-counted.100',
      ]);
      for (const name of COUNTERS) assert.equal(lag[name], first[name] + second[name], name);
      assert.equal(service.interface, 'contract-counted.100', 'a sub-interface of the LAG');
    });

    it('reads sub-interfaces of its interfaces and LAGs on VLANs 1 to 4094', async () => {
      if (!driver.capabilities.counters) return;
      await apply({ interfaces: [{ name: a, description: 'counted', enabled: true }] });
      const readings = await driver.readCounters(device, [`${a}.1`, `${a}.4094`, a]);
      assert.deepEqual(
        readings.map((r) => r.interface),
        [`${a}.1`, `${a}.4094`, a],
      );
      for (const name of [`${a}.0`, `${a}.4095`, `${a}.x`, `no-such-interface.10`])
        await expectDriverError(driver.readCounters(device, [name]), 'invalid-config');
    });

    it('refuses to read counters of an interface it does not know', async () => {
      if (!driver.capabilities.counters) return;
      const error = await expectDriverError(
        driver.readCounters(device, [a, 'no-such-interface']),
        'invalid-config',
      );
      assert.equal(error.retryable, false);
    });
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
