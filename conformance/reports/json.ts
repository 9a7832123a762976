import type { RunSummary } from '../model';

/** The summary as machine-readable JSON; it is redacted already, so nothing is left out or changed. */
export function toJson(summary: RunSummary): string {
  return `${JSON.stringify(summary, null, 2)}\n`;
}
