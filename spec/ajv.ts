import Ajv from 'ajv';
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

/** An ajv instance that understands the OpenAPI 3.0 dialect of the document (nullable, discriminator). */
export function createAjv(document: OpenApiDocument): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, discriminator: true, coerceTypes: false });
  addFormats(ajv);
  ajv.addSchema({ ...(forAjv(document) as object), $id: DOCUMENT_ID });
  return ajv;
}
