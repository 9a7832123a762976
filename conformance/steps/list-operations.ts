import type { OpenApiDocument } from '../../spec';
import { operationParameters, specOperations } from '../../spec';
import { COMMON_PARAMETERS } from '../protocol';
import { defaultPageLimit } from './whole-lists';

/**
 * The list operations of the document, with their filters and read operations.
 */

export interface ListOperation {
  list: string;
  read?: string;
  path: string;
  filters: Array<{ name: string; type?: string; enumValues?: unknown[] }>;
  /** Whether the operation declares the `fields` projection parameter. */
  projectable: boolean;
  /** The default page size its page_limit declares: without page_limit it answers that first page. */
  defaultPageLimit?: number;
}

/** Every list operation of the document with its read operation and its filters. */
export function listOperations(document: OpenApiDocument): ListOperation[] {
  const all = specOperations(document);
  return all
    .filter(
      (op) => op.method === 'get' && !op.path.includes('{') && op.operation.responses['206'] !== undefined,
    )
    .map((op) => {
      const parameters = operationParameters(document, op.path, op.method, op.operation, 'query').map(
        ([parameter]) => parameter,
      );
      return {
        list: op.operationId,
        read: all.find((other) => other.method === 'get' && other.path === `${op.path}/{id}`)?.operationId,
        path: op.path,
        filters: parameters
          .filter((parameter) => !COMMON_PARAMETERS.has(parameter.name))
          .map((parameter) => {
            const schema = (parameter.schema ?? {}) as { type?: string; enum?: unknown[] };
            return { name: parameter.name, type: schema.type, enumValues: schema.enum };
          }),
        projectable: parameters.some((parameter) => parameter.name === 'fields'),
        defaultPageLimit: defaultPageLimit(document, op.operationId),
      };
    });
}
