import assert from 'node:assert/strict';
import type { StatusEntry } from '../../domain/status';
import { FakeActivities } from './support/fakes';
import { SIGNALS, eventually, withWorker } from './support/tier';

const accountId = 'acc-1';
const gap = (tag: string): StatusEntry => ({
  severity: 5,
  tag,
  message: `missing: ${tag}`,
  attrs: {},
  timestamp: new Date().toISOString(),
});

describe('onboardAccount', () => {
  it('says what is missing, looks again when the account changes, and takes it to production', async () => {
    let gaps: StatusEntry[] | null = [gap('noc_contact_missing'), gap('address_missing')];
    const recorded: StatusEntry[][] = [];
    const fakes = new FakeActivities()
      .on('checkAccountOnboarding', () => gaps)
      .on('recordAccountStatus', ({ status }) => {
        recorded.push(status);
      })
      .on('completeAccountOnboarding', () => 'production');
    await withWorker(fakes, async (run) => {
      const handle = await run.start<string>('onboardAccount', { accountId, recheckIntervalMs: 60_000 });
      await eventually('the first status', () => recorded.length === 1);
      assert.deepEqual(
        recorded[0].map((entry) => entry.tag),
        ['noc_contact_missing', 'address_missing'],
      );
      const shown = await handle.query<StatusEntry[]>('onboardingGapsQuery');
      assert.deepEqual(
        shown.map((entry) => entry.tag),
        ['noc_contact_missing', 'address_missing'],
      );
      gaps = [gap('address_missing')];
      await handle.signal(SIGNALS.accountChanged);
      await eventually('the second status', () => recorded.length === 2);
      assert.deepEqual(
        recorded[1].map((entry) => entry.tag),
        ['address_missing'],
      );
      assert.equal(fakes.callsOf('completeAccountOnboarding').length, 0);
      gaps = [];
      await handle.signal(SIGNALS.accountChanged);
      assert.equal(await handle.result(), 'production');
      assert.deepEqual(fakes.names(), [
        'checkAccountOnboarding',
        'recordAccountStatus',
        'checkAccountOnboarding',
        'recordAccountStatus',
        'checkAccountOnboarding',
        'completeAccountOnboarding',
      ]);
      assert.deepEqual(fakes.callsOf('completeAccountOnboarding')[0].input, { accountId });
    });
  });

  it('looks again after its recheck interval without a signal', async () => {
    let looks = 0;
    const fakes = new FakeActivities()
      .on('checkAccountOnboarding', () => (++looks < 2 ? [gap('noc_contact_missing')] : []))
      .on('recordAccountStatus', () => undefined)
      .on('completeAccountOnboarding', () => 'production');
    await withWorker(fakes, async (run) => {
      const handle = await run.start<string>('onboardAccount', { accountId, recheckIntervalMs: 200 });
      assert.equal(await handle.result(), 'production');
      assert.equal(fakes.callsOf('checkAccountOnboarding').length, 2);
    });
  });

  it('ends as deleted when the account was deleted while it waited', async () => {
    let gaps: StatusEntry[] | null = [gap('noc_contact_missing')];
    const fakes = new FakeActivities()
      .on('checkAccountOnboarding', () => gaps)
      .on('recordAccountStatus', () => undefined);
    await withWorker(fakes, async (run) => {
      const handle = await run.start<string>('onboardAccount', { accountId, recheckIntervalMs: 60_000 });
      await eventually('the status', () => fakes.callsOf('recordAccountStatus').length === 1);
      gaps = null;
      await handle.signal(SIGNALS.accountChanged);
      assert.equal(await handle.result(), 'deleted');
      assert.equal(fakes.callsOf('completeAccountOnboarding').length, 0);
    });
  });
});
