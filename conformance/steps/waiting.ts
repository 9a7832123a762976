import type { CheckContext } from '../runner';
import type { Role } from '../suite';

/**
 * Waiting for a resource to reach a state along its lifecycle, holding every state change seen to
 * it.
 */

/** States a resource has left for good once it reached one of the listed later states. */
const ENDS: Record<string, readonly string[]> = {
  // Decommissioned or cancelled resources are only archived; provisioning does not come back.
  decommissioned: [
    'requested',
    'allocated',
    'testing',
    'scheduled',
    'production',
    'production_change_pending',
    'decommission_requested',
  ],
  cancelled: ['requested', 'allocated', 'testing', 'scheduled', 'production', 'production_change_pending'],
};

/**
 * Whether a state seen after another goes against the lifecycle: nothing follows archived, and a
 * decommissioned or cancelled resource does not go back to being provisioned. Polling can
 * miss states in between, so only steps that no path of the lifecycle allows are refused.
 */
export function stateStepProblem(from: string, to: string): string | undefined {
  if (from === to) return undefined;
  if (from === 'archived') return `went from archived to ${to}; nothing follows archived`;
  if (ENDS[from]?.includes(to)) return `went back from ${from} to ${to}`;
  return undefined;
}

/**
 * Polls a resource until `arrived` holds, holding every change of state it sees to the lifecycle.
 * Without `withinMs` it waits as long as the check's deadline allows (which ends it as TIMEOUT);
 * with it, it gives up after that long and answers undefined.
 */
export async function waitFor(
  t: CheckContext,
  read: string,
  id: string,
  arrived: (body: Record<string, unknown>) => boolean,
  withinMs?: number,
  role: Role = 'primary',
): Promise<Record<string, unknown> | undefined> {
  const until = withinMs === undefined ? Infinity : Date.now() + withinMs;
  let previous: string | undefined;
  for (;;) {
    const response = await t.call(read, { id, role });
    const body = response.body as Record<string, unknown>;
    const state = response.status === 200 && typeof body?.state === 'string' ? body.state : undefined;
    if (state && previous) {
      const problem = stateStepProblem(previous, state);
      t.must(problem === undefined, `${id} ${problem}`);
    }
    previous = state ?? previous;
    if (response.status === 200 && arrived(body)) return body;
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
