/**
 * A `status` entry of a stateful resource: why it is where it is, in words a person can act on.
 * Severity follows syslog (0 emergency … 7 debug).
 */
export interface StatusEntry {
  severity: number;
  tag: string;
  message: string;
  attrs: Record<string, unknown>;
  timestamp: string;
}

export const SEVERITY = { error: 3, warning: 4, notice: 5, info: 6 } as const;
