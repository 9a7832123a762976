/** What one look at a part of the data plane found dead or lost, and brought back. */
export interface Revival {
  /** Processes started again, each with what it serves (`ovs-vswitchd`, `bird of rs1`). */
  restarted: string[];
  /** Devices whose state, lost with a process, was installed again (`rules of sw1`). */
  restored: string[];
  /** What could not be brought back, with what the device answered. */
  failures: string[];
}

/**
 * A part of the data plane that the worker looks after (the fabric's processes, the route
 * servers' daemons): each look brings back what died and what lived only in its memory. The worker
 * hands the supervisor whatever parts its device driver has (worker/create-worker.ts).
 */
export interface Supervised {
  /** What the part is, for logs. */
  readonly name: string;
  revive(): Promise<Revival>;
}

/** What an error says, for a revival's failures. */
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
