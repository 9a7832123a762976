import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { DOCUMENT_ID, compileRef, ajvOf } from '../spec/ajv';
import type { PropertyError } from '../domain/errors';
import { ValidationError } from '../domain/errors';
import type { OpenApiDocument } from '../spec';
import { operationParameters, pointer, specOperations } from '../spec';

export { DOCUMENT_ID, ajvOf } from '../spec/ajv';

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

/** A validation problem names at most this many properties; its detail says how many more failed. */
export const MAX_PROPERTY_ERRORS = 20;
/** Names and reasons are cut to these lengths: a name may echo a property name the client chose. */
const MAX_NAME = 200;
const MAX_REASON = 500;

const clip = (text: string, length: number) =>
  text.length > length ? `${text.slice(0, length - 1)}…` : text;

/**
 * The validation problem for what failed, however much did: the first MAX_PROPERTY_ERRORS
 * properties, and a detail that ends by saying how many more there were.
 */
export function validationError(properties: readonly PropertyError[]): ValidationError {
  const shown = properties
    .slice(0, MAX_PROPERTY_ERRORS)
    .map((p) => ({ name: clip(p.name, MAX_NAME), reason: clip(p.reason, MAX_REASON) }));
  const error = new ValidationError(shown);
  const omitted = properties.length - shown.length;
  if (omitted > 0)
    error.message = `${error.message}; and ${omitted} more ${omitted === 1 ? 'property' : 'properties'} did not validate`;
  return error;
}

/** Turns ajv errors into IX-API `properties`, one entry per failing property. */
export function toPropertyErrors(
  errors: readonly ErrorObject[] | null | undefined,
  prefix = '',
): PropertyError[] {
  const seen = new Set<string>();
  const properties: PropertyError[] = [];
  for (const error of errors ?? []) {
    // An array's items and a string's pattern are checked under `if` (see spec/ajv.ts); the errors
    // that matter are those of what failed inside, not that the `then` branch did.
    if (error.keyword === 'if') continue;
    const name = prefix
      ? [prefix, propertyName(error)].filter((p) => p && p !== 'body').join('.')
      : propertyName(error);
    if (seen.has(name)) continue;
    seen.add(name);
    properties.push({ name, reason: reason(error) });
  }
  return properties;
}

/**
 * Characters no text of IX-API holds: the C0 and C1 controls (tab and line breaks among them), DEL,
 * and the bidirectional embeddings, overrides and isolates, which make stored text display as
 * something other than it is.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** With the `u` flag a surrogate pair is one code point, so this finds only unpaired halves. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;
/** Either of the two, in one pass over the text. */
// eslint-disable-next-line no-control-regex -- as above
const UNSTORABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/u;
/** IX-API bodies nest a few levels (an account's billing address is the deepest); more is abuse. */
export const MAX_BODY_DEPTH = 32;

/** Why a text cannot be stored, if it cannot. */
export function textFault(text: string): string | undefined {
  if (!UNSTORABLE.test(text)) return undefined;
  if (CONTROL_CHARACTERS.test(text))
    return 'Must not contain control characters (U+0000 to U+001F, U+007F to U+009F) or bidirectional formatting characters (U+202A to U+202E, U+2066 to U+2069).';
  if (LONE_SURROGATE.test(text)) return 'Must be well-formed Unicode text.';
  return undefined;
}

/**
 * Every string of a JSON body, at any depth and whether the schema knows its property or not, and
 * every property name: one entry for each that holds a character no text may hold; nesting deeper
 * than MAX_BODY_DEPTH is refused where it starts. Walks with its own stack, so that no body can
 * exhaust the call stack.
 */
export function textPropertyErrors(body: unknown): PropertyError[] {
  interface Frame {
    value: unknown;
    key: string;
    parent: Frame | undefined;
    depth: number;
  }
  // Names are spelled out only for what fails.
  const nameOf = (frame: Frame) => {
    const keys: string[] = [];
    for (let at: Frame | undefined = frame; at?.parent; at = at.parent) keys.push(at.key);
    return keys.reverse().join('.') || 'body';
  };
  const problems: PropertyError[] = [];
  const pending: Frame[] = [{ value: body, key: '', parent: undefined, depth: 0 }];
  while (pending.length) {
    const frame = pending.pop()!;
    const { value, depth } = frame;
    if (typeof value === 'string') {
      const reason = textFault(value);
      if (reason) problems.push({ name: nameOf(frame), reason });
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_BODY_DEPTH) {
      problems.push({
        name: nameOf(frame),
        reason: `Must not nest more than ${MAX_BODY_DEPTH} levels deep.`,
      });
      continue;
    }
    // Pushed last to first, so that problems come out in the order of the body.
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        pending.push({ value: value[i], key: String(i), parent: frame, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(value);
    if (keys.some((key) => textFault(key) !== undefined))
      problems.push({
        name: nameOf(frame),
        reason: 'Property names must be well-formed text without control characters.',
      });
    for (let i = keys.length - 1; i >= 0; i--)
      pending.push({
        value: (value as Record<string, unknown>)[keys[i]],
        key: keys[i],
        parent: frame,
        depth: depth + 1,
      });
  }
  return problems;
}

export interface RequestValidators {
  /**
   * Validates a request body for an operation against its schema, and every string in it against
   * the characters no text may hold; throws ValidationError naming the failing properties.
   */
  body(operationId: string, body: unknown): void;
  /** Only the characters and nesting no body may hold, for bodies validated later against their stored type. */
  text(body: unknown): void;
  /**
   * Whether the path parameters fit the operation's declared schemas. A path that cannot name a
   * resource is answered like a resource that does not exist.
   */
  pathMatches(operationId: string, params: Record<string, string>): boolean;
}

/** Compiles a body validator for every operation with a JSON request body, once, at start-up. */
export function compileRequestValidators(
  document: OpenApiDocument,
  ajv: Ajv = ajvOf(document),
): RequestValidators {
  const bodies = new Map<string, { required: boolean; validate: ValidateFunction }>();
  const paths = new Map<string, Array<[string, ValidateFunction]>>();
  for (const { operationId, method, path, operation } of specOperations(document)) {
    paths.set(
      operationId,
      operationParameters(document, path, method, operation, 'path').map(([parameter, at]) => [
        parameter.name,
        compileRef(ajv, `${DOCUMENT_ID}#${at}/schema`),
      ]),
    );
    const content = operation.requestBody?.content;
    const mediaType = content && Object.keys(content).find((type) => type.includes('json'));
    if (!mediaType) continue;
    const ref = `${DOCUMENT_ID}#${pointer('paths', path, method, 'requestBody', 'content', mediaType, 'schema')}`;
    bodies.set(operationId, {
      required: operation.requestBody?.required ?? false,
      validate: compileRef(ajv, ref),
    });
  }
  return {
    pathMatches(operationId, params) {
      return (paths.get(operationId) ?? []).every(([name, validate]) => validate(params[name]));
    },
    text(body) {
      const problems = textPropertyErrors(body);
      if (problems.length) throw validationError(problems);
    },
    body(operationId, body) {
      const entry = bodies.get(operationId);
      if (!entry) return;
      if (body === undefined || body === null) {
        if (entry.required)
          throw new ValidationError([{ name: 'body', reason: 'A JSON request body is required.' }]);
        return;
      }
      const problems = textPropertyErrors(body);
      if (!entry.validate(body)) {
        const named = new Set(problems.map((p) => p.name));
        problems.push(...toPropertyErrors(entry.validate.errors).filter((p) => !named.has(p.name)));
      }
      if (problems.length) throw validationError(problems);
    },
  };
}
