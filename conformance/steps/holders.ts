import type { HttpResponse } from '../http';
import type { CheckContext } from '../runner';
import { isDay } from './days';
import type { Item } from './items';
import { current, isItem, show } from './items';
import { conflictNames, hasProblemType, problemTypeOf } from './problems';
import { DECOMMISSIONING, GOING } from './subjects';
import { waitFor } from './waiting';

/**
 * What holds a resource: refusals that name the holder, waiting until it goes, and what its
 * followers' states and days must say.
 */

/** States in which a resource has ended: nothing of it is provisioned any more. */
export const ENDED: readonly string[] = ['decommissioned', 'cancelled', 'archived'];
/** States of a resource that is live and in production. */
export const LIVE: readonly string[] = ['production', 'production_change_pending'];

/** The latest of some days (YYYY-MM-DD), or undefined when there are none. */
export function latestDay(days: readonly unknown[]): string | undefined {
  return days
    .filter(isDay)
    .reduce<string | undefined>((a, b) => (a === undefined || b > a ? b : a), undefined);
}

/**
 * What keeps configs from following a service that was asked to go: each must be going (or gone),
 * and one being decommissioned goes on the service's `day` where the day is known.
 */
export function configsFollowingProblems(
  service: string,
  configs: readonly Item[],
  day: string | undefined,
): string[] {
  return configs.flatMap((config) => {
    const id = String(config.id);
    const state = String(config.state);
    if (!GOING.includes(state))
      return [`config ${id} of service ${service} is ${state}, not going with its service`];
    if (day !== undefined && DECOMMISSIONING.includes(state) && config.decommission_at !== day)
      return [
        `config ${id} of service ${service} is ${state} on ${show(config.decommission_at)}, not on the service's day ${day}`,
      ];
    return [];
  });
}

/**
 * Whether a status list says its resource still waits for configs (an entry whose tag or message
 * speaks of waiting for configs), which a resource that is going no longer does.
 */
export function waitsForConfigs(status: unknown): boolean {
  return (
    Array.isArray(status) &&
    status.some(
      (entry) =>
        isItem(entry) &&
        [entry.tag, entry.message].some((text) => typeof text === 'string' && /wait.*config/i.test(text)),
    )
  );
}

/**
 * Holds a refusal to the 400 unable-to-fulfill IX-API has for what is still in use, with conflicts
 * naming `holder`; answers whether it was one.
 */
export function inUseRefusal(t: CheckContext, response: HttpResponse, holder: string, what: string): boolean {
  if (!t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) return false;
  t.must(
    hasProblemType(response, 'unable-to-fulfill'),
    `${what} was refused as ${problemTypeOf(response)}, not unable-to-fulfill`,
  );
  t.must(
    conflictNames(response, holder),
    `the conflicts of the refusal of ${what} do not name ${holder}: ${show((response.body as Item | undefined)?.conflicts)}`,
  );
  return true;
}

/** Reads `id` until it is going (or gone), for a while; answers the last read. */
export async function untilGoing(t: CheckContext, read: string, id: string): Promise<Item | undefined> {
  return (
    (await waitFor(t, read, id, (body) => GOING.includes(String(body.state)), t.suite.waits.settling)) ??
    (await current(t, { noun: 'resource', read }, id))
  );
}
