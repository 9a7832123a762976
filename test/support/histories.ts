import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { format } from 'prettier';
import { findTemporalCli } from '../../scripts/temporal-cli';
import { stack } from './stack';
import { eventually } from './wait';
import type { RecordedPath, WorkflowType } from './workflow-histories';
import {
  HISTORIES,
  MANIFEST,
  WORKFLOW_TYPES,
  historyName,
  nextManifest,
  readManifest,
} from './workflow-histories';
import { workflowSourceHash } from './workflow-source';

interface HistoryEvent {
  eventType: string;
  workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } };
}

/** The workflow's history in the Temporal CLI's JSON form. */
async function showHistory(workflowId: string): Promise<string> {
  const { temporal, config } = stack();
  const { stdout } = await promisify(execFile)(
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
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** Whether the history ends at rest: every workflow task it schedules is completed (or the run closed). */
function atRest(events: HistoryEvent[]): boolean {
  const types = events.map((event) => event.eventType);
  const scheduled = types.lastIndexOf('EVENT_TYPE_WORKFLOW_TASK_SCHEDULED');
  return (
    types.lastIndexOf('EVENT_TYPE_WORKFLOW_TASK_COMPLETED') > scheduled ||
    types.some((type) =>
      /^EVENT_TYPE_WORKFLOW_EXECUTION_(COMPLETED|FAILED|TERMINATED|CONTINUED_AS_NEW)/.test(type),
    )
  );
}

/** JSON as Prettier leaves it (formatted again until it no longer changes: one pass may not settle). */
async function prettierJson(value: unknown, file: string): Promise<string> {
  let text = JSON.stringify(value, null, 2);
  for (;;) {
    const next = await format(text, { filepath: file });
    if (next === text) return text;
    text = next;
  }
}

/**
 * Saves the history of `workflowId`, one run of `type` along `pathName`, for the replay tests when
 * the suite runs with RECORD_HISTORIES=1 (`npm run histories:record`). It goes to
 * `<type>/<path>@<source hash>.json`; a history already recorded at that hash is kept, and so are
 * those of earlier hashes (runs begun on older code must go on replaying). The manifest then names
 * it as the path's current history.
 */
export async function recordHistory<T extends WorkflowType>(
  type: T,
  pathName: RecordedPath<T>,
  workflowId: string,
): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const sourceHash = workflowSourceHash(WORKFLOW_TYPES[type].file);
  const history = await eventually(`a history of ${workflowId} at rest`, async () => {
    const shown = JSON.parse(await showHistory(workflowId)) as { events: HistoryEvent[] };
    return atRest(shown.events) ? shown : undefined;
  });
  const recordedType = history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
  if (recordedType !== type) throw new Error(`${workflowId} runs ${recordedType}, not ${type}`);
  const file = path.join(HISTORIES, type, historyName(pathName, sourceHash));
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, await prettierJson(history, file));
  }
  const manifest = nextManifest(readManifest(), { type, pathName, sourceHash });
  writeFileSync(MANIFEST, await prettierJson(manifest, MANIFEST));
}
