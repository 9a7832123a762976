import assert from 'node:assert/strict';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { RunSummary } from '../../conformance/index';
import { runConformance } from '../../conformance/index';
import { CAUGHT_IN_READS, checksOf } from '../../conformance/selftest/caught-in-reads';
import { CIRCUIT_FAULTS } from '../../conformance/selftest/circuit-faults';
import { CLIENT_FAULTS } from '../../conformance/selftest/client-faults';
import { CONFIG_FAULTS } from '../../conformance/selftest/config-faults';
import { CONNECTION_FAULTS } from '../../conformance/selftest/connection-faults';
import { DEPENDENCY_FAULTS } from '../../conformance/selftest/dependency-faults';
import type { Fault } from '../../conformance/selftest/faults';
import { FAULTS as GENERAL_FAULTS } from '../../conformance/selftest/faults';
import type { FaultProxy } from '../../conformance/selftest/proxy';
import { PAGE_SIZE_FAULTS } from '../../conformance/selftest/page-size-faults';
import { startFaultProxy } from '../../conformance/selftest/proxy';
import { RETRY_FAULTS } from '../../conformance/selftest/retry-faults';
import { SESSION_FAULTS } from '../../conformance/selftest/session-faults';
import { ensureConnectionsOf, ensureLiveConnectionOf } from './connections';
import { scratchFolder } from './shared-stack';
import { stack } from './stack';

/**
 * The conformance suite's proof of itself, shared by the self-test files (one per family of faults,
 * so that they run in parallel, each on a stack of its own).
 *
 * The suite's proof of itself: a proxy between the suite and this (correct) server injects one
 * fault at a time; each fault must make at least one check fail (or, for a fault that breaks a
 * SHOULD only, warn where it did not without the fault), and without a fault every check must
 * pass. The read profile, which is what runs against production servers, judges most faults;
 * faults in changes, uploads and cancellations are judged by a full run of the checks that make them.
 */

export function credentialsOf(accountId: string) {
  const credential = stack().credentials.find((c) => c.accountId === accountId)!;
  return { api_key: credential.apiKey, api_secret: credential.apiSecret };
}

export const failing = (summary: RunSummary) =>
  summary.results.filter((r) => r.outcome === 'FAIL' || r.outcome === 'TIMEOUT');

export const describeResult = (r: RunSummary['results'][number]) =>
  `${r.id} ${r.outcome}: ${[r.reason, ...r.findings.map((f) => f.message)].filter(Boolean).join(' | ')}`;

export const PRIMARY = 'acc-transit-partners';

/**
 * Faults in any collection and in what it answers without page_limit, in connections and port
 * reservations, in network service configs, in route-server sessions and statistics, in virtual
 * circuits, in destroying what others depend on and the properties of refusals, in rate limits
 * and retried writes, and in what the public IX-API clients rely on.
 */
export const FAULTS: readonly Fault[] = [
  ...GENERAL_FAULTS,
  ...PAGE_SIZE_FAULTS,
  ...CONNECTION_FAULTS,
  ...CONFIG_FAULTS,
  ...SESSION_FAULTS,
  ...CIRCUIT_FAULTS,
  ...DEPENDENCY_FAULTS,
  ...RETRY_FAULTS,
  ...CLIENT_FAULTS,
];

const half = Math.ceil(GENERAL_FAULTS.length / 2);

/**
 * The faults by family: `test/integration/conformance-selftest-<family>.test.ts` proves each family
 * is caught, the files running in parallel; together they hold every fault once.
 */
export const FAULT_FAMILIES = {
  'general-1': GENERAL_FAULTS.slice(0, half),
  'general-2': [...GENERAL_FAULTS.slice(half), ...PAGE_SIZE_FAULTS],
  connections: CONNECTION_FAULTS,
  dependencies: DEPENDENCY_FAULTS,
  services: [...CONFIG_FAULTS, ...SESSION_FAULTS, ...CIRCUIT_FAULTS, ...RETRY_FAULTS],
  clients: CLIENT_FAULTS,
} as const satisfies Record<string, readonly Fault[]>;

export type FaultFamily = keyof typeof FAULT_FAMILIES;

/** A run of the suite through the proxy: the read profile (all of it, or the checks `only` names), or the full one. */
export const run = (proxy: FaultProxy, selection: { full?: boolean; only?: readonly string[] } = {}) =>
  runConformance({
    baseUrl: proxy.url,
    profile: selection.full ? 'full' : 'read',
    only: selection.only ? [...selection.only] : undefined,
    ledgerFile: selection.full ? path.join(scratchFolder('selftest'), 'ledger.jsonl') : undefined,
    credentials: {
      primary: credentialsOf(PRIMARY),
      secondary: credentialsOf('acc-thames-cloud'),
      subaccount: credentialsOf('acc-petit-reseau'),
    },
  });

/** Every check a full run of `faults` (those in changes, uploads and cancellations) takes. */
const fullChecksOf = (faults: readonly Fault[]) => [
  ...new Set(faults.flatMap((fault) => fault.full?.only ?? [])),
];

/** The read checks that catch a fault a read run shows, and those they need along (see `CAUGHT_IN_READS`). */
export function readCatchersOf(fault: Fault): { by: readonly string[]; along: readonly string[] } {
  const caught = CAUGHT_IN_READS[fault.id];
  assert.ok(
    caught,
    `fault ${fault.id} names no read check that catches it (conformance/selftest/caught-in-reads.ts)`,
  );
  return checksOf(caught);
}

/** Every read check a run with one of `faults` takes. */
const readChecksOf = (faults: readonly Fault[]) => [
  ...new Set(
    faults
      .filter((fault) => !fault.full)
      .map(readCatchersOf)
      .flatMap(({ by, along }) => [...along, ...by]),
  ),
];

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

export function describeFaultFamily(family: FaultFamily, title: string): void {
  const faults: readonly Fault[] = FAULT_FAMILIES[family];
  const FULL_CHECKS = fullChecksOf(faults);
  const READ_CHECKS = readChecksOf(faults);
  describe(`conformance self-test: every injected fault is caught (${title})`, function () {
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

    // A fault a read run shows is run with the read checks that catch it, each of which must; one
    // in changes, uploads and cancellations with the full-profile checks it names, one of which must.
    const catches = (fault: Fault) =>
      it(`catches ${fault.id}: ${fault.description}${fault.full ? ' (full profile)' : ''}`, async function () {
        if (fault.full) this.timeout(240_000);
        proxy.setFault(fault);
        const named = fault.full ? undefined : readCatchersOf(fault);
        const summary = named
          ? await run(proxy, { only: [...named.along, ...named.by] })
          : await run(proxy, { full: true, only: fault.full!.only });
        const checks = catching(fault, summary);
        caughtBy.set(fault.id, checks);
        assert.ok(checks.length > 0, `no check caught fault ${fault.id} (${proxy.requests} requests)`);
        if (named)
          assert.deepEqual(
            named.by.filter((id) => !checks.includes(id)),
            [],
            `checks named for fault ${fault.id} did not catch it`,
          );
      });

    if (READ_CHECKS.length)
      it(`the correct server, through the proxy, passes the read checks that catch these faults (${READ_CHECKS.length})`, async () => {
        proxy.setFault(null);
        const summary = await run(proxy, { only: READ_CHECKS });
        assert.deepEqual(failing(summary).map(describeResult), []);
        assert.ok(proxy.requests > 0, 'the suite did not go through the proxy');
        warning(summary).forEach((id) => warnedWithout.read.add(id));
      });

    for (const fault of faults.filter((f) => !f.full)) catches(fault);

    if (FULL_CHECKS.length)
      it(`the correct server, through the proxy, passes the full-profile checks faults are run with (${FULL_CHECKS.join(', ')})`, async function () {
        this.timeout(240_000);
        proxy.setFault(null);
        const summary = await run(proxy, { full: true, only: FULL_CHECKS });
        assert.deepEqual(failing(summary).map(describeResult), []);
        const unjudged = summary.results.filter((r) => r.outcome !== 'PASS');
        assert.deepEqual(
          unjudged.map(describeResult),
          [],
          'a check the faults rely on did not pass (a warning or a skip judges nothing)',
        );
        assert.deepEqual(summary.results.map((r) => r.id).sort(), [...FULL_CHECKS].sort());
        warning(summary).forEach((id) => warnedWithout.full.add(id));
      });

    for (const fault of faults.filter((f) => f.full)) catches(fault);
  });
}
