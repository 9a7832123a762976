import assert from 'node:assert/strict';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { RunSummary } from '../../conformance/index';
import { passed, runConformance } from '../../conformance/index';
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
  // The primary account starts with nothing ordered: the full profile provisions what its checks
  // need (connections of both accounts, exchange-LAN access, sessions, MACs, a multipoint service
  // with joining rules) and gives it back at the end.
  it('passes every applicable check of the full profile, judging all but the rate limits', async function () {
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
      ofCircuits.filter((r) => r.outcome !== 'PASS').map((r) => `${r.id} ${r.outcome}: ${r.reason ?? ''}`),
      [],
    );
    // What the suite provisioned let every check judge, except those of 429s, which this run
    // never met; each says what it lacked.
    const prepared = summary.results.filter((r) => r.id.startsWith('PREP-'));
    assert.equal(prepared.length, 5);
    assert.deepEqual(
      prepared.filter((r) => r.outcome !== 'PASS').map((r) => `${r.id} ${r.outcome}: ${r.reason ?? ''}`),
      [],
    );
    assert.deepEqual(
      summary.results.filter((r) => r.outcome === 'INCONCLUSIVE').map((r) => `${r.id}: ${r.lacking ?? ''}`),
      [
        'RATE-001: a 429 answer: the server throttled no request of the run',
        'RATE-002: a 429 answer: the server throttled no request of the run',
      ],
    );
    // Everything it ordered was given back: cancelled or on its way out, nothing left live.
    assert.deepEqual(
      summary.warnings.filter((w) => /given back/.test(w)),
      [],
    );
    const [live] = await stack().db.sequelize.query<{ n: number }>(
      `SELECT (SELECT COUNT(*) FROM connections WHERE external_ref LIKE 'conformance-%' AND state IN ('requested', 'allocated', 'testing', 'production'))
            + (SELECT COUNT(*) FROM network_service_configs WHERE external_ref LIKE 'conformance-%' AND state IN ('requested', 'allocated', 'testing', 'production'))
            + (SELECT COUNT(*) FROM macs WHERE external_ref LIKE 'conformance-%') AS n`,
      { type: QueryTypes.SELECT },
    );
    assert.equal(Number(live.n), 0, 'resources the suite ordered are still live');
    stack().logger.info({ counts: summary.counts, durationMs: summary.durationMs }, 'conformance run');
  });
});
