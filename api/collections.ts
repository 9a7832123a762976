import type Ajv from 'ajv';
import type { Sequelize } from 'sequelize';
import { createHash } from 'node:crypto';
import type { CollectionDefinition, FilterSql, ListQuery, ListResult } from '../db/collection';
import { listCollection, readResource } from '../db/collection';
import type { Scope } from '../domain/authority';
import { NotFoundError, ValidationError } from '../domain/errors';
import type { OpenApiDocument, OpenApiOperation } from '../spec';
import { queryParameter, specOperations } from '../spec';
import type { Caller, OperationDefinition, Reply } from './operations';
import { compileQueryParser } from './query-parameters';
import { sensitiveFiltersOf } from './sensitive-filters';

/** Parameters every collection shares; everything else a list declares is a filter. */
const COMMON_PARAMETERS = new Set(['id', 'page_limit', 'page_offset', 'page_token', 'fields']);

/** One entry of the resource registry: a collection and the operations that expose it. */
export interface CollectionEntry {
  collection: CollectionDefinition;
  list: string;
  read?: string;
  /** Supports the `fields` projection (product offerings). */
  projection?: boolean;
  /** Restricts what a caller sees, as an SQL condition on `t`; unscoped collections are public. */
  scope?: (visibility: Visibility) => FilterSql;
  /** Some filters match only within the caller's scope (they receive the caller's accounts). */
  filtersNeedScope?: boolean;
  /** Shapes each item for the caller (redaction of what lies outside the caller's scope). */
  present?: (item: Record<string, unknown>, visibility: Visibility) => Record<string, unknown>;
  /**
   * The items a caller sees whole, unredacted, as an SQL condition on `t`; filters on properties
   * the document marks sensitive match only these. Without a presentation every item in scope is
   * seen whole, so it defaults to `scope` then; an entry with one must say.
   */
  fullView?: (visibility: Visibility) => FilterSql;
}

/**
 * The filters of an entry's list on sensitive properties and who sees its items whole; start-up
 * stops when the entry cannot tell, or a filter has no column of its name to compare exactly.
 */
function sensitiveFiltering(document: OpenApiDocument, entry: CollectionEntry) {
  const filters = sensitiveFiltersOf(document, entry.list);
  if (!filters.length) return undefined;
  const fullView = entry.fullView ?? (entry.present ? undefined : entry.scope);
  if (!fullView)
    throw new Error(
      `${entry.list} filters on sensitive properties (${filters.join(', ')}) but does not say which items a caller sees whole`,
    );
  const uncompared = filters.filter((name) => !entry.collection.columns.includes(name));
  if (uncompared.length)
    throw new Error(`${entry.list} has no column to compare exactly for ${uncompared.join(', ')}`);
  return { filters, fullView };
}

/** Who is asking and which accounts they act for (their own and those they manage, recursively). */
export type Visibility = Scope;

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
 * The page size an operation's `page_limit` declares as its default, if it declares one: such a
 * list answers a request without `page_limit` with its first page of that size. A default the
 * parameter's own bounds refuse stops start-up.
 */
export function declaredPageLimit(
  document: OpenApiDocument,
  spec: { operationId: string; path: string; method: string; operation: OpenApiOperation },
): number | undefined {
  const parameter = queryParameter(document, spec.path, spec.method, spec.operation, 'page_limit');
  const { default: value, minimum, maximum } = (parameter?.schema ?? {}) as Record<string, unknown>;
  if (value === undefined) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < (typeof minimum === 'number' ? minimum : 1) ||
    (typeof maximum === 'number' && value > maximum)
  )
    throw new Error(
      `${spec.operationId} declares ${JSON.stringify(value)} as the default of page_limit, which its bounds refuse`,
    );
  return value;
}

export interface ListSource {
  /**
   * A list's items, or (when `wants.body` allows it and the source can) the items already rendered
   * as the JSON body the caller is answered with, in `body`.
   */
  (query: ListQuery, caller: Caller | undefined, wants?: { body: boolean }): Promise<ListResult>;
}

/**
 * A list operation over any source: query parameters parsed and validated against the document,
 * then either the whole result (200) or one page of it (206) with the seven pagination headers.
 * Without `page_limit` the answer is the whole result, unless the document declares a default
 * page size for the operation: then it is the first page of that size, as if it had been asked for.
 * `filters` names the filters the source implements; a declared filter it lacks stops start-up.
 */
export function listOperation(options: {
  operationId: string;
  document: OpenApiDocument;
  ajv: Ajv;
  filters: readonly string[];
  authenticated?: boolean;
  projection?: boolean;
  source: ListSource;
}): OperationDefinition {
  const spec = specOperations(options.document).find((op) => op.operationId === options.operationId);
  if (!spec) throw new Error(`operation ${options.operationId} is not in the OpenAPI document`);
  const { parse, names } = compileQueryParser(
    options.ajv,
    options.document,
    spec.path,
    spec.method,
    spec.operation,
  );
  const defaultLimit = declaredPageLimit(options.document, spec);
  const unmapped = names.filter((name) => !COMMON_PARAMETERS.has(name) && !options.filters.includes(name));
  if (unmapped.length) {
    throw new Error(
      `${options.operationId} declares filters without an implementation: ${unmapped.join(', ')}`,
    );
  }
  return {
    operationId: options.operationId,
    authenticated: options.authenticated ?? true,
    async handle({ query, caller }): Promise<Reply> {
      const values = parse(query);
      const { id, page_limit, page_offset, page_token, fields, ...filters } = values;
      const limit = (page_limit as number | undefined) ?? defaultLimit;
      const offset = (page_offset as number | undefined) ?? 0;
      const { token: givenToken, cursor } = parsePageToken(page_token as string | undefined);
      const after = cursor && cursor.offset === offset ? cursor.after : undefined;
      const projected = options.projection && Array.isArray(fields) && fields.length > 0;
      const result = await options.source(
        {
          ids: id as string[] | undefined,
          filters,
          page: limit === undefined ? undefined : { limit, offset, after },
        },
        caller,
        { body: !projected },
      );
      const answer =
        result.body !== undefined
          ? { body: result.body, contentType: 'application/json' }
          : { body: projected ? project(result.items, fields as string[]) : result.items };
      if (limit === undefined) return { status: 200, ...answer };
      if (givenToken !== undefined && givenToken !== result.token) {
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
      const cursorNext =
        result.lastKey === undefined ? undefined : { offset: nextOffset, after: result.lastKey };
      const nextToken = pageToken(result.token, cursorNext);
      const next =
        nextOffset < result.total
          ? `${spec.path}?${queryString({ ...others, page_limit: limit, page_offset: nextOffset, page_token: nextToken })}`
          : '';
      return {
        status: 206,
        ...answer,
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
  };
}

interface Cursor {
  offset: number;
  after: string | number;
}

/**
 * The `page_token` of a Next link: the collection's token, then a cursor naming the key of the last
 * item served and the offset it leads to, so the next page is found by key instead of by counting.
 */
function pageToken(token: string, cursor: Cursor | undefined): string {
  return cursor
    ? `${token}.${Buffer.from(JSON.stringify([cursor.offset, cursor.after])).toString('base64url')}`
    : token;
}

function parsePageToken(raw: string | undefined): { token?: string; cursor?: Cursor } {
  if (raw === undefined) return {};
  const [token, encoded] = raw.split('.', 2);
  if (!encoded) return { token };
  try {
    const [offset, after] = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as unknown[];
    if (Number.isInteger(offset) && (typeof after === 'string' || typeof after === 'number')) {
      return { token, cursor: { offset: offset as number, after } };
    }
  } catch {
    // not a cursor of ours: the token alone decides
  }
  return { token: raw };
}

/** Pages a list held in memory (small, fixed lists such as the extensions). */
export function staticSource(items: Record<string, unknown>[], key = 'id'): ListSource {
  const token = createHash('sha256').update(JSON.stringify(items)).digest('base64url').slice(0, 22);
  return ({ ids, page }) => {
    // `id` names items by their key (an extension has no id: its name is its key).
    const chosen = ids ? items.filter((item) => ids.includes(String(item[key]))) : items;
    return Promise.resolve({
      items: page ? chosen.slice(page.offset, page.offset + page.limit) : chosen,
      total: chosen.length,
      token,
    });
  };
}

/**
 * Builds the list and read operations of every registered collection. Filtering, scoping, ordering
 * and paging happen in SQL (db/collection.ts).
 */
export function collectionOperations(deps: {
  sequelize: Sequelize;
  document: OpenApiDocument;
  ajv: Ajv;
  entries: readonly CollectionEntry[];
  /** Needed by entries with a scope or a presentation. */
  visibility?: (caller: Caller) => Promise<Visibility>;
}): OperationDefinition[] {
  const { sequelize, document, ajv } = deps;
  const operations: OperationDefinition[] = [];

  for (const entry of deps.entries) {
    const sensitive = sensitiveFiltering(document, entry);
    const scoped =
      entry.scope !== undefined ||
      entry.present !== undefined ||
      entry.filtersNeedScope === true ||
      sensitive !== undefined;
    if (scoped && !deps.visibility) throw new Error(`${entry.list} is scoped but no visibility was given`);
    const visibilityOf = async (caller: Caller | undefined): Promise<Visibility | undefined> =>
      scoped && caller ? deps.visibility!(caller) : undefined;
    const shown = (items: Record<string, unknown>[], visibility: Visibility | undefined) =>
      entry.present && visibility ? items.map((item) => entry.present!(item, visibility)) : items;

    operations.push(
      listOperation({
        operationId: entry.list,
        document,
        ajv,
        filters: Object.keys(entry.collection.filters),
        projection: entry.projection,
        source: async (query, caller, wants) => {
          const visibility = await visibilityOf(caller);
          const scope = entry.scope && visibility ? entry.scope(visibility) : undefined;
          const result = await listCollection(sequelize, entry.collection, {
            ...query,
            scope,
            accounts: visibility?.accounts,
            // What a page shows depends on who asks only through the visibility it is shown with.
            render: wants?.body
              ? {
                  key: JSON.stringify([visibility?.accountId ?? null, visibility?.accounts ?? null]),
                  body: (items) => JSON.stringify(shown(items, visibility)),
                }
              : undefined,
            // Nobody unknown sees anything whole.
            sensitive: sensitive && {
              filters: sensitive.filters,
              fullView: visibility ? sensitive.fullView(visibility) : () => '1 = 0',
            },
          });
          return result.body !== undefined ? result : { ...result, items: shown(result.items, visibility) };
        },
      }),
    );

    if (entry.read) {
      operations.push({
        operationId: entry.read,
        authenticated: true,
        async handle({ params, caller }): Promise<Reply> {
          const id = params.id;
          const visibility = await visibilityOf(caller);
          const scope = entry.scope && visibility ? entry.scope(visibility) : undefined;
          const resource = await readResource(sequelize, entry.collection, id, scope);
          // Out of scope and not found are the same answer: existence does not leak.
          if (!resource) throw new NotFoundError(`no ${entry.collection.name} with id ${id}`);
          return { status: 200, body: shown([resource], visibility)[0] };
        },
      });
    }
  }
  return operations;
}
