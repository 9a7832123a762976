import type { HttpResponse } from '../http';
import type { CheckContext } from '../runner';
import { isItem } from './items';

/**
 * Problem documents: their type, the properties a validation error names, the conflicts a refusal
 * names.
 */

/** The names a validation problem lists. */
export const propertyNames = (body: unknown): string[] =>
  ((body as { properties?: Array<{ name?: unknown }> } | undefined)?.properties ?? []).map((p) =>
    String(p.name),
  );

/** Whether an error answer carries the IX-API problem type `name`. */
export function hasProblemType(response: HttpResponse, name: string): boolean {
  const type = (response.body as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' && type.endsWith(`/${name}.html`);
}

export const problemTypeOf = (response: HttpResponse): string =>
  JSON.stringify((response.body as { type?: unknown } | undefined)?.type);

/** Holds a refusal to the 400 validation-error the document asks for, naming `names`. */
export function validationRefusal(
  t: CheckContext,
  response: HttpResponse,
  names: readonly string[],
  what: string,
): void {
  if (!t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) return;
  t.must(
    hasProblemType(response, 'validation-error'),
    `${what} was refused as ${problemTypeOf(response)}, not validation-error`,
  );
  const named = propertyNames(response.body);
  const unnamed = names.filter((name) => !named.includes(name));
  t.must(
    unnamed.length === 0,
    `the 400 for ${what} does not name ${unnamed.join(', ')} (it names ${named.join(', ') || 'nothing'})`,
  );
}

/** Whether an unable-to-fulfill problem names `id` among its conflicts, on either side. */
export function conflictNames(response: HttpResponse, id: string): boolean {
  const conflicts = (response.body as { conflicts?: unknown } | undefined)?.conflicts;
  return (
    Array.isArray(conflicts) &&
    conflicts.some((c) => isItem(c) && (c.resource_id === id || c.remote_resource_id === id))
  );
}
