import type Ajv from 'ajv';
import type { Sequelize } from 'sequelize';
import type { CollectionDefinition, ListQuery } from '../db/collection';
import { listCollection, readResource } from '../db/collection';
import { NotFoundError, ValidationError } from '../domain/errors';
import type { OpenApiDocument } from '../spec';
import { specOperations } from '../spec';
import type { OperationDefinition, Reply } from './operations';
import { compileQueryParser } from './query-parameters';

/** Without `page_limit` a collection comes whole; with it, at most this many items a page. */
export const MAX_PAGE_LIMIT = 1000;

/** Parameters every collection shares; everything else a list declares is a filter. */
const COMMON_PARAMETERS = new Set(['id', 'page_limit', 'page_offset', 'page_token', 'fields']);

const IDENTIFIER = /^[A-Za-z0-9:_-]{1,80}$/;

/** One entry of the resource registry: a collection and the operations that expose it. */
export interface CollectionEntry {
  collection: CollectionDefinition;
  list: string;
  read?: string;
  /** Supports the `fields` projection (product offerings). */
  projection?: boolean;
}

type QueryValue = string | number | boolean | Array<string | number> | undefined;

function queryString(values: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    search.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  return search.toString();
}

/** Keeps only the named properties (and `type`), then drops duplicates. */
function project(items: Record<string, unknown>[], fields: string[]): Record<string, unknown>[] {
  const keep = new Set([...fields, 'type']);
  const seen = new Set<string>();
  const result: Record<string, unknown>[] = [];
  for (const item of items) {
    const projected = Object.fromEntries(Object.entries(item).filter(([key]) => keep.has(key)));
    const key = JSON.stringify(projected);
    if (!seen.has(key)) {
      seen.add(key);
      result.push(projected);
    }
  }
  return result;
}

/**
 * Builds the list and read operations of every registered collection. The filters a list accepts
 * are the query parameters the OpenAPI document declares for it; each must have an SQL condition
 * in the collection, or start-up fails, so no declared filter is ever silently ignored.
 */
export function collectionOperations(deps: {
  sequelize: Sequelize;
  document: OpenApiDocument;
  ajv: Ajv;
  entries: readonly CollectionEntry[];
}): OperationDefinition[] {
  const { sequelize, document, ajv } = deps;
  const byId = new Map(specOperations(document).map((op) => [op.operationId, op]));
  const operations: OperationDefinition[] = [];

  for (const entry of deps.entries) {
    const listSpec = byId.get(entry.list);
    if (!listSpec) throw new Error(`operation ${entry.list} is not in the OpenAPI document`);
    const { parse, names } = compileQueryParser(
      ajv,
      document,
      listSpec.path,
      listSpec.method,
      listSpec.operation,
    );
    const unmapped = names.filter((name) => !COMMON_PARAMETERS.has(name) && !entry.collection.filters[name]);
    if (unmapped.length) {
      throw new Error(`${entry.list} declares filters without SQL: ${unmapped.join(', ')}`);
    }
    const basePath = listSpec.path;

    operations.push({
      operationId: entry.list,
      authenticated: true,
      async handle({ query }): Promise<Reply> {
        const values = parse(query);
        const { id, page_limit, page_offset, page_token, fields, ...filters } = values;
        const limit = page_limit as number | undefined;
        const offset = (page_offset as number | undefined) ?? 0;
        const listQuery: ListQuery = {
          ids: id as string[] | undefined,
          filters,
          page: limit === undefined ? undefined : { limit, offset },
        };
        const result = await listCollection(sequelize, entry.collection, listQuery);
        let items = result.items;
        if (entry.projection && Array.isArray(fields) && fields.length)
          items = project(items, fields as string[]);
        if (limit === undefined) return { status: 200, body: items };
        if (page_token !== undefined && page_token !== result.token) {
          throw new ValidationError([
            {
              name: 'page_token',
              reason: 'The collection changed since this token was issued; start again from the first page.',
            },
          ]);
        }
        const nextOffset = offset + limit;
        const others: Record<string, QueryValue> = Object.fromEntries(
          Object.entries(values as Record<string, QueryValue>).filter(
            ([name]) => !['page_limit', 'page_offset', 'page_token'].includes(name),
          ),
        );
        const next =
          nextOffset < result.total
            ? `${basePath}?${queryString({ ...others, page_limit: limit, page_offset: nextOffset, page_token: result.token })}`
            : '';
        return {
          status: 206,
          body: items,
          headers: {
            'X-Pagination-Limit': String(limit),
            'X-Pagination-Offset': String(offset),
            'X-Pagination-Items': String(result.total),
            'X-Pagination-Pages': String(Math.max(1, Math.ceil(result.total / limit))),
            'X-Pagination-Page': String(Math.floor(offset / limit) + 1),
            'X-Pagination-Token': result.token,
            'X-Pagination-Next': next,
          },
        };
      },
    });

    if (entry.read) {
      operations.push({
        operationId: entry.read,
        authenticated: true,
        async handle({ params }): Promise<Reply> {
          const id = params.id;
          const resource = IDENTIFIER.test(id) ? await readResource(sequelize, entry.collection, id) : null;
          if (!resource) throw new NotFoundError(`no ${entry.collection.name} with id ${id}`);
          return { status: 200, body: resource };
        },
      });
    }
  }
  return operations;
}
