import type { PendingMessage } from '../db/repositories/outbox-repository';
import type { Scope } from '../domain/authority';
import type { Caller } from './operations';
import type { WorkflowStarter } from '../temporal/client';

/** What write handlers share: the caller's scope and the delivery of workflow messages after commit. */
export interface WriteContext {
  scope(caller: Caller | undefined): Promise<Scope>;
  starter: WorkflowStarter;
}

/**
 * Sends the workflow messages a committed write produced. Each is in the outbox already, so one that
 * cannot be sent now (Temporal down) goes out with the relay later; the client's answer never waits
 * on it failing.
 */
export async function deliverAll(
  starter: WorkflowStarter,
  messages: readonly PendingMessage[],
): Promise<void> {
  for (const message of messages) await starter.deliver(message);
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
