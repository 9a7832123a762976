import assert from 'node:assert/strict';
import type { OpenApiDocument } from '../../spec';

/** Nodes of the OpenAPI document as the spec tests walk them. */

export type Json = Record<string, any>;

/** Follows a local `$ref` (one level) inside the document. */
export function resolve(document: OpenApiDocument, node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  let target: any = document;
  for (const segment of node.$ref.slice(2).split('/')) {
    target = target[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  assert.ok(target, `unresolved ${node.$ref}`);
  return target as Json;
}
