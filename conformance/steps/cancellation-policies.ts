import type { CheckContext } from '../runner';
import { addDays, isDay, today } from './days';
import { validationRefusal } from './problems';

/**
 * Cancellation policies: reading one, and holding a resource's policy and its refusals of
 * malformed days to the document.
 */

export interface Policy {
  decommission_at: string;
  charged_until: string;
}

/** The cancellation policy of a resource (for a day, or the first possible one), or a finding. */
export async function policyOf(
  t: CheckContext,
  operationId: string,
  id: string,
  day?: string,
): Promise<Policy | undefined> {
  const response = await t.call(operationId, {
    id,
    query: day === undefined ? undefined : `decommission_at=${day}`,
  });
  const asked = day === undefined ? 'without a day' : `for ${day}`;
  if (!t.must(response.status === 200, `the policy of ${id} ${asked} answered ${response.status}, not 200`))
    return undefined;
  const body = response.body as Partial<Policy> | undefined;
  // The contract already reports dates that are not dates; nothing more can be compared then.
  return isDay(body?.decommission_at) && isDay(body?.charged_until)
    ? { decommission_at: body.decommission_at, charged_until: body.charged_until }
    : undefined;
}

/**
 * Holds the cancellation policy of one resource to the document: the first possible day not in
 * the past and charged at least until then; asked for that day the same answer; asked for a later
 * day an answer for that day, charging no less.
 */
export async function holdPolicy(t: CheckContext, operationId: string, id: string): Promise<void> {
  // The exchange's calendar may run a time zone ahead of or behind UTC.
  const earliestBelievable = addDays(today(), -1);
  const first = await policyOf(t, operationId, id);
  if (!first) return;
  t.must(
    first.decommission_at >= earliestBelievable,
    `${id}: the first possible decommission day ${first.decommission_at} lies in the past`,
  );
  t.should(
    first.charged_until >= first.decommission_at,
    `${id}: charged until ${first.charged_until}, before the decommission day ${first.decommission_at}`,
  );
  const same = await policyOf(t, operationId, id, first.decommission_at);
  if (same)
    t.must(
      same.decommission_at === first.decommission_at && same.charged_until === first.charged_until,
      `${id}: asked for the first possible day ${first.decommission_at} it answers ${JSON.stringify(same)}, not ${JSON.stringify(first)} as without a day`,
    );
  const later = addDays(first.decommission_at, 45);
  const then = await policyOf(t, operationId, id, later);
  if (!then) return;
  if (
    t.must(
      then.decommission_at >= later,
      `${id}: asked for ${later} it answers decommission_at ${then.decommission_at}, before the day asked for`,
    )
  )
    t.should(
      then.decommission_at === later,
      `${id}: asked for ${later} it answers decommission_at ${then.decommission_at}`,
    );
  t.should(
    then.charged_until >= first.charged_until,
    `${id}: going on ${later} is charged until ${then.charged_until}, going on ${first.decommission_at} until ${first.charged_until}; leaving later costs less`,
  );
}

/** A policy asked for a day that is no day is a 400 validation-error naming decommission_at. */
export async function refuseMalformedDays(t: CheckContext, operationId: string, id: string): Promise<void> {
  for (const bad of ['conformance-not-a-day', '2027-02-30']) {
    const response = await t.call(operationId, { id, query: `decommission_at=${bad}` });
    validationRefusal(t, response, ['decommission_at'], `the policy of ${id} for decommission_at=${bad}`);
  }
}
