import type { CancellationPolicy, CancellationTerms } from '../domain/cancellation';
import { cancellationPolicy, dayOf, isDay } from '../domain/cancellation';
import { CancellationPolicyError, NotFoundError, ValidationError } from '../domain/errors';

/** The day a cancellation names (DELETE body or policy query), checked as a real calendar day. */
function requestedDay(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !isDay(value))
    throw new ValidationError([{ name: 'decommission_at', reason: 'Give a calendar day as YYYY-MM-DD.' }]);
  return value;
}

/**
 * Cancellation policies of one kind of resource, as the API answers them: `terms` reads what a
 * resource's policy is worked out from (once per request), `what` names the collection in errors.
 */
export function cancellationPolicies(options: {
  terms: (id: string) => Promise<{ terms: CancellationTerms } | undefined>;
  what: string;
  /** The first possible day in words, for the refusal of a day too early. */
  earliest: (day: string) => string;
  clock?: () => Date;
}) {
  const policy = async (id: string, requested: unknown) => {
    const found = await options.terms(id);
    if (!found) throw new NotFoundError(`no ${options.what} with id ${id}`);
    const today = dayOf((options.clock ?? (() => new Date()))());
    const asked = cancellationPolicy(found.terms, today, requestedDay(requested));
    const first = asked.tooEarly ? cancellationPolicy(found.terms, today) : asked;
    return { asked, first };
  };
  const answer = ({ decommission_at, charged_until }: CancellationPolicy): CancellationPolicy => ({
    decommission_at,
    charged_until,
  });
  return {
    /** For a DELETE: the policy for the day asked for (or the first possible one); a day too early is refused. */
    async forCancellation(id: string, body: unknown): Promise<CancellationPolicy> {
      const { asked, first } = await policy(
        id,
        (body as { decommission_at?: unknown } | undefined)?.decommission_at,
      );
      if (asked.tooEarly)
        throw new CancellationPolicyError(options.earliest(first.decommission_at), answer(first));
      return answer(asked);
    },
    /** For a policy read: what cancelling on the day asked means, or on the first possible day if that is later. */
    async forQuery(id: string, day: unknown): Promise<CancellationPolicy> {
      return answer((await policy(id, day)).first);
    },
  };
}
