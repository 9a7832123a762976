import type { OpenApiDocument } from '../spec';
import { operationParameters, specOperations } from '../spec';
import { sensitivePropertiesOf } from './redaction-plans';

/** Suffixes that turn a filter on a property into a range or negation filter on it. */
const FILTER_SUFFIXES = ['__is_not', '__lte', '__lt', '__gte', '__gt', '_lte', '_lt', '_gte', '_gt'];

/** The property a filter looks at: its name, less a range or negation suffix. */
export function filteredProperty(filter: string): string {
  const suffix = FILTER_SUFFIXES.find((end) => filter.endsWith(end) && filter.length > end.length);
  return suffix ? filter.slice(0, -suffix.length) : filter;
}

/** The schema of the items a list operation answers with, by name (a list with a default page size answers only pages). */
function itemSchemaOf(operation: { responses: Record<string, unknown> }): string | undefined {
  const ok = (operation.responses['200'] ?? operation.responses['206']) as
    { content?: Record<string, { schema?: { items?: { $ref?: string } } }> } | undefined;
  return ok?.content?.['application/json']?.schema?.items?.$ref?.split('/').pop();
}

/**
 * The query parameters of a list operation that filter on a property the document marks
 * `x-sensitive` in the items it lists. Such a filter could confirm a guessed hidden value, so it
 * may match only items the caller sees in full, and only exactly.
 */
export function sensitiveFiltersOf(document: OpenApiDocument, listOperationId: string): string[] {
  const op = specOperations(document).find((candidate) => candidate.operationId === listOperationId);
  if (!op) throw new Error(`operation ${listOperationId} is not in the OpenAPI document`);
  const schema = itemSchemaOf(op.operation);
  if (!schema) return [];
  const sensitive = new Set(sensitivePropertiesOf(document, schema));
  return operationParameters(document, op.path, op.method, op.operation, 'query')
    .map(([parameter]) => parameter.name)
    .filter((name) => sensitive.has(filteredProperty(name)));
}
