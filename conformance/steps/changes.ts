import { isDeepStrictEqual } from 'node:util';
import type { CheckContext } from '../runner';
import { policyOf } from './cancellation-policies';
import { addDays, today } from './days';
import type { Item } from './items';
import { current, isItem, show } from './items';
import { hasProblemType, problemTypeOf, propertyNames, validationRefusal } from './problems';
import type { Cancellable, Readable } from './subjects';
import { DECOMMISSIONING, ENDING, GOING } from './subjects';
import { waitFor } from './waiting';

/**
 * Changing and cancelling a resource of the suite's own as a customer does, and the changes that
 * must be refused.
 */

/**
 * Changes a resource and holds the answer to the document: 202 with the resource, and the values
 * sent show on reading it (at once or once the change is carried out).
 */
export async function change(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  body: Item,
  watched: readonly string[],
): Promise<void> {
  const method = t.suite.operation(operationId).method;
  const response = await t.call(operationId, { id, body });
  if (response.status === 400 && hasProblemType(response, 'unable-to-fulfill'))
    t.inconclusive(
      `the exchange does not take the ${method} of ${subject.noun} ${id} now: ${response.text.slice(0, 200)}`,
    );
  t.must(response.status === 202, `${method} of ${subject.noun} ${id} answered ${response.status}, not 202`);
  t.must(
    (response.body as Item | undefined)?.id === id,
    `the answer to the ${method} is not ${subject.noun} ${id}`,
  );
  const differs = (read: Item) => watched.filter((name) => !isDeepStrictEqual(read[name], body[name]));
  const shown = await waitFor(
    t,
    subject.read,
    id,
    (read) => differs(read).length === 0,
    t.suite.waits.settling,
  );
  if (shown) return;
  const read = (await current(t, subject, id)) ?? {};
  t.must(
    false,
    `${t.suite.waits.settling / 1000} s after the ${method} a read of ${subject.noun} ${id} shows ${differs(
      read,
    )
      .map((name) => `${name} ${show(read[name])} instead of ${show(body[name])}`)
      .join(', ')}`,
  );
}

/**
 * Another account's attempt on a resource of the suite's own, which it cannot see: a 404, and the
 * properties `watched` stay as they were. Safe on any server, since the resource is the suite's.
 */
export async function foreignAttempt(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  request: { body?: unknown; rawBody?: Buffer; headers?: Record<string, string> },
  watched: readonly string[],
): Promise<void> {
  if (!t.suite.hasCredentials('secondary')) return;
  const method = t.suite.operation(operationId).method;
  const before = await current(t, subject, id);
  const response = await t.call(operationId, { id, role: 'secondary', ...request });
  t.must(
    response.status === 404,
    `another account's ${method} of ${subject.noun} ${id}, which it cannot see, answered ${response.status}, not 404`,
  );
  const after = await current(t, subject, id);
  if (!before || !after) return;
  for (const name of watched)
    t.must(
      isDeepStrictEqual(after[name], before[name]),
      `another account's ${method} changed ${name} of ${subject.noun} ${id} from ${show(before[name])} to ${show(after[name])}`,
    );
}

/**
 * A PATCH without `type`, as clients send it: taken like one with it (202 with the resource of
 * `type`, `body[watched]` shown once carried out). Refused naming `type`, it is only a warning:
 * the document requires the property.
 */
export async function untypedChange(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  body: Item,
  type: string,
  watched: string,
): Promise<void> {
  const what = `a PATCH of ${subject.noun} ${id} without type`;
  const response = await t.call(operationId, { id, body });
  if (response.status === 400 && propertyNames(response.body).includes('type')) {
    t.should(
      false,
      `${what} was refused (${problemTypeOf(response)}); the document requires type, but clients leave it out`,
    );
    return;
  }
  const refused =
    response.status >= 400 ? ` (${problemTypeOf(response)}: ${response.text.slice(0, 160)})` : '';
  if (!t.must(response.status === 202, `${what} answered ${response.status}, not 202${refused}`)) return;
  t.must(
    isItem(response.body) && response.body.type === type,
    `the answer to a PATCH without type is of type ${show(isItem(response.body) ? response.body.type : undefined)}`,
  );
  const shown = await waitFor(
    t,
    subject.read,
    id,
    (read) => read[watched] === body[watched],
    t.suite.waits.settling,
  );
  t.must(shown, `${t.suite.waits.settling / 1000} s after ${what} it does not show`);
}

/** A change the schema forbids: a 400 validation-error naming `names`, and nothing changes. */
export async function refusedChange(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  body: Item,
  names: readonly string[],
): Promise<void> {
  const method = t.suite.operation(operationId).method;
  const before = await current(t, subject, id);
  const response = await t.call(operationId, { id, body });
  const what = `${method} of ${subject.noun} ${id} with ${names
    .map((name) => (name in body ? `${name} ${show(body[name])}` : `no ${name}`))
    .join(', ')}`;
  validationRefusal(t, response, names, what);
  const after = await current(t, subject, id);
  if (!before || !after) return;
  for (const name of new Set([...Object.keys(body), ...names]))
    t.must(
      isDeepStrictEqual(after[name], before[name]),
      `the refused ${method} changed ${name} from ${show(before[name])} to ${show(after[name])}`,
    );
}

/**
 * Cancels a resource of the suite's own the way a customer does and holds each answer to the
 * document: a day before the first possible one is refused by the policy and changes nothing; a
 * DELETE without a day answers 202 with the resource, which then goes (decommission_requested
 * with the policy's day, or cancelled while it was being provisioned) and stays readable.
 */
export async function cancel(t: CheckContext, subject: Cancellable, id: string): Promise<void> {
  const before = await current(t, subject, id);
  if (!before) return;
  const live = before.state === 'production';
  const policy = t.suite.isDeclared(subject.policy) ? await policyOf(t, subject.policy, id) : undefined;
  const tooEarly = addDays(policy?.decommission_at ?? today(), -1);
  const refused = await t.call(subject.destroy, { id, body: { decommission_at: tooEarly } });
  const refusal = `DELETE of ${subject.noun} ${id} on ${tooEarly}, the day before the first possible one`;
  if (t.must(refused.status === 400, `${refusal} answered ${refused.status}, not 400`)) {
    const problem = refused.body as Item;
    if (hasProblemType(refused, 'cancellation-policy-error')) {
      t.must(
        typeof problem.decommission_at === 'string' && problem.decommission_at > tooEarly,
        `the cancellation-policy-error names ${show(problem.decommission_at)} as the first possible day, not a day after ${tooEarly}`,
      );
      if (policy)
        t.should(
          problem.decommission_at === policy.decommission_at,
          `the cancellation-policy-error names ${show(problem.decommission_at)}, the policy ${policy.decommission_at}`,
        );
    } else if (tooEarly < today() && hasProblemType(refused, 'validation-error')) {
      t.should(
        false,
        `a day in the past was refused as a validation-error; a cancellation-policy-error would say which day is possible`,
      );
    } else {
      t.must(false, `${refusal} was refused as ${problemTypeOf(refused)}, not cancellation-policy-error`);
    }
  }
  const still = await current(t, subject, id);
  t.must(
    !still || !GOING.includes(String(still.state)),
    `the refused DELETE cancelled ${subject.noun} ${id} anyway (it is ${String(still?.state)})`,
  );

  // Provisioning may move the state on meanwhile; only a cancellation would be the other's doing.
  await foreignAttempt(t, subject, subject.destroy, id, {}, ['decommission_at']);
  if (t.suite.hasCredentials('secondary')) {
    const untouched = await current(t, subject, id);
    t.must(
      !untouched || !GOING.includes(String(untouched.state)),
      `another account's DELETE cancelled ${subject.noun} ${id} (it is ${String(untouched?.state)})`,
    );
  }

  const deleted = await t.call(subject.destroy, { id });
  t.must(deleted.status === 202, `DELETE of ${subject.noun} ${id} answered ${deleted.status}, not 202`);
  const answer = isItem(deleted.body) ? deleted.body : undefined;
  t.must(answer?.id === id, `the answer to the DELETE is not ${subject.noun} ${id}`);
  if (answer && live)
    t.must(
      DECOMMISSIONING.includes(String(answer.state)),
      `a ${subject.noun} in production answered its DELETE as ${String(answer.state)}, not decommission_requested`,
    );
  if (answer && DECOMMISSIONING.includes(String(answer.state))) {
    t.must(
      typeof answer.decommission_at === 'string',
      `the answer to the DELETE is ${String(answer.state)} without a decommission_at`,
    );
    if (live && policy) {
      // The day may turn between the two requests; the policy asked afterwards settles it.
      const asked =
        answer.decommission_at === policy.decommission_at ? policy : await policyOf(t, subject.policy, id);
      const agreed = [policy, asked].some(
        (p) =>
          p?.decommission_at === answer.decommission_at &&
          (answer.charged_until === undefined ||
            answer.charged_until === null ||
            answer.charged_until === p?.charged_until),
      );
      t.must(
        agreed,
        `a DELETE without a day set decommission_at ${show(answer.decommission_at)} and charged_until ${show(answer.charged_until)}; the policy offered ${policy.decommission_at} and ${policy.charged_until}`,
      );
    }
  }
  const ended = await waitFor(
    t,
    subject.read,
    id,
    (read) => ENDING.includes(String(read.state)),
    t.suite.waits.settling * 2,
  );
  const after = await t.call(subject.read, { id });
  if (
    !t.must(
      after.status === 200,
      `after its DELETE ${subject.noun} ${id} answers ${after.status}; it stays readable until it is archived`,
    )
  )
    return;
  const state = String((after.body as Item).state);
  t.must(
    ended !== undefined,
    `${(t.suite.waits.settling * 2) / 1000} s after its DELETE ${subject.noun} ${id} is ${state}, not decommission_requested, decommissioned or cancelled`,
  );
  if (DECOMMISSIONING.includes(state))
    t.must(
      typeof (after.body as Item).decommission_at === 'string',
      `${subject.noun} ${id} is ${state} without a decommission_at`,
    );
}
