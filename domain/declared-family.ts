import type { Scope } from './authority';
import type { PropertyError } from './errors';
import type { QuotaName } from './quotas';

/** One property of a declared family's resources, beside its id and its two accounts. */
export interface DeclaredProperty {
  /** Its JSON schema, as the document gives it (type, format, bounds, enum, nullable). */
  schema: Readonly<Record<string, unknown>>;
  /** A create must name it. */
  required?: true;
  /**
   * Its list takes it as a filter: of equality (`true`), or for the start or the end of a validity
   * window (`window-start`: resources usable from the time given on, which start then or before or
   * have no start; `window-end`: those still valid then, which end then or after or never).
   */
  filter?: true | 'window-start' | 'window-end';
  /** The one form its values are stored and compared in (a MAC address in lower case). */
  normalise?: (value: string) => string;
  /** Only the resource's owners see it; everybody else reads it redacted (`x-sensitive`). */
  sensitive?: true;
}

/**
 * A resource family declared whole in one place: an owned, synchronous family whose resources
 * change at once (no workflow, no device). From this and its table alone the service derives its
 * collection with filters and scope, its documented operations, the checks of its writes, its
 * events with their payload layout, redaction and reads kept by the table's version
 * (api/declared-family.ts, db/declared-store.ts). Its table has a column per property, `id`,
 * `managing_account`, `consuming_account`, `created_at` and `updated_at`, and a version (db/collection-versions.ts).
 */
export interface DeclaredFamily<Input extends Record<string, unknown> = Record<string, unknown>> {
  /** Its resources as events name them (`<resource>.created`) and the prefix of their ids. */
  resource: string;
  /** The path of its collection (`toys`), and the prefix of its operation ids (`toys_create`). */
  collection: string;
  /** Its table. */
  table: string;
  /** Its resources' schema name in the document (`Toy`) and how a summary names one (`toy`). */
  title: { schema: string; noun: string };
  properties: Readonly<Record<string, DeclaredProperty>>;
  /**
   * Who reads its resources: their two sides alone (`owned`), or every caller, who sees those of
   * other accounts without their sensitive properties (`public`). The managing side changes and
   * deletes them; the consuming side reads them.
   */
  visibility: 'owned' | 'public';
  /** Its writes: all three unless it says; a family whose resources never change has no `change`. */
  writes?: readonly DeclaredWrite[];
  /**
   * Part of IX-API itself: the document has its schemas and operations (`title.schema` names its
   * read schema) and domain/events.ts its kinds of event.
   */
  standard?: true;
  /** The family's own rule: what is wrong with a new or changed resource, by property. */
  problems?(input: Input, context: { scope: Scope; now: Date }): PropertyError[];
  /** The quota of each account tree a new resource counts against (domain/quotas.ts). */
  quota?: QuotaName;
  /**
   * A property whose value one account holds once: a second resource with it is a conflict naming
   * the first (`taken` says why), and creates for one account are serialised to hold to it.
   */
  unique?: {
    property: string;
    within: 'managing_account' | 'consuming_account';
    taken(value: string): string;
  };
  /**
   * Resources of another family that hold its resources in a list, through a link table: its list
   * filters by holder (`filter`), one that a live holder has cannot be deleted (`inUse` says how to
   * let go of it), and deleting one takes it off the holders that are going.
   */
  heldBy?: {
    filter: string;
    link: { table: string; held: string; holder: string };
    holders: { table: string; collection: string; property: string };
    inUse(resource: Input, holders: readonly string[]): string;
  };
}

export type DeclaredWrite = 'create' | 'change' | 'destroy';

/** The writes a declared family has. */
export const declaredWrites = (family: Pick<DeclaredFamily, 'writes'>): readonly DeclaredWrite[] =>
  family.writes ?? ['create', 'change', 'destroy'];

/** What happens to a declared family's resources, as their events name it, by the write that does it. */
export const DECLARED_HAPPENINGS = { create: 'created', change: 'changed', destroy: 'deleted' } as const;

export type DeclaredHappening = (typeof DECLARED_HAPPENINGS)[DeclaredWrite];

/** What the events of a family with `writes` say happened, in their order (typed one by one). */
export const declaredHappenings = <W extends readonly DeclaredWrite[]>(writes: W) =>
  writes.map((write) => DECLARED_HAPPENINGS[write]) as unknown as {
    readonly [K in keyof W]: (typeof DECLARED_HAPPENINGS)[W[K]];
  };

/** The kind of event of `happening` to a resource of `family`. */
export const declaredEventType = (family: Pick<DeclaredFamily, 'resource'>, happening: DeclaredHappening) =>
  `${family.resource}.${happening}`;

/** Every column of a declared family's table the service reads and writes, `updated_at` aside. */
export const declaredColumns = (family: Pick<DeclaredFamily, 'properties'>): string[] => [
  'id',
  'managing_account',
  'consuming_account',
  ...Object.keys(family.properties),
];

/** The properties that hold instants (`date-time`). */
export const instantProperties = (family: Pick<DeclaredFamily, 'properties'>): string[] =>
  Object.entries(family.properties)
    .filter(([, property]) => property.schema.format === 'date-time')
    .map(([name]) => name);

/** The properties whose values are lists or objects (kept as JSON). */
export const structuredProperties = (family: Pick<DeclaredFamily, 'properties'>): string[] =>
  Object.entries(family.properties)
    .filter(([, property]) => property.schema.type === 'array' || property.schema.type === 'object')
    .map(([name]) => name);
