import assert from 'node:assert/strict';
import path from 'node:path';
import type { RunSummary } from '../../conformance';
import { passed, runConformance } from '../../conformance';
import { ensureConnectionsOf, ensureLiveConnectionOf } from '../support/connections';
import { scratchFolder } from '../support/shared-stack';
import { stack } from '../support/stack';

function credentialsOf(accountId: string) {
  const credential = stack().credentials.find((c) => c.accountId === accountId)!;
  return { api_key: credential.apiKey, api_secret: credential.apiSecret };
}

function failures(summary: RunSummary): string[] {
  return summary.results
    .filter((r) => ['FAIL', 'TIMEOUT'].includes(r.outcome))
    .map(
      (r) =>
        `${r.id} ${r.outcome}: ${[r.reason, ...r.findings.map((f) => f.message)].filter(Boolean).join(' | ')}`,
    );
}

describe('the conformance suite against this server', () => {
  // Collections the checks judge need items of the primary account, and exchange-LAN access is
  // ordered on a connection of its in production in Frankfurt, whose metro area network has one;
  // circuits join it there to a connection of the secondary account.
  before(async () => {
    await ensureConnectionsOf('acc-transit-partners');
    await ensureLiveConnectionOf('acc-transit-partners');
    await ensureLiveConnectionOf('acc-thames-cloud');
  });

  it('passes every applicable check of the full profile', async function () {
    this.timeout(300_000);
    const ledgerFile = path.join(scratchFolder('conformance'), 'ledger.jsonl');
    const summary = await runConformance({
      baseUrl: stack().baseUrl,
      profile: 'full',
      ledgerFile,
      credentials: {
        primary: credentialsOf('acc-transit-partners'),
        secondary: credentialsOf('acc-thames-cloud'),
        subaccount: credentialsOf('acc-petit-reseau'),
      },
    });
    assert.deepEqual(failures(summary), []);
    assert.ok(passed(summary));
    assert.equal(summary.schemaVersion, '2.6.0');
    // Everything this server declares is judged: nothing it routes is NOT_APPLICABLE.
    const judged = summary.results.filter((r) => r.outcome === 'PASS').length;
    assert.ok(judged > 100, `only ${judged} checks passed`);
    // Connections and port reservations are ordered, changed, cancelled and sent letters: each of
    // those checks judges this server, none stands aside as inconclusive.
    const ofConnections = summary.results.filter((r) => /^(POL|LOA|PRES|CONN)-|^ISO-008$/.test(r.id));
    assert.ok(ofConnections.length >= 13, `only ${ofConnections.length} checks of connections`);
    assert.deepEqual(
      ofConnections.filter((r) => r.outcome !== 'PASS').map((r) => `${r.id} ${r.outcome}: ${r.reason ?? ''}`),
      [],
    );
    // Exchange-LAN access is ordered, changed, cancelled and archived, its addresses named and
    // hidden from the other account, its MAC held: each of those checks judges this server.
    const ofConfigs = summary.results.filter((r) => r.id.startsWith('NSC-'));
    assert.ok(ofConfigs.length >= 9, `only ${ofConfigs.length} checks of network service configs`);
    assert.deepEqual(
      ofConfigs.filter((r) => r.outcome !== 'PASS').map((r) => `${r.id} ${r.outcome}: ${r.reason ?? ''}`),
      [],
    );
    // A route-server session is ordered on access of the suite's own, and the statistics of a
    // connection are read: those checks judge this server too.
    const ofSessions = summary.results.filter((r) => /^(NFC|STAT)-/.test(r.id));
    assert.ok(ofSessions.length >= 2, `only ${ofSessions.length} checks of sessions and statistics`);
    assert.deepEqual(
      ofSessions.filter((r) => r.outcome !== 'PASS').map((r) => `${r.id} ${r.outcome}: ${r.reason ?? ''}`),
      [],
    );
    // Virtual circuits are ordered, changed, joined under rules, asked to change and cancelled: each
    // of those checks judges this server (those reading what the account had before may not).
    const ofCircuits = summary.results.filter(
      (r) => /^(NS|MJR|CR)-/.test(r.id) || ['NSC-010', 'NSC-011', 'NSC-012'].includes(r.id),
    );
    assert.ok(ofCircuits.length >= 14, `only ${ofCircuits.length} checks of virtual circuits`);
    assert.deepEqual(
      ofCircuits
        .filter((r) => r.outcome !== 'PASS' && !['NS-001', 'MJR-001'].includes(r.id))
        .map((r) => `${r.id} ${r.outcome}: ${r.reason ?? ''}`),
      [],
    );
    stack().logger.info({ counts: summary.counts, durationMs: summary.durationMs }, 'conformance run');
  });
});
