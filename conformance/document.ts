import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSpec } from '../spec';
import { allChecks } from './checks';
import type { CheckDefinition } from './runner';

/** Where the generated list of checks lives (committed; a test keeps it fresh). */
export const CHECKS_DOCUMENT = path.join(__dirname, 'CHECKS.md');

const FAMILIES: Record<string, string> = {
  DISC: 'Discovery',
  AUTH: 'Authentication',
  ERR: 'Errors',
  EXT: 'Extensions',
  SEC: 'Every operation needs a token',
  COL: 'Collections',
  PAG: 'Pagination',
  FLT: 'Filters',
  READ: 'Reads',
  ISO: 'Isolation and redaction',
  POL: 'Cancellation policies',
  LOA: 'Letters of authorisation',
  PRES: 'Port reservations',
  LIFE: 'Lifecycles (profile full)',
  IDEM: 'Retrying writes with Idempotency-Key (where GET /extensions announces idempotency-key)',
  CONN: 'Connections (profile full)',
  NSC: 'Network service configs, their addresses and MACs (profile full)',
  NFC: 'Route-server sessions (profile full)',
  STAT: 'Traffic statistics',
  NS: 'Network services customers order',
  MJR: 'Member joining rules',
  CR: 'Change requests of point-to-point circuits (profile full)',
  DEP: 'Destroying what others depend on, in dependency order (profile full)',
  RATE: 'Rate limits (every 429 the run met)',
};

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The conformance document: every check of the registry, by family, with its clause. */
export function renderChecksDocument(checks: readonly CheckDefinition[]): string {
  const lines = [
    '# Conformance checks',
    '',
    'Generated from the check registry by `npm run conformance:doc`; do not edit by hand.',
    '',
    `${checks.length} checks. A check applies when the server declares every operation it needs in`,
    '`GET /implementation` (the `IDEM-` checks also need `idempotency-key` among the extensions of',
    '`GET /extensions`, and `EXT-002` needs `events-resource-filter`); `mutate` checks run only with',
    '`--profile full`. A check fails when the server breaks a MUST of its clause and warns when it',
    'breaks a SHOULD or makes a choice the clause leaves open.',
  ];
  const families = [...new Set(checks.map((c) => c.id.split('-')[0]))];
  for (const family of families) {
    lines.push(
      '',
      `## ${FAMILIES[family] ?? family}`,
      '',
      '| id | check | clause | operations | safety |',
      '|---|---|---|---|---|',
    );
    for (const check of checks.filter((c) => c.id.split('-')[0] === family)) {
      lines.push(
        `| ${check.id} | ${cell(check.title)} | ${cell(check.clause)} | ${check.operations.join(', ') || '–'} | ${check.safety} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

if (require.main === module) {
  writeFileSync(CHECKS_DOCUMENT, renderChecksDocument(allChecks(loadSpec())));
  process.stdout.write(`wrote ${CHECKS_DOCUMENT}\n`);
}
