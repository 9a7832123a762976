import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { findTemporalCli } from '../../scripts/temporal-cli';
import { stack } from './stack';

/**
 * Saves a workflow history, in the Temporal CLI's JSON form, for the replay tests, when the suite
 * runs with RECORD_HISTORIES=1 (after a deliberate, compatible change to a workflow).
 */
export function recordHistory(name: string, workflowId: string): void {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const { temporal, config } = stack();
  const json = execFileSync(
    findTemporalCli(),
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      temporal.address,
      '--namespace',
      config.temporalNamespace,
      '--output',
      'json',
    ],
    { encoding: 'utf8' },
  );
  writeFileSync(path.resolve(__dirname, `../fixtures/histories/${name}.json`), json);
}
