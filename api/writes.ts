import type { Scope } from '../domain/authority';
import type { Caller } from './operations';

/**
 * What write handlers share: the caller's scope. A write's workflow messages are no handler's
 * business: the outbox sends them once the write has committed (db/repositories/outbox-repository.ts).
 */
export interface WriteContext {
  scope(caller: Caller | undefined): Promise<Scope>;
}

/**
 * The writable properties of a request body, in the shape a full replacement needs: properties the
 * body leaves out take `absent` (null for nullable ones), so PUT replaces rather than merges.
 */
export function replacement<T extends Record<string, unknown>>(body: unknown, absent: T): T {
  const given = (body ?? {}) as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const [name, fallback] of Object.entries(absent)) {
    result[name] = given[name] === undefined ? fallback : given[name];
  }
  return result as T;
}

/**
 * A partial update applied to the current writable properties: each property the body names
 * replaces the stored one (null clears it), the others stay. Nested objects are replaced whole,
 * which is what a merge patch of a complete object does.
 */
export function merged<T extends Record<string, unknown>>(current: T, body: unknown): T {
  const given = (body ?? {}) as Record<string, unknown>;
  const result: Record<string, unknown> = { ...current };
  for (const name of Object.keys(current)) if (given[name] !== undefined) result[name] = given[name];
  return result as T;
}
