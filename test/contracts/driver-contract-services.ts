import assert from 'node:assert/strict';
import type { DeviceDriver, DeviceIntent, ServiceAttachment } from '../../drivers/contract';
import type { ContractScope } from './driver-contract-support';
import { dot1q, expectDriverError, key, qinq, service, untagged } from './driver-contract-support';

/** The contract for services: VLAN attachments on interfaces and LAGs, with their MACs, segments and filters. */
export function describeServiceContract(scope: ContractScope): void {
  let driver: DeviceDriver;
  let device: string;
  let a: string, b: string, c: string, d: string;
  before(() => ({ driver, device, a, b, c, d } = scope));
  const { apply, read, readServices, lagMode, servicesSupported, bundleParent } = scope;

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
    assert.deepEqual(await readServices([closed.name]), [closed], 'with its last MAC gone it stays filtered');

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
}
