import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { RunSummary } from '../../conformance';
import { runConformance } from '../../conformance';
import { CIRCUIT_FAULTS } from '../../conformance/selftest/circuit-faults';
import { CONFIG_FAULTS } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import { DEPENDENCY_FAULTS } from '../../conformance/selftest/dependency-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULTS as GENERAL_FAULTS } from '../../conformance/selftest/faults';
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
import { RETRY_FAULTS } from '../../conformance/selftest/retry-faults';
import { SESSION_FAULTS } from '../../conformance/selftest/session-faults';
import { ensureConnectionsOf, ensureLiveConnectionOf } from '../support/connections';
import { stack } from '../support/stack';

/**
 * The suite's proof of itself: a proxy between the suite and this (correct) server injects one
 * fault at a time; each fault must make at least one check fail (or, for a fault that breaks a
 * SHOULD only, warn where it did not without the fault), and without a fault every check must
 * pass. The read profile, which is what runs against production servers, judges most faults;
 * faults in changes, uploads and cancellations are judged by a full run of the checks that make them.
 */

function credentialsOf(accountId: string) {
  const credential = stack().credentials.find((c) => c.accountId === accountId)!;
  return { api_key: credential.apiKey, api_secret: credential.apiSecret };
}

const failing = (summary: RunSummary) =>
  summary.results.filter((r) => r.outcome === 'FAIL' || r.outcome === 'TIMEOUT');

const describeResult = (r: RunSummary['results'][number]) =>
  `${r.id} ${r.outcome}: ${[r.reason, ...r.findings.map((f) => f.message)].filter(Boolean).join(' | ')}`;

const PRIMARY = 'acc-transit-partners';

/**
 * Faults in any collection and in what it answers without page_limit, in connections and port
 * reservations, in network service configs, in route-server sessions and statistics, in virtual
 * circuits, in destroying what others depend on and the properties of refusals, and in rate limits
 * and retried writes.
 */
const FAULTS: readonly Fault[] = [
  ...GENERAL_FAULTS,
  ...PAGE_SIZE_FAULTS,
  ...CONNECTION_FAULTS,
  ...CONFIG_FAULTS,
  ...SESSION_FAULTS,
  ...CIRCUIT_FAULTS,
  ...DEPENDENCY_FAULTS,
  ...RETRY_FAULTS,
];

const run = (proxy: FaultProxy, full?: { only: readonly string[] }) =>
  runConformance({
    baseUrl: proxy.url,
    profile: full ? 'full' : 'read',
    only: full ? [...full.only] : undefined,
    ledgerFile: full
      ? path.join(mkdtempSync(path.join(tmpdir(), 'ixapi-selftest-')), 'ledger.jsonl')
      : undefined,
    credentials: {
      primary: credentialsOf(PRIMARY),
      secondary: credentialsOf('acc-thames-cloud'),
      subaccount: credentialsOf('acc-petit-reseau'),
    },
  });

/** Every check a full run of the faults in changes, uploads and cancellations takes. */
const FULL_CHECKS = [...new Set(FAULTS.flatMap((fault) => fault.full?.only ?? []))];

/** The ids of the primary account's connections now. */
async function connectionIds(): Promise<Set<string>> {
  const rows = await stack().db.sequelize.query<{ id: string }>(
    'SELECT id FROM connections WHERE managing_account = :account',
    { replacements: { account: PRIMARY }, type: QueryTypes.SELECT },
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * Waits until the connections ordered since `earlier` was taken, and their port reservations, have
 * stopped moving (provisioning, changing, or going on their decommission day), so that the runs
 * after these see collections that stay put; names those that do not.
 */
async function connectionsAtRest(earlier: ReadonlySet<string>): Promise<void> {
  const today = new Date().toISOString().slice(0, 10);
  const moving = async () =>
    (
      await stack().db.sequelize.query<{ id: string; state: string; connection: string }>(
        `SELECT c.id, c.state, c.id AS connection FROM connections c
          WHERE c.managing_account = :account AND (${MOVING('c')})
         UNION ALL
         SELECT r.id, r.state, r.connection FROM port_reservations r JOIN connections c ON c.id = r.connection
          WHERE c.managing_account = :account AND (${MOVING('r')})`,
        { replacements: { account: PRIMARY, today }, type: QueryTypes.SELECT },
      )
    ).filter((row) => !earlier.has(row.connection));
  const deadline = Date.now() + 60_000;
  let rows = await moving();
  while (rows.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    rows = await moving();
  }
  assert.deepEqual(
    rows.map((row) => `${row.id} ${row.state}`),
    [],
    'what the suite ordered did not come to rest within 60 s',
  );
}

/**
 * Waits until none of the primary account's connections and port reservations has changed for a
 * few seconds (what an earlier run ordered may still be on its way to decommissioned), so that
 * page tokens of their collections hold.
 */
async function connectionsQuiet(): Promise<void> {
  const changed = async () => {
    const [row] = await stack().db.sequelize.query<{ n: number }>(
      `SELECT (SELECT COUNT(*) FROM connections c
                WHERE c.managing_account = :account AND c.updated_at > NOW(3) - INTERVAL 3 SECOND)
            + (SELECT COUNT(*) FROM port_reservations r JOIN connections c ON c.id = r.connection
                WHERE c.managing_account = :account AND r.updated_at > NOW(3) - INTERVAL 3 SECOND) AS n`,
      { replacements: { account: PRIMARY }, type: QueryTypes.SELECT },
    );
    return Number(row.n);
  };
  const deadline = Date.now() + 30_000;
  while ((await changed()) > 0) {
    assert.ok(Date.now() < deadline, "the primary account's connections kept changing for 30 s");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const MOVING = (table: string) =>
  `${table}.state IN ('requested', 'allocated', 'testing', 'production_change_pending')
   OR (${table}.state = 'decommission_requested' AND ${table}.decommission_at <= :today)`;

describe('conformance self-test: every injected fault is caught', function () {
  this.timeout(120_000);
  let proxy: FaultProxy;
  const caughtBy = new Map<string, string[]>();
  /** Checks that warn without a fault, in each profile: their warnings catch nothing. */
  const warnedWithout = { read: new Set<string>(), full: new Set<string>() };

  /** The primary account's connections before the self-test ordered any. */
  let earlier: ReadonlySet<string> = new Set();

  before(async function () {
    this.timeout(60_000);
    await ensureConnectionsOf(PRIMARY);
    await ensureLiveConnectionOf(PRIMARY);
    // Circuits join the primary account's connection to one of the secondary account's.
    await ensureLiveConnectionOf('acc-thames-cloud');
    await connectionsQuiet();
    earlier = await connectionIds();
    proxy = await startFaultProxy({ target: stack().baseUrl });
  });

  after(async function () {
    this.timeout(90_000);
    await proxy?.close();
    await connectionsAtRest(earlier);
    if (!caughtBy.size) return;
    const width = Math.max(...[...caughtBy.keys()].map((id) => id.length));
    const rows = [...caughtBy].map(([id, checks]) => {
      const shown = checks.slice(0, 6).join(', ');
      return `  ${id.padEnd(width)}  ${checks.length ? `${shown}${checks.length > 6 ? `, … (${checks.length})` : ''}` : 'NOT CAUGHT'}`;
    });
    process.stdout.write(`\n  fault → checks that caught it\n${rows.join('\n')}\n`);
  });

  const warning = (summary: RunSummary) =>
    summary.results.filter((r) => r.outcome === 'WARN').map((r) => r.id);

  /** The checks that catch a fault: those failing, and for a broken SHOULD those warning anew. */
  const catching = (fault: Fault, summary: RunSummary) => {
    const known = warnedWithout[fault.full ? 'full' : 'read'];
    return [
      ...failing(summary).map((r) => r.id),
      ...(fault.breaks === 'should' ? warning(summary).filter((id) => !known.has(id)) : []),
    ];
  };

  const catches = (fault: Fault) =>
    it(`catches ${fault.id}: ${fault.description}${fault.full ? ' (full profile)' : ''}`, async function () {
      if (fault.full) this.timeout(240_000);
      proxy.setFault(fault);
      const summary = await run(proxy, fault.full);
      const checks = catching(fault, summary);
      caughtBy.set(fault.id, checks);
      assert.ok(checks.length > 0, `no check caught fault ${fault.id} (${proxy.requests} requests)`);
    });

  it('the correct server, through the proxy, passes every check', async () => {
    proxy.setFault(null);
    const summary = await run(proxy);
    assert.deepEqual(failing(summary).map(describeResult), []);
    assert.ok(proxy.requests > 0, 'the suite did not go through the proxy');
    warning(summary).forEach((id) => warnedWithout.read.add(id));
  });

  it(`injects at least 30 kinds of fault (${FAULTS.length})`, () => {
    assert.ok(FAULTS.length >= 30);
    assert.equal(new Set(FAULTS.map((f) => f.id)).size, FAULTS.length, 'fault ids are unique');
    for (const fault of FAULTS.filter((f) => f.full))
      assert.ok(fault.full!.only.length > 0, `${fault.id} names no check to run in the full profile`);
  });

  for (const fault of FAULTS.filter((f) => !f.full)) catches(fault);

  it(`the correct server, through the proxy, passes the full-profile checks faults are run with (${FULL_CHECKS.join(', ')})`, async function () {
    this.timeout(240_000);
    proxy.setFault(null);
    const summary = await run(proxy, { only: FULL_CHECKS });
    assert.deepEqual(failing(summary).map(describeResult), []);
    const judged = summary.results.filter((r) => r.outcome === 'PASS').map((r) => r.id);
    assert.deepEqual(judged.sort(), [...FULL_CHECKS].sort(), 'a check the faults rely on did not pass');
    warning(summary).forEach((id) => warnedWithout.full.add(id));
  });

  for (const fault of FAULTS.filter((f) => f.full)) catches(fault);
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
      ledgerFile: path.join(mkdtempSync(path.join(tmpdir(), 'ixapi-selftest-')), 'ledger.jsonl'),
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
