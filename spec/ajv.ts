import Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from './index';

/** The `$id` under which the whole document is registered with ajv. */
export const DOCUMENT_ID = 'ixapi-openapi';

/** Keywords that look inside a string, checked only once its length is within bounds. */
const STRING_CONTENT = ['pattern', 'format'] as const;

/**
 * Rewrites one schema of the copy of the document ajv compiles:
 *
 * - OpenAPI 3.0 allows `nullable: true` beside `allOf`/`$ref` without a `type`; ajv only understands
 *   `nullable` next to `type`. Such schemas become "the schema, or null".
 * - ajv reports every error (`allErrors`), so an array of 100,000 bad items would be checked item by
 *   item and yield 100,000 errors. Items are checked only when the array is within its `maxItems`,
 *   and a string's pattern and format only when it is within its `maxLength`: what is too long is
 *   refused by its length alone, at the cost of one comparison.
 */
function forAjv(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forAjv);
  if (typeof node !== 'object' || node === null) return node;
  let copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = forAjv(value);
  if (copy.type === 'array' && typeof copy.maxItems === 'number' && copy.items !== undefined) {
    const { items, ...rest } = copy;
    copy = { ...rest, if: { maxItems: copy.maxItems }, then: { items } };
  }
  if (copy.type === 'string' && typeof copy.maxLength === 'number') {
    const content = Object.fromEntries(STRING_CONTENT.filter((k) => k in copy).map((k) => [k, copy[k]]));
    if (Object.keys(content).length) {
      for (const key of STRING_CONTENT) delete copy[key];
      copy = { ...copy, if: { maxLength: copy.maxLength }, then: content };
    }
  }
  if (copy.nullable === true && copy.type === undefined) {
    delete copy.nullable;
    return { anyOf: [copy, { enum: [null] }] };
  }
  return copy;
}

/** The ajv instance of each document in this process. */
const instances = new WeakMap<OpenApiDocument, Ajv>();
/** What each ajv instance compiled, by reference. */
const compiledRefs = new WeakMap<Ajv, Map<string, ValidateFunction>>();

/**
 * The ajv instance that understands the OpenAPI 3.0 dialect of the document (nullable,
 * discriminator): one per document in a process, shared by every server and suite run on it.
 */
export function ajvOf(document: OpenApiDocument): Ajv {
  let ajv = instances.get(document);
  if (!ajv) {
    ajv = new Ajv({ allErrors: true, strict: false, discriminator: true, coerceTypes: false });
    addFormats(ajv);
    ajv.addSchema({ ...(forAjv(document) as object), $id: DOCUMENT_ID });
    instances.set(document, ajv);
  }
  return ajv;
}

/**
 * The validator of the schema `ref` names (`ixapi-openapi#/paths/...`), compiled once per ajv
 * instance: servers started again and suite runs repeated in one process reuse it.
 */
export function compileRef(ajv: Ajv, ref: string): ValidateFunction {
  let compiled = compiledRefs.get(ajv);
  if (!compiled) compiledRefs.set(ajv, (compiled = new Map<string, ValidateFunction>()));
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  return validate;
}
