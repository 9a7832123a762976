import type { CheckContext } from '../runner';

/**
 * Sensitive properties: which the document marks, and whether a value is zeroed.
 */

/** Properties the judged document marks sensitive in the schemas whose names match. */
export function sensitiveOfSchemas(t: CheckContext, names: RegExp): Set<string> {
  const schemas = t.suite.document.components.schemas as Record<
    string,
    { properties?: Record<string, { 'x-sensitive'?: boolean }> }
  >;
  const found = new Set<string>();
  for (const [name, schema] of Object.entries(schemas)) {
    if (!names.test(name)) continue;
    for (const [property, definition] of Object.entries(schema.properties ?? {}))
      if (definition['x-sensitive'] === true) found.add(property);
  }
  return found;
}

/** Absent, null or the zero value a redacted required property takes. */
export const isZero = (value: unknown) =>
  value === null || value === undefined || value === '' || value === 0 || value === false;
