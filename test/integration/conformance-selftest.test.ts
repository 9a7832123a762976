import assert from 'node:assert/strict';
import type { RunSummary } from '../../conformance';
import { runConformance } from '../../conformance';
import { FAULTS } from '../../conformance/selftest/faults';
import type { FaultProxy } from '../../conformance/selftest/proxy';
import { startFaultProxy } from '../../conformance/selftest/proxy';
import { stack } from '../support/stack';

/**
 * The suite's proof of itself: a proxy between the suite and this (correct) server injects one
 * fault at a time; each fault must make at least one check fail, and without a fault every check
 * must pass. The read profile is used throughout: it is what runs against production servers.
 */

function credentialsOf(accountId: string) {
  const credential = stack().credentials.find((c) => c.accountId === accountId)!;
  return { api_key: credential.apiKey, api_secret: credential.apiSecret };
}

const failing = (summary: RunSummary) =>
  summary.results.filter((r) => r.outcome === 'FAIL' || r.outcome === 'TIMEOUT');

const describeResult = (r: RunSummary['results'][number]) =>
  `${r.id} ${r.outcome}: ${[r.reason, ...r.findings.map((f) => f.message)].filter(Boolean).join(' | ')}`;

describe('conformance self-test: every injected fault is caught', function () {
  this.timeout(120_000);
  let proxy: FaultProxy;
  const caughtBy = new Map<string, string[]>();

  const run = () =>
    runConformance({
      baseUrl: proxy.url,
      profile: 'read',
      credentials: {
        primary: credentialsOf('acc-transit-partners'),
        secondary: credentialsOf('acc-thames-cloud'),
        subaccount: credentialsOf('acc-petit-reseau'),
      },
    });

  before(async () => {
    proxy = await startFaultProxy({ target: stack().baseUrl });
  });

  after(async () => {
    await proxy?.close();
    if (!caughtBy.size) return;
    const width = Math.max(...[...caughtBy.keys()].map((id) => id.length));
    const rows = [...caughtBy].map(([id, checks]) => {
      const shown = checks.slice(0, 6).join(', ');
      return `  ${id.padEnd(width)}  ${checks.length ? `${shown}${checks.length > 6 ? `, … (${checks.length})` : ''}` : 'NOT CAUGHT'}`;
    });
    process.stdout.write(`\n  fault → checks that caught it\n${rows.join('\n')}\n`);
  });

  it('the correct server, through the proxy, passes every check', async () => {
    proxy.setFault(null);
    const summary = await run();
    assert.deepEqual(failing(summary).map(describeResult), []);
    assert.ok(proxy.requests > 0, 'the suite did not go through the proxy');
  });

  it(`injects at least 30 kinds of fault (${FAULTS.length})`, () => {
    assert.ok(FAULTS.length >= 30);
    assert.equal(new Set(FAULTS.map((f) => f.id)).size, FAULTS.length, 'fault ids are unique');
  });

  for (const fault of FAULTS) {
    it(`catches ${fault.id}: ${fault.description}`, async () => {
      proxy.setFault(fault);
      const summary = await run();
      const checks = failing(summary).map((r) => r.id);
      caughtBy.set(fault.id, checks);
      assert.ok(checks.length > 0, `no check failed with fault ${fault.id} (${proxy.requests} requests)`);
    });
  }
});
