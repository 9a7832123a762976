import Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { PropertyError } from '../domain/errors';
import { ValidationError } from '../domain/errors';
import type { OpenApiDocument } from '../spec';
import { operationParameters, pointer, specOperations } from '../spec';

/** The `$id` under which the whole document is registered with ajv. */
export const DOCUMENT_ID = 'ixapi-openapi';

/**
 * OpenAPI 3.0 allows `nullable: true` beside `allOf`/`$ref` without a `type`; ajv only understands
 * `nullable` next to `type`. Such schemas become "the schema, or null" in a copy of the document.
 */
function nullableForAjv(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableForAjv);
  if (typeof node !== 'object' || node === null) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = nullableForAjv(value);
  if (copy.nullable === true && copy.type === undefined) {
    delete copy.nullable;
    return { anyOf: [copy, { enum: [null] }] };
  }
  return copy;
}

/** An ajv instance that understands the OpenAPI 3.0 dialect of the document (nullable, discriminator). */
export function createAjv(document: OpenApiDocument): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, discriminator: true, coerceTypes: false });
  addFormats(ajv);
  ajv.addSchema({ ...(nullableForAjv(document) as object), $id: DOCUMENT_ID });
  return ajv;
}

/** `/address/country` → `address.country`, `/asns/0` → `asns.0`. */
function propertyName(error: ErrorObject): string {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required')
    segments.push(String((error.params as { missingProperty: string }).missingProperty));
  if (error.keyword === 'additionalProperties') {
    segments.push(String((error.params as { additionalProperty: string }).additionalProperty));
  }
  return segments.join('.') || 'body';
}

function reason(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'This field is required.';
    case 'additionalProperties':
      return 'This field is not allowed here.';
    case 'enum':
      return `Must be one of: ${((error.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}.`;
    default:
      return `${(error.message ?? 'is invalid').replace(/^must/, 'Must')}.`;
  }
}

/** Turns ajv errors into IX-API `properties`, one entry per failing property. */
export function toPropertyErrors(
  errors: readonly ErrorObject[] | null | undefined,
  prefix = '',
): PropertyError[] {
  const seen = new Set<string>();
  const properties: PropertyError[] = [];
  for (const error of errors ?? []) {
    const name = prefix
      ? [prefix, propertyName(error)].filter((p) => p && p !== 'body').join('.')
      : propertyName(error);
    if (seen.has(name)) continue;
    seen.add(name);
    properties.push({ name, reason: reason(error) });
  }
  return properties;
}

export interface RequestValidators {
  /** Validates a request body for an operation; throws ValidationError naming every failing property. */
  body(operationId: string, body: unknown): void;
  /**
   * Whether the path parameters fit the operation's declared schemas. A path that cannot name a
   * resource is answered like a resource that does not exist.
   */
  pathMatches(operationId: string, params: Record<string, string>): boolean;
}

/** Compiles a body validator for every operation with a JSON request body, once, at start-up. */
export function compileRequestValidators(
  document: OpenApiDocument,
  ajv: Ajv = createAjv(document),
): RequestValidators {
  const bodies = new Map<string, { required: boolean; validate: ValidateFunction }>();
  const paths = new Map<string, Array<[string, ValidateFunction]>>();
  for (const { operationId, method, path, operation } of specOperations(document)) {
    paths.set(
      operationId,
      operationParameters(document, path, method, operation, 'path').map(([parameter, at]) => [
        parameter.name,
        ajv.compile({ $ref: `${DOCUMENT_ID}#${at}/schema` }),
      ]),
    );
    const content = operation.requestBody?.content;
    const mediaType = content && Object.keys(content).find((type) => type.includes('json'));
    if (!mediaType) continue;
    const ref = `${DOCUMENT_ID}#${pointer('paths', path, method, 'requestBody', 'content', mediaType, 'schema')}`;
    bodies.set(operationId, {
      required: operation.requestBody?.required ?? false,
      validate: ajv.compile({ $ref: ref }),
    });
  }
  return {
    pathMatches(operationId, params) {
      return (paths.get(operationId) ?? []).every(([name, validate]) => validate(params[name]));
    },
    body(operationId, body) {
      const entry = bodies.get(operationId);
      if (!entry) return;
      if (body === undefined || body === null) {
        if (entry.required)
          throw new ValidationError([{ name: 'body', reason: 'A JSON request body is required.' }]);
        return;
      }
      if (!entry.validate(body)) throw new ValidationError(toPropertyErrors(entry.validate.errors));
    },
  };
}
