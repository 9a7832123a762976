import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { DOCUMENT_ID, createAjv } from '../spec/ajv';
import type { PropertyError } from '../domain/errors';
import { ValidationError } from '../domain/errors';
import type { OpenApiDocument } from '../spec';
import { operationParameters, pointer, specOperations } from '../spec';

export { DOCUMENT_ID, createAjv } from '../spec/ajv';

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
