import type { PropertyError } from './errors';

/** When a registration may be used: from `valid_not_before` (null: from now) to `valid_not_after` (null: ever). */
export interface ValidityWindow {
  valid_not_before: string | null;
  valid_not_after: string | null;
}

/** What is wrong with a validity window: it must end in the future, and after it begins. */
export function validityProblems(window: ValidityWindow, now: Date): PropertyError[] {
  const before = window.valid_not_before === null ? null : Date.parse(window.valid_not_before);
  const after = window.valid_not_after === null ? null : Date.parse(window.valid_not_after);
  if (after !== null && after <= now.getTime())
    return [{ name: 'valid_not_after', reason: 'must be in the future' }];
  if (after !== null && before !== null && after <= before)
    return [{ name: 'valid_not_after', reason: 'must be after valid_not_before' }];
  return [];
}
