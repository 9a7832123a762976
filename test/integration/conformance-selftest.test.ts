import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { allChecks, runConformance } from '../../conformance/index';
import { CAUGHT_IN_READS, checksOf } from '../../conformance/selftest/caught-in-reads';
import { loadSpec } from '../../spec';
import type { Fault } from '../../conformance/selftest/faults';
import type { ProxiedRequest } from '../../conformance/selftest/messages';
import {
  pathnameOf,
  problemResponse,
  readJson,
  withHeaders,
  withJson,
} from '../../conformance/selftest/messages';
import type { FaultProxy } from '../../conformance/selftest/proxy';
import { PAGE_SIZE_FAULTS } from '../../conformance/selftest/page-size-faults';
import { startFaultProxy } from '../../conformance/selftest/proxy';
import {
  credentialsOf,
  describeResult,
  failing,
  FAULT_FAMILIES,
  FAULTS,
  PRIMARY,
  run,
} from '../support/conformance-selftest';
import { scratchFolder } from '../support/shared-stack';
import { stack } from '../support/stack';

/**
 * The conformance suite's faults, counted, and how it judges servers that implement less, throttle
 * it or claim an older revision. Whether each fault is caught is proven family by family in the
 * conformance-selftest-*.test.ts files (in parallel, each on a stack of its own).
 */

describe('conformance self-test: the faults', () => {
  it(`injects at least 30 kinds of fault (${FAULTS.length})`, () => {
    assert.ok(FAULTS.length >= 30);
    assert.equal(new Set(FAULTS.map((f) => f.id)).size, FAULTS.length, 'fault ids are unique');
    for (const fault of FAULTS.filter((f) => f.full))
      assert.ok(fault.full!.only.length > 0, `${fault.id} names no check to run in the full profile`);
  });

  it('names, for every fault a read run shows, read checks of the suite that catch it, and for no other', () => {
    const checks = new Set(allChecks(loadSpec()).map((check) => check.id));
    const reads = FAULTS.filter((f) => !f.full).map((f) => f.id);
    assert.deepEqual(Object.keys(CAUGHT_IN_READS).sort(), [...reads].sort());
    for (const [fault, caught] of Object.entries(CAUGHT_IN_READS)) {
      const { by, along } = checksOf(caught);
      assert.ok(by.length > 0, `${fault} names no check`);
      for (const id of by) assert.ok(checks.has(id), `${fault} names ${id}, which the suite does not have`);
      for (const selector of along)
        assert.ok(
          [...checks].some((id) => id === selector || (selector.endsWith('-') && id.startsWith(selector))),
          `${fault} runs ${selector} along, which selects no check`,
        );
    }
  });

  it('proves every fault caught in exactly one family file', () => {
    const inFamilies = Object.values(FAULT_FAMILIES).flatMap((faults) => faults.map((f) => f.id));
    assert.deepEqual([...inFamilies].sort(), FAULTS.map((f) => f.id).sort());
    for (const family of Object.keys(FAULT_FAMILIES)) {
      const file = path.join(__dirname, `conformance-selftest-${family}.test.ts`);
      assert.ok(existsSync(file), `${family}: no ${path.basename(file)}`);
      assert.match(readFileSync(file, 'utf8'), new RegExp(`describeFaultFamily\\(\\s*'${family}'`), family);
    }
  });
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

  it('judges the retries of a throttled run, fails nothing for it and says the run was throttled', async () => {
    let count = 0;
    proxy.setFault({
      id: 'throttled',
      description: 'every 40th request, four times, is answered 429 with Retry-After: 1',
      reset: () => {
        count = 0;
      },
      request(req) {
        count += 1;
        if (count % 40 || count > 160) return req;
        return withHeaders(problemResponse(429, 'too-many-requests', 'Slow down.'), { 'retry-after': '1' });
      },
    });
    const summary = await run(proxy);
    assert.deepEqual(failing(summary).map(describeResult), []);
    for (const id of ['RATE-001', 'RATE-002'])
      assert.equal(summary.results.find((r) => r.id === id)?.outcome, 'PASS', id);
    assert.ok(
      summary.warnings.some((w) => /throttled the suite: 4 answer\(s\) 429/.test(w)),
      summary.warnings.join('\n'),
    );
    // Each wait is in the evidence of the check that met it (RATE- checks show them again).
    const waited = summary.results
      .filter((r) => !r.id.startsWith('RATE-'))
      .flatMap((r) => r.evidence)
      .filter((e) => e.throttled?.retried);
    assert.equal(waited.length, 4);
  });

  it('reports the IDEM- checks NOT_APPLICABLE where GET /extensions does not announce idempotency-key', async () => {
    proxy.setFault({
      id: 'no-idempotency-extension',
      description: 'GET /extensions lists no idempotency-key',
      response(res, req) {
        const body = readJson(res);
        if (req.method !== 'GET' || !pathnameOf(req).endsWith('/extensions') || !Array.isArray(body))
          return res;
        return withJson(
          res,
          body.filter((entry: { name?: unknown }) => entry.name !== 'idempotency-key'),
        );
      },
    });
    const summary = await runConformance({
      baseUrl: proxy.url,
      profile: 'full',
      only: ['IDEM-'],
      ledgerFile: path.join(scratchFolder('selftest'), 'ledger.jsonl'),
      credentials: { primary: credentialsOf(PRIMARY) },
    });
    assert.equal(summary.results.length, 5);
    for (const result of summary.results) {
      assert.equal(result.outcome, 'NOT_APPLICABLE', describeResult(result));
      assert.match(result.reason ?? '', /announces no extension named idempotency-key/);
    }
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

  it('fails COL- of a list declaring a default page size that answers whole, and of one declaring none that answers a page', async () => {
    const fault = (id: string) => PAGE_SIZE_FAULTS.find((candidate) => candidate.id === id)!;
    const cols = async (injected: Fault | null) => {
      proxy.setFault(injected);
      const summary = await runConformance({
        baseUrl: proxy.url,
        only: ['COL-events_list', 'COL-accounts_list'],
        credentials: { primary: credentialsOf(PRIMARY) },
      });
      return (id: string) => summary.results.find((r) => r.id === id)!;
    };
    const correct = await cols(null);
    for (const id of ['COL-events_list', 'COL-accounts_list'])
      assert.equal(correct(id).outcome, 'PASS', describeResult(correct(id)));
    assert.match(correct('COL-events_list').clause, /page_limit declares a default page size \(here 1000\)/);

    const whole = await cols(fault('pagination-default-ignored'));
    assert.equal(whole('COL-events_list').outcome, 'FAIL', describeResult(whole('COL-events_list')));
    assert.match(
      describeResult(whole('COL-events_list')),
      /answered 200, not 206 with its first page of 1000 items/,
    );
    assert.equal(whole('COL-accounts_list').outcome, 'PASS', describeResult(whole('COL-accounts_list')));

    const paged = await cols(fault('pagination-default-invented'));
    assert.equal(paged('COL-accounts_list').outcome, 'FAIL', describeResult(paged('COL-accounts_list')));
    assert.match(describeResult(paged('COL-accounts_list')), /answered 206, not 200 with the whole list/);
    assert.equal(paged('COL-events_list').outcome, 'PASS', describeResult(paged('COL-events_list')));
  });

  it('catches, in the full profile, a page token that stays the same when the collection changes', async () => {
    proxy.setFault(FAULTS.find((fault) => fault.id === 'pagination-token-never-changes')!);
    const summary = await runConformance({
      baseUrl: proxy.url,
      profile: 'full',
      only: ['LIFE-001'],
      ledgerFile: path.join(scratchFolder('selftest'), 'ledger.jsonl'),
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
