import type { FamilyResource, WorkflowResource } from './families';
import { FAMILIES, FAMILY_RESOURCES } from './families';

type Families = typeof FAMILIES;

/** A kind of event: `<resource>.<what happened>`, of a family and one of its happenings. */
export type EventType = {
  [R in FamilyResource]: `${R}.${Families[R]['happenings'][number]}`;
}[FamilyResource];

/**
 * Every kind of event the service records, `<resource>.<what happened>`, in the order of the
 * families (domain/families.ts): the one list the writers are typed by and the event log presents
 * payloads by, so a new kind cannot be written unannounced.
 */
export const EVENT_TYPES: readonly EventType[] = FAMILY_RESOURCES.flatMap((resource) =>
  FAMILIES[resource].happenings.map((happening: string) => `${resource}.${happening}` as EventType),
);

/**
 * Kinds only older versions wrote: the log still holds and shows them, nothing writes them now. A
 * network service asked to go before production used to be marked for cancellation; it now goes
 * like a live one (`network_service.state_changed` to `decommission_requested`).
 */
export const RETIRED_EVENT_TYPES: readonly EventType[] = ['network_service.cancellation_requested'];

/** The kinds of event written now. */
export const WRITTEN_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter(
  (type) => !RETIRED_EVENT_TYPES.includes(type),
);

type After<T, Resource extends string> = T extends `${Resource}.${infer What}` ? What : never;

/** What may happen to a kind of resource, as its events name it (`<resource>.<what>`). */
export type HappeningOf<Resource extends string> = After<EventType, Resource>;

/**
 * The resources whose lives the shared lifecycle store records: those with a workflow of their own,
 * but accounts, whose on-boarding has a store of its own.
 */
export type LifecycleResource = Exclude<WorkflowResource, 'account'>;

/** What the lifecycle store records of such a resource. */
export type LifecycleHappening = 'created' | 'changed' | 'state_changed' | 'cancellation_requested';

/** The kinds of resource events are about, as their types name them (`connection`, `port_reservation`). */
export type EventResource = EventType extends `${infer Resource}.${string}` ? Resource : never;

/**
 * Where the payload of an event holds the resource it is about, by the kind of resource: under its
 * family's `eventProperty`. A move, a cancellation, a letter of authorisation or a change request
 * names it as `id`. (Typed so that an event kind about anything but a family does not compile.)
 */
export const EVENT_RESOURCE_PROPERTIES: Readonly<Record<EventResource, string>> = Object.fromEntries(
  FAMILY_RESOURCES.map((resource) => [resource, FAMILIES[resource].eventProperty]),
) as Record<FamilyResource, string>;

/** An id as the payload holds it: a string of at most 80 characters, or nothing. */
const idOf = (value: unknown): string | null =>
  typeof value === 'string' && value.length > 0 && value.length <= 80 ? value : null;

/**
 * The id of the resource an event is about (`GET /events?resource=`), as its payload names it: the
 * id of the resource it holds, or its `id` for a move and the like; null where it names none.
 */
export function eventResourceOf(type: EventType, payload: Record<string, unknown>): string | null {
  const held = payload[EVENT_RESOURCE_PROPERTIES[type.slice(0, type.indexOf('.')) as EventResource]];
  const heldId = typeof held === 'object' && held !== null ? (held as Record<string, unknown>).id : undefined;
  return idOf(heldId) ?? idOf(payload.id);
}
