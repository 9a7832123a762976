import type { Config } from '../config/config';
import type { Database } from '../db';
import type { StatisticsSubjectType } from '../domain/statistics';
import type { OpenApiDocument } from '../spec';
import { specOperations } from '../spec';
import type { CollectionEntry } from './collections';
import type { PayloadLayout } from './event-payloads';
import type { OperationDefinition } from './operations';
import type { RequestValidators } from './request-validation';
import type { WriteContext } from './writes';

/** What a family's operations are built from. */
export interface FamilyDeps {
  db: Database;
  document: OpenApiDocument;
  validators: RequestValidators;
  writes: WriteContext;
  settings: Pick<Config, 'ipQuarantineSeconds' | 'statsSampleIntervalSeconds'>;
  clock?: () => Date;
}

/**
 * A family's operations, grouped by where they come from: its own handlers (generated from the
 * descriptor or written for it) and the lifecycle operations the shared builders make
 * (api/lifecycle-operations.ts): a cancellation with its policy read, a letter of authorisation.
 */
export interface FamilyOperations {
  handlers: readonly OperationDefinition[];
  /** From `cancellationOperations`: the DELETE by cancellation policy and the policy read. */
  cancellation?: readonly OperationDefinition[];
  /** From `loaOperations`: the LOA download and upload. */
  loa?: readonly OperationDefinition[];
}

/**
 * One resource family: its collections (the read side), how it answers writes, and its
 * operations. Every family the server routes is one of these in the registry (api/registry.ts),
 * and the server mounts what the registry lists.
 */
export interface ResourceFamily {
  /** The path of its collection (`macs`), or `catalogue` for the exchange's read-only collections. */
  name: string;
  /** Its collections and who sees what of them (a family may have several: contacts and roles). */
  collections(document: OpenApiDocument): readonly CollectionEntry[];
  /**
   * Stateful resources change through their workflow: PUT, PATCH and DELETE answer 202, and a
   * DELETE leaves the resource in place (decommissioning, cancelled) until it ends. Others change
   * at once (200) and a DELETE removes them.
   */
  asynchronous: boolean;
  /** What a change answers where it differs from what `asynchronous` says (accounts: 202, IX-API). */
  changeStatus?: 200 | 202;
  /** Whose traffic statistics it shows (`<subject>s_statistics_read`, by `statisticsOperations`). */
  statistics?: readonly StatisticsSubjectType[];
  /**
   * Its kinds of event with what their payloads hold, where the family declares them itself rather
   * than the list of kinds in domain/events.ts (a declared family, api/declared-family.ts).
   */
  events?: Readonly<Record<string, PayloadLayout>>;
  /** What it adds to the document (its schemas and operations), where the document lacks them. */
  document?: DocumentFragment;
  /** Tables it reads whose versions let its reads be kept: start-up checks that each has one. */
  versioned?: readonly string[];
  operations(deps: FamilyDeps): FamilyOperations;
}

/** Schemas and paths a family adds to the OpenAPI document. */
export interface DocumentFragment {
  schemas: Readonly<Record<string, Record<string, unknown>>>;
  paths: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * The document with what the families add to it; the document itself when they add nothing. A
 * family may not replace what the document has: that stops start-up.
 */
export function documentWith(
  document: OpenApiDocument,
  families: readonly ResourceFamily[],
): OpenApiDocument {
  const fragments = families.flatMap((family) => (family.document ? [family.document] : []));
  if (!fragments.length) return document;
  const paths = { ...document.paths };
  const schemas = { ...document.components.schemas };
  for (const fragment of fragments) {
    for (const [path, item] of Object.entries(fragment.paths)) {
      if (path in paths) throw new Error(`the document has ${path} already`);
      paths[path] = structuredClone(item) as OpenApiDocument['paths'][string];
    }
    for (const [name, schema] of Object.entries(fragment.schemas)) {
      if (name in schemas) throw new Error(`the document has a schema ${name} already`);
      schemas[name] = structuredClone(schema);
    }
  }
  return { ...document, paths, components: { ...document.components, schemas } };
}

/** The statuses a family's writes answer with. */
export function statusesOf(family: Pick<ResourceFamily, 'asynchronous' | 'changeStatus'>): {
  change: number;
  destroy: number;
} {
  const stateful = family.asynchronous ? 202 : 200;
  return { change: family.changeStatus ?? stateful, destroy: stateful };
}

/** Every operation of the family, its lifecycle operations included. */
export function operationsOf(family: ResourceFamily, deps: FamilyDeps): OperationDefinition[] {
  const { handlers, cancellation = [], loa = [] } = family.operations(deps);
  return [...handlers, ...cancellation, ...loa];
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/** The operations of the document that change something and need a caller (not the token operations). */
export function documentedWrites(document: OpenApiDocument): string[] {
  return specOperations(document)
    .filter(({ method, operation }) => WRITE_METHODS.has(method) && !isEmpty(operation.security))
    .map(({ operationId }) => operationId);
}

const isEmpty = (security: unknown[] | undefined) => Array.isArray(security) && security.length === 0;

/**
 * Refuses a registry that does not match the document: an operation the document does not know,
 * one routed twice, or a documented write nobody handles. Runs at start-up, before anything is
 * mounted.
 */
export function checkRegistry(document: OpenApiDocument, operationIds: readonly string[]): void {
  const known = new Set(specOperations(document).map((op) => op.operationId));
  const unknown = operationIds.filter((id) => !known.has(id));
  if (unknown.length) throw new Error(`operation ${unknown.join(', ')} is not in the OpenAPI document`);
  const twice = operationIds.filter((id, index) => operationIds.indexOf(id) !== index);
  if (twice.length) throw new Error(`operation ${[...new Set(twice)].join(', ')} is routed twice`);
  const unhandled = documentedWrites(document).filter((id) => !operationIds.includes(id));
  if (unhandled.length)
    throw new Error(`the document's write operation ${unhandled.join(', ')} has no handler in the registry`);
}

type Schema = Record<string, unknown>;

function resolved(document: OpenApiDocument, schema: Schema): Schema {
  let current = schema;
  while (typeof current.$ref === 'string')
    current = document.components.schemas[current.$ref.split('/').pop()!];
  return current;
}

/**
 * The request body schema of an operation, and its variants when it is one of several (by `type`):
 * all of them, or the one of `type`.
 */
export function requestSchemas(document: OpenApiDocument, operationId: string, type?: string): Schema[] {
  const op = specOperations(document).find((candidate) => candidate.operationId === operationId);
  if (!op) throw new Error(`operation ${operationId} is not in the OpenAPI document`);
  const schema = op.operation.requestBody?.content['application/json']?.schema as Schema | undefined;
  if (!schema) throw new Error(`operation ${operationId} takes no JSON body`);
  const body = resolved(document, schema);
  if (!Array.isArray(body.oneOf)) return [body];
  const variants = (body.oneOf as Schema[]).map((variant) => resolved(document, variant));
  if (type === undefined) return variants;
  return variants.filter((variant) => {
    const typeSchema = (variant.properties as Record<string, Schema> | undefined)?.type;
    return Array.isArray(typeSchema?.enum) && typeSchema.enum.includes(type);
  });
}

/**
 * What a property left out of a request stands for: the document's default, null where it may be
 * null (a replacement that leaves it out clears it), and otherwise the zero of its type (the first
 * of its values, an empty string or list, false, the least number). A required property never
 * takes it: the request names it.
 */
function absentValue(document: OpenApiDocument, property: Schema): unknown {
  const schema = resolved(document, property);
  if ('default' in schema) return structuredClone(schema.default);
  if (schema.nullable === true) return null;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return '';
    case 'array':
      return [];
    case 'boolean':
      return false;
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    default:
      return null;
  }
}

/**
 * The writable properties of a request body, as the document's request schema of `operationId`
 * lists them (for a body that depends on its `type`, that type's, or every variant's with the
 * first's values), each with the value a request that leaves it out gives it: what `replacement`
 * fills in and `merged` keeps to.
 */
export function writableDefaults<T extends Record<string, unknown>>(
  document: OpenApiDocument,
  operationId: string,
  type?: string,
): T {
  const defaults: Record<string, unknown> = {};
  for (const variant of requestSchemas(document, operationId, type)) {
    const properties = (variant.properties ?? {}) as Record<string, Schema>;
    for (const [name, property] of Object.entries(properties)) {
      if (!(name in defaults) && property.readOnly !== true) defaults[name] = absentValue(document, property);
    }
  }
  return defaults as T;
}
