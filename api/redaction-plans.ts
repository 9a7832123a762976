import type { RedactionPlan } from '../domain/redaction';
import { zeroValueOf } from '../domain/redaction';
import type { OpenApiDocument } from '../spec';

interface SchemaObject {
  type?: string;
  properties?: Record<string, SchemaObject & { 'x-sensitive'?: boolean }>;
  required?: string[];
  allOf?: Array<SchemaObject & { $ref?: string }>;
  $ref?: string;
}

function schemaNamed(document: OpenApiDocument, name: string): SchemaObject {
  const schema = document.components.schemas[name] as SchemaObject | undefined;
  if (!schema) throw new Error(`schema ${name} is not in the OpenAPI document`);
  return schema;
}

/** Properties and required names of a schema, following `allOf` references. */
function flatten(
  document: OpenApiDocument,
  schema: SchemaObject,
): { properties: Record<string, SchemaObject & { 'x-sensitive'?: boolean }>; required: string[] } {
  let properties = { ...(schema.properties ?? {}) };
  let required = [...(schema.required ?? [])];
  for (const part of schema.allOf ?? []) {
    const inner = flatten(document, part.$ref ? schemaNamed(document, part.$ref.split('/').pop()!) : part);
    properties = { ...inner.properties, ...properties };
    required = [...inner.required, ...required];
  }
  return { properties, required };
}

/**
 * The redaction plan of a read schema, from the document's `x-sensitive` marks: the marked
 * properties, and a zero value for each of them the schema requires.
 */
export function redactionPlanFor(document: OpenApiDocument, schemaName: string): RedactionPlan {
  const { properties, required } = flatten(document, schemaNamed(document, schemaName));
  const sensitive = Object.entries(properties)
    .filter(([, property]) => property['x-sensitive'] === true)
    .map(([name]) => name);
  const zero = Object.fromEntries(
    sensitive
      .filter((name) => required.includes(name))
      .map((name) => [name, zeroValueOf(properties[name].type)]),
  );
  return { sensitive, zero };
}

/** The redaction plan of each type of a resource read as a `oneOf` of types, by the type's read schema. */
export function redactionPlansByType(
  document: OpenApiDocument,
  schemaOf: Readonly<Record<string, string>>,
): Record<string, RedactionPlan> {
  return Object.fromEntries(
    Object.entries(schemaOf).map(([type, schema]) => [type, redactionPlanFor(document, schema)]),
  );
}

/**
 * Every property the document marks `x-sensitive` in a read schema, in any of its types when the
 * schema is a `oneOf` of types (network services, configs, joining rules).
 */
export function sensitivePropertiesOf(document: OpenApiDocument, schemaName: string): string[] {
  const schema = schemaNamed(document, schemaName) as SchemaObject & { oneOf?: Array<{ $ref?: string }> };
  const variants = (schema.oneOf ?? [])
    .map((variant) => variant.$ref?.split('/').pop())
    .filter((name): name is string => name !== undefined);
  const names = variants.length ? variants : [schemaName];
  return [...new Set(names.flatMap((name) => redactionPlanFor(document, name).sensitive))].sort();
}
