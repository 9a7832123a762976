/**
 * Redaction of sensitive properties for callers outside a resource's authorised scope. A plan says,
 * per resource type, which properties to hide; a hidden property that the read form requires keeps
 * its key with a zero value (empty string, 0, false, empty list) so the document stays valid.
 */

export type ZeroValue = '' | 0 | false | [] | null;

export interface RedactionPlan {
  /** Properties to hide. */
  sensitive: readonly string[];
  /** Required properties among them, with the zero value of their type. */
  zero: Readonly<Record<string, ZeroValue>>;
  /** When set, only these properties survive (a discoverable account seen from outside). */
  only?: readonly string[];
}

/** A copy of `resource` without what the plan hides; the input is never changed. */
export function redact<T extends Record<string, unknown>>(
  resource: T,
  plan: RedactionPlan,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const keep = plan.only ? new Set(plan.only) : undefined;
  for (const [key, value] of Object.entries(resource)) {
    if (keep && !keep.has(key)) continue;
    if (plan.sensitive.includes(key)) {
      if (key in plan.zero) result[key] = Array.isArray(plan.zero[key]) ? [] : plan.zero[key];
      continue;
    }
    result[key] = value;
  }
  return result;
}

/** The zero value IX-API prescribes for a redacted required property of the given JSON type. */
export function zeroValueOf(type: string | undefined): ZeroValue {
  switch (type) {
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    default:
      return null;
  }
}
