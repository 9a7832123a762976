import type { CheckResult, Outcome, RunSummary } from '../../conformance/model';
import { OUTCOMES } from '../../conformance/model';

/** Check results and a run summary for the conformance report tests, some of them hostile to every format. */

export const SCRIPT = '<script>alert(1)</script>';
export const HOSTILE = `${SCRIPT} ]]> & "double" 'single' \u0001 end`;

export function check(id: string, outcome: Outcome, extra: Partial<CheckResult> = {}): CheckResult {
  return {
    id,
    title: `title of ${id}`,
    clause: `clause of ${id}`,
    safety: 'read',
    operations: ['accounts_list'],
    outcome,
    findings: [],
    evidence: [],
    durationMs: 34,
    ...extra,
  };
}

export function summaryOf(results: CheckResult[], warnings: string[] = []): RunSummary {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const result of results) counts[result.outcome] += 1;
  return {
    tool: { name: 'ixapi-conformance', version: '0.1.0' },
    reportVersion: 1,
    baseUrl: 'https://ix.example/api/v2',
    profile: 'read',
    schemaVersion: '2.6.0',
    schemaRevision: '2.6.0',
    startedAt: '2025-01-02T03:04:05.000Z',
    durationMs: 12_345,
    counts,
    results,
    warnings,
  };
}

export const hostileResults: CheckResult[] = [
  check('PAG-001', 'PASS'),
  check('PAG-002', 'FAIL', {
    title: `Pagination ${HOSTILE}`,
    clause: `Clause ${HOSTILE}`,
    findings: [
      { severity: 'must', message: `the server answered ${HOSTILE}` },
      { severity: 'should', message: 'a second finding' },
    ],
    evidence: [
      {
        request: {
          method: 'GET',
          url: `https://ix.example/api/v2/accounts?q=${SCRIPT}&x="'><img src=x onerror=alert(2)>`,
          headers: { authorization: 'Bearer <secret>', 'x-evil': `"><${SCRIPT}` },
          body: { name: HOSTILE },
        },
        response: {
          status: 500,
          headers: { 'content-type': 'text/html', 'x-evil': HOSTILE },
          body: `${SCRIPT}]]><!-- -->`,
        },
        durationMs: 12,
      },
      {
        request: { method: 'POST', url: 'https://ix.example/api/v2/accounts', headers: {} },
        response: { status: 201, headers: {}, body: { id: 'acc-1', nested: { list: [1, 2, HOSTILE] } } },
        durationMs: 7,
      },
      {
        request: { method: 'DELETE', url: 'https://ix.example/api/v2/accounts/acc-1', headers: {} },
        error: `socket hang up ${HOSTILE}`,
        durationMs: 3,
      },
    ],
    durationMs: 1234,
  }),
  check('ERR-001', 'WARN', { findings: [{ severity: 'should', message: `prefer problem+json ${HOSTILE}` }] }),
  check('DISC-001', 'NOT_APPLICABLE', { reason: `the server does not declare ${HOSTILE}` }),
  check('AUTH-001', 'INCONCLUSIVE', { reason: 'every call refused' }),
  check('LIFE-001', 'TIMEOUT', { reason: 'no answer within 60000 ms' }),
];

export const hostile = summaryOf(hostileResults, [`run warning ${HOSTILE}`]);
