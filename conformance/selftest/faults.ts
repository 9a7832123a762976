import { authFaults } from './auth-faults';
import { discoveryFaults } from './discovery-faults';
import { errorFaults } from './error-faults';
import { isolationFaults } from './isolation-faults';
import { filterFaults, listFaults } from './list-faults';
import type { Forward, ProxiedRequest, ProxiedResponse } from './messages';
import { paginationFaults } from './pagination-faults';

/** One way a server can break IX-API, injected between the suite and a correct server. */
export interface Fault {
  id: string;
  description: string;
  /** May rewrite the request before forwarding, or answer it without asking the upstream. */
  request?(req: ProxiedRequest): ProxiedRequest | ProxiedResponse;
  /**
   * May rewrite the response. `req` is the request as the client sent it; `forward` lets a fault
   * ask the upstream again (a server that quietly retries with other credentials, say).
   */
  response?(
    res: ProxiedResponse,
    req: ProxiedRequest,
    forward: Forward,
  ): ProxiedResponse | Promise<ProxiedResponse>;
  /** Forgets what the fault remembered; the proxy calls it whenever the fault is set. */
  reset?(): void;
  /**
   * A fault in what only the full profile does (changes, cancellations, uploads) shows in a full
   * run, limited to the checks `only` selects; other faults show in a read run of every check.
   */
  full?: { only: readonly string[] };
  /** The fault breaks a SHOULD only: a check that warns with it, and not without it, catches it. */
  breaks?: 'should';
}

/** Fresh faults with empty memories; use one set per proxy. */
export function createFaults(): Fault[] {
  return [
    ...paginationFaults(),
    ...listFaults(),
    ...filterFaults(),
    ...errorFaults(),
    ...authFaults(),
    ...discoveryFaults(),
    ...isolationFaults(),
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const FAULTS: readonly Fault[] = createFaults();

export const FAULT_IDS: readonly string[] = FAULTS.map((fault) => fault.id);
