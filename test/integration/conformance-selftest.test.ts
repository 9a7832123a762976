import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunSummary } from '../../conformance';
import { runConformance } from '../../conformance';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULTS } from '../../conformance/selftest/faults';
import type { ProxiedRequest } from '../../conformance/selftest/messages';
import { pathnameOf, problemResponse, readJson, withJson } from '../../conformance/selftest/messages';
import type { FaultProxy } from '../../conformance/selftest/proxy';
import { startFaultProxy } from '../../conformance/selftest/proxy';
import { ensureConnectionsOf } from '../support/connections';
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

const run = (proxy: FaultProxy) =>
  runConformance({
    baseUrl: proxy.url,
    profile: 'read',
    credentials: {
      primary: credentialsOf('acc-transit-partners'),
      secondary: credentialsOf('acc-thames-cloud'),
      subaccount: credentialsOf('acc-petit-reseau'),
    },
  });

describe('conformance self-test: every injected fault is caught', function () {
  this.timeout(120_000);
  let proxy: FaultProxy;
  const caughtBy = new Map<string, string[]>();

  before(async () => {
    await ensureConnectionsOf('acc-transit-partners');
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
    const summary = await run(proxy);
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
      const summary = await run(proxy);
      const checks = failing(summary).map((r) => r.id);
      caughtBy.set(fault.id, checks);
      assert.ok(checks.length > 0, `no check failed with fault ${fault.id} (${proxy.requests} requests)`);
    });
  }
});

/** Rewrites what GET /implementation claims. */
function claiming(req: ProxiedRequest, edit: (implementation: Record<string, unknown>) => void) {
  return (res: Parameters<NonNullable<Fault['response']>>[0]) => {
    if (req.method !== 'GET' || !pathnameOf(req).endsWith('/implementation')) return res;
    const implementation = readJson(res) as Record<string, unknown>;
    edit(implementation);
    return withJson(res, implementation);
  };
}

/** Where the catalogue lives, and what a server of nothing else still answers. */
const CATALOGUE = [
  'facilities',
  'devices',
  'pops',
  'metro-areas',
  'metro-area-networks',
  'product-offerings',
  'availability-zones',
];
const ALWAYS = ['auth/token', 'auth/refresh', 'health', 'implementation', 'extensions'];
const isCatalogueOperation = (operationId: string) =>
  /^(facilities|devices|pops|metro_areas|metro_area_networks|product_offerings|availability_zones)_(list|read)$/.test(
    operationId,
  ) ||
  /^(auth_token_create|auth_token_refresh|api_health_read|api_implementation_read|api_extensions_list)$/.test(
    operationId,
  );

/** Makes the server behind the proxy one that implements the catalogue and nothing else. */
const catalogueOnly: Fault = {
  id: 'catalogue-only',
  description: 'a server that implements the catalogue only',
  request(req) {
    const path = pathnameOf(req);
    const served = [...CATALOGUE, ...ALWAYS].some(
      (prefix) => path.endsWith(`/${prefix}`) || path.includes(`/${prefix}/`),
    );
    return served ? req : problemResponse(404, 'not-found', 'This server implements the catalogue only.');
  },
  response: (res, req) =>
    claiming(req, (implementation) => {
      implementation.supported_operations = (implementation.supported_operations as string[]).filter(
        isCatalogueOperation,
      );
    })(res),
};

describe('conformance suite: applicability and revisions', function () {
  this.timeout(120_000);
  let proxy: FaultProxy;

  before(async () => {
    proxy = await startFaultProxy({ target: stack().baseUrl });
  });
  after(() => proxy?.close());

  it('reports what a catalogue-only server does not declare as NOT_APPLICABLE, not failed', async () => {
    proxy.setFault(catalogueOnly);
    const summary = await run(proxy);
    assert.deepEqual(failing(summary).map(describeResult), []);
    const applicable = summary.results.filter((r) => r.outcome === 'PASS').map((r) => r.id);
    for (const id of [
      'COL-facilities_list',
      'PAG-devices_list',
      'READ-pops_read',
      'FLT-product_offerings_list',
    ])
      assert.ok(applicable.includes(id), `${id} was not judged`);
    for (const id of ['COL-accounts_list', 'SEC-connections_create', 'ISO-003', 'COL-ports_list']) {
      const result = summary.results.find((r) => r.id === id)!;
      assert.equal(result.outcome, 'NOT_APPLICABLE', `${id}: ${describeResult(result)}`);
    }
    assert.ok(summary.counts.NOT_APPLICABLE > summary.counts.PASS);
  });

  it('judges a server that claims the older revision by the older schemas, and says so', async () => {
    const older: Fault = {
      id: 'older-revision',
      description: 'a server claiming schema version 2.4.2',
      response: (res, req) =>
        claiming(req, (implementation) => (implementation.schema_version = '2.4.2'))(res),
    };
    proxy.setFault(older);
    const summary = await run(proxy);
    assert.deepEqual(failing(summary).map(describeResult), []);
    assert.equal(summary.schemaVersion, '2.4.2');
    assert.equal(summary.schemaRevision, 'older');
    assert.ok(summary.warnings.some((w) => w.includes('older than 2.6.0')));
    assert.equal(summary.results.find((r) => r.id === 'ISO-002')?.outcome, 'NOT_APPLICABLE');
  });

  it('catches, in the full profile, a page token that stays the same when the collection changes', async () => {
    proxy.setFault(FAULTS.find((fault) => fault.id === 'pagination-token-never-changes')!);
    const summary = await runConformance({
      baseUrl: proxy.url,
      profile: 'full',
      only: ['LIFE-001'],
      ledgerFile: path.join(mkdtempSync(path.join(tmpdir(), 'ixapi-selftest-')), 'ledger.jsonl'),
      credentials: { primary: credentialsOf('acc-transit-partners') },
    });
    const life = summary.results.find((r) => r.id === 'LIFE-001')!;
    assert.equal(life.outcome, 'FAIL', describeResult(life));
    assert.match(describeResult(life), /X-Pagination-Token of the account list stayed/);
  });

  it('fails a state the older revision does not have, which 2.6.0 accepts', async () => {
    const cancelled = (schemaVersion: string): Fault => ({
      id: 'cancelled-account',
      description: 'accounts are listed as cancelled',
      response(res, req) {
        res = claiming(req, (implementation) => (implementation.schema_version = schemaVersion))(res);
        const body = readJson(res);
        if (req.method !== 'GET' || !/\/accounts$/.test(pathnameOf(req)) || !Array.isArray(body)) return res;
        return withJson(
          res,
          body.map((account: Record<string, unknown>) =>
            'state' in account ? { ...account, state: 'cancelled' } : account,
          ),
        );
      },
    });
    proxy.setFault(cancelled('2.6.0'));
    assert.ok(!failing(await run(proxy)).some((r) => r.id === 'COL-accounts_list'));
    proxy.setFault(cancelled('2.4.2'));
    const olderRun = await run(proxy);
    const col = olderRun.results.find((r) => r.id === 'COL-accounts_list')!;
    assert.equal(col.outcome, 'FAIL', describeResult(col));
  });
});
