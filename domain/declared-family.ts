import type { Scope } from './authority';
import type { PropertyError } from './errors';

/** One property of a declared family's resources, beside its id and its two accounts. */
export interface DeclaredProperty {
  /** Its JSON schema, as the document gives it (type, format, bounds, enum, nullable). */
  schema: Readonly<Record<string, unknown>>;
  /** A create must name it. */
  required?: true;
  /** Its list takes it as a filter of equality. */
  filter?: true;
  /** Only the resource's owners see it; everybody else reads it redacted (`x-sensitive`). */
  sensitive?: true;
}

/**
 * A resource family declared whole in one place: an owned, synchronous family whose resources
 * change at once (no workflow, no device). From this and its table alone the service derives its
 * collection with filters and scope, its documented operations, the checks of its writes, its
 * events with their payload layout, redaction and reads kept by the table's version
 * (api/declared-family.ts, db/declared-store.ts). Its table has a column per property, `id`,
 * `managing_account`, `consuming_account` and `updated_at`, and a version (db/collection-versions.ts).
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
  /** The family's own rule: what is wrong with a new or changed resource, by property. */
  problems?(input: Input, context: { scope: Scope; now: Date }): PropertyError[];
}

/** What happens to a declared family's resources, as their events name it. */
export const DECLARED_HAPPENINGS = ['created', 'changed', 'deleted'] as const;

export type DeclaredHappening = (typeof DECLARED_HAPPENINGS)[number];

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

/** The properties whose values are lists or objects (kept as JSON). */
export const structuredProperties = (family: Pick<DeclaredFamily, 'properties'>): string[] =>
  Object.entries(family.properties)
    .filter(([, property]) => property.schema.type === 'array' || property.schema.type === 'object')
    .map(([name]) => name);
