import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from './index';

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
