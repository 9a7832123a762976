import type { WaitingResource } from '../domain/operator-queue';
import { NEXT_STEP_OF, nextCommand, waitingQuery } from '../domain/operator-queue';
import type { WaitingKind } from '../domain/search-attributes';
import { WAITING_KINDS } from '../domain/search-attributes';

/** How long ago `since` was, roughly: `3 d 4 h`, `2 h 5 min`, `40 s`. */
export function ago(since: string, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - Date.parse(since)) / 1000));
  const [d, h, m] = [
    Math.floor(seconds / 86_400),
    Math.floor(seconds / 3600) % 24,
    Math.floor(seconds / 60) % 60,
  ];
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  return m ? `${m} min` : `${seconds} s`;
}

/** Parses `--kind`: one of the kinds of waiting, or every kind when absent. */
export function kindOption(value: string | undefined): WaitingKind | undefined {
  if (value === undefined) return undefined;
  if ((WAITING_KINDS as readonly string[]).includes(value)) return value as WaitingKind;
  throw new Error(`--kind must be one of ${WAITING_KINDS.join(', ')}; not ${JSON.stringify(value)}`);
}

/**
 * The operator's queue as people read it: each waiting resource with its account, since when and
 * why it waits, and what moves it on (the exact command, where a signal does), oldest first; then
 * the Temporal UI query that finds the same among the running workflows.
 */
export function renderQueue(
  items: readonly WaitingResource[],
  options: { namespace: string; kind?: WaitingKind; now: Date },
): string {
  const { namespace, kind, now } = options;
  const lines: string[] = [];
  if (!items.length) lines.push(`Nothing waits on the exchange${kind ? ` for ${kind}` : ''}.`);
  else {
    const counts = WAITING_KINDS.map((k) => [k, items.filter((item) => item.kind === k).length] as const)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`);
    lines.push(
      `${items.length} resource${items.length === 1 ? '' : 's'} wait${items.length === 1 ? 's' : ''} (${counts.join(', ')}), oldest first:`,
    );
    for (const item of items) {
      const command = nextCommand(item, namespace);
      lines.push(
        '',
        `${item.kind}  ${item.resourceType} ${item.id}  account ${item.account}  since ${item.since.slice(0, 16).replace('T', ' ')} UTC (${ago(item.since, now)})`,
        `  why   ${item.why}`,
        `  next  ${NEXT_STEP_OF[item.kind]}${command ? `:\n        ${command}` : ''}`,
      );
    }
  }
  lines.push(
    '',
    `In the Temporal UI (namespace ${namespace}), workflows that say so: ${waitingQuery(kind)}`,
    '(runs begun before the IxapiWaiting search attribute existed are listed above but not there).',
    '',
  );
  return lines.join('\n');
}
