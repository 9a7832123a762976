import { createHash } from 'node:crypto';
import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { Kept, keptOrRead, versionedTablesOf, versionsOf } from './collection-versions';

/** Collects bound values and hands out their placeholders, so that no value is spliced into SQL. */
export class SqlParams {
  readonly values: Record<string, unknown> = {};
  private next = 0;

  bind(value: unknown): string {
    const name = `p${this.next++}`;
    this.values[name] = value;
    return `:${name}`;
  }
}

/**
 * A filter turns a validated query-parameter value into an SQL condition on the row alias `t`.
 * `accounts` (the accounts the caller acts for) lets a filter on a sensitive property match only
 * rows in the caller's scope.
 */
export type FilterSql = (value: unknown, params: SqlParams, accounts?: readonly string[]) => string;

export type Row = Record<string, unknown>;

/** `column = value`. */
export const eq =
  (column: string): FilterSql =>
  (value, params) =>
    `t.${column} = ${params.bind(value)}`;

/** `column <> value`. */
export const notEq =
  (column: string): FilterSql =>
  (value, params) =>
    `t.${column} <> ${params.bind(value)}`;

/** Columns every stateful, owned resource has (ports, connections, services, configs). */
export const STATEFUL_COLUMNS = [
  'state',
  'status',
  'managing_account',
  'consuming_account',
  'billing_account',
  'role_assignments',
  'external_ref',
  'purchase_order',
  'contract_ref',
];

/** Filters every stateful, owned resource takes. */
export const STATEFUL_FILTERS: Record<string, FilterSql> = {
  state: eq('state'),
  state__is_not: notEq('state'),
  managing_account: eq('managing_account'),
  consuming_account: eq('consuming_account'),
  external_ref: eq('external_ref'),
};

const listOf = (value: unknown) =>
  (Array.isArray(value) ? value : [value]).map(String).filter((item) => item !== '');

/** Filters of resources with role assignments: by assignment, or by the contacts assigned. */
export const ROLE_FILTERS: Record<string, FilterSql> = {
  role_assignments: (value, params) =>
    `JSON_OVERLAPS(t.role_assignments, ${params.bind(JSON.stringify(listOf(value)))})`,
  // An empty list names no contact, so it matches nothing (and never becomes `IN ()`).
  contacts: (value, params) =>
    listOf(value).length
      ? `EXISTS (SELECT 1 FROM role_assignments ra WHERE ra.contact IN (${params.bind(listOf(value))})
           AND JSON_CONTAINS(t.role_assignments, JSON_QUOTE(ra.id)))`
      : '1 = 0',
};

/**
 * Filters of resources with a validity window: `valid_not_before=T` keeps those usable from T on
 * (no start, or one at or before T), `valid_not_after=T` those still valid at T (no end, or one at
 * or after T).
 */
export const VALIDITY_FILTERS: Record<string, FilterSql> = {
  valid_not_before: (value, params) =>
    `(t.valid_not_before IS NULL OR t.valid_not_before <= ${params.bind(new Date(String(value)))})`,
  valid_not_after: (value, params) =>
    `(t.valid_not_after IS NULL OR t.valid_not_after >= ${params.bind(new Date(String(value)))})`,
};

/** A stored instant (a Date, or text the database gave) as ISO 8601, or null. */
export const instantOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : new Date(value as string | Date).toISOString();

/** A stored instant as RFC 3339, or null. */
export const instantOf = (value: unknown) => (value instanceof Date ? value.toISOString() : (value ?? null));

/** A numeric column as a number (MariaDB hands some over as strings); null stays null. */
export const numberOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/**
 * A related list computed for a page of rows in one query (e.g. a device's capabilities): the query
 * selects `owner` (the id of the row it belongs to) and the columns `collect` needs, for
 * `owner IN (:owners)`.
 */
export interface Relation {
  property: string;
  sql: string;
  collect?: (rows: Row[]) => unknown;
}

/** The ids of related rows as a JSON array, computed in the same SELECT as the row itself. */
export function idsOf(table: string, column: string): string {
  return `(SELECT COALESCE(JSON_ARRAYAGG(r.id ORDER BY r.id), JSON_ARRAY()) FROM ${table} r WHERE r.${column} = t.id)`;
}

/**
 * One IX-API collection backed by one table: how to filter it, which related lists to load and how a
 * row becomes the resource. Filtering, ordering and paging happen in SQL.
 */
export interface CollectionDefinition {
  /** Resource family, as in paths and conflicts (`facilities`). */
  name: string;
  table: string;
  /** Primary key, the stable order of the collection (default `id`). */
  key?: string;
  /** Column whose maximum moves whenever a row is written (default `updated_at`). */
  changeColumn?: string;
  /**
   * Rows are only ever appended, in key order, and never changed (the event log): the token then
   * follows the filtered rows alone, so appends elsewhere in the table leave a reader's pages valid.
   */
  appendOnly?: boolean;
  /** Columns of `t` that make up the resource (besides relations). */
  columns: string[];
  filters: Record<string, FilterSql>;
  relations?: Relation[];
  /** JSON columns stored as text, and JSON arrays computed by `idsOf`. */
  jsonColumns?: string[];
  toResource(row: Row): Record<string, unknown>;
}

export interface ListQuery {
  ids?: string[];
  /** What the caller may see, as an SQL condition; part of the query, never a filter applied later. */
  scope?: FilterSql;
  /** The accounts the caller acts for, handed to filters on sensitive properties. */
  accounts?: readonly string[];
  /** Validated values by parameter name; only parameters with a filter in the definition are used. */
  filters: Record<string, unknown>;
  /**
   * Filters on properties hidden from some of those who see an item (`x-sensitive`): each matches
   * only items in `fullView` (those the caller sees whole), and compares bytes, not the column's
   * case-insensitive collation, so that no guess of a hidden value is ever confirmed.
   */
  sensitive?: { filters: readonly string[]; fullView: FilterSql };
  /** `after`: the key of the item just before `offset`, when known, so the page starts by key. */
  page?: { limit: number; offset: number; after?: string | number };
  /**
   * How the caller turns a page into its body (`key` names everything the body depends on besides
   * the page, such as who asks): a page read at versions it was rendered at before, for the same
   * `key`, is answered with that body, and its items are neither copied nor shaped again.
   */
  render?: { key: string; body: (items: Record<string, unknown>[]) => string };
}

export interface ListResult {
  items: Record<string, unknown>[];
  total: number;
  /** Changes whenever the filtered collection changes (insert, update, delete). */
  token: string;
  /** Key of the last item returned, for continuing by key. */
  lastKey?: string | number;
  /** The page as `render` made its body, when the query asked for one; `items` is then empty. */
  body?: string;
}

const keyOf = (definition: CollectionDefinition) => definition.key ?? 'id';

/** Plain column names belong to the row alias `t`; anything else is an SQL expression with its alias. */
function selectList(definition: CollectionDefinition): string {
  return definition.columns.map((c) => (/^[a-z_]+$/.test(c) ? `t.${c}` : c)).join(', ');
}

function whereClause(
  definition: CollectionDefinition,
  query: ListQuery,
  params: SqlParams,
  extra: string[] = [],
): string {
  const conditions: string[] = [...extra];
  if (query.scope) conditions.push(`(${query.scope(undefined, params)})`);
  if (query.ids !== undefined) {
    conditions.push(query.ids.length ? `t.${keyOf(definition)} IN (${params.bind(query.ids)})` : '1 = 0');
  }
  for (const [name, value] of Object.entries(query.filters)) {
    const filter = definition.filters[name];
    if (!filter || value === undefined) continue;
    conditions.push(`(${filter(value, params, query.accounts)})`);
    if (query.sensitive?.filters.includes(name))
      conditions.push(
        `CAST(t.${name} AS BINARY) = CAST(${params.bind(value)} AS BINARY)`,
        `(${query.sensitive.fullView(undefined, params)})`,
      );
  }
  return conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
}

function decodeJson(definition: CollectionDefinition, row: Row): Row {
  for (const column of definition.jsonColumns ?? []) {
    const value = row[column];
    if (typeof value === 'string') row[column] = JSON.parse(value);
  }
  return row;
}

async function attachRelations(
  sequelize: Sequelize,
  definition: CollectionDefinition,
  rows: Row[],
  transaction?: Transaction,
): Promise<void> {
  if (!rows.length) return;
  const owners = rows.map((r) => r[keyOf(definition)]);
  for (const relation of definition.relations ?? []) {
    const related = await sequelize.query<Row>(relation.sql, {
      replacements: { owners },
      type: QueryTypes.SELECT,
      transaction,
    });
    const byOwner = new Map<unknown, Row[]>();
    for (const item of related) {
      const list = byOwner.get(item.owner) ?? [];
      list.push(item);
      byOwner.set(item.owner, list);
    }
    for (const row of rows) {
      const items = byOwner.get(row[keyOf(definition)]) ?? [];
      row[relation.property] = relation.collect ? relation.collect(items) : items.map((item) => item.id);
    }
  }
}

function tokenOf(definition: CollectionDefinition, total: number, lastChange: unknown): string {
  const changed =
    lastChange instanceof Date ? lastChange.toISOString() : String((lastChange as string | null) ?? '');
  return createHash('sha256')
    .update(`${definition.name}|${total}|${changed}`)
    .digest('base64url')
    .slice(0, 22);
}

interface Summary {
  total: number;
  token: string;
}

/** A page as read: its items, and the keys of its first and last. */
interface PageRead {
  items: Record<string, unknown>[];
  firstKey?: string | number;
  lastKey?: string | number;
}

/** How many pages each process keeps of a database (up to 1000 items each). */
const KEPT_PAGES = 200;

/** A page's body as rendered for one kind of caller, and the keys its bookkeeping needs. */
interface RenderedPage {
  body: string;
  count: number;
  firstKey?: string | number;
  lastKey?: string | number;
}

/** A page as a list answers it: its items, or their body (`items` then empty), and its keys. */
interface AnsweredPage extends Omit<RenderedPage, 'body'> {
  items: Record<string, unknown>[];
  body?: string;
}

/** Where a page by offset starts: at a key, or after it. */
interface PageStart {
  key: string | number;
  inclusive: boolean;
}

/**
 * The total and token of a filtered collection (`where` with `values`); kept by the versions of the
 * tables it reads, so that a collection that has not changed since is not counted again.
 */
async function summaryOf(
  sequelize: Sequelize,
  definition: CollectionDefinition,
  where: string,
  values: Record<string, unknown>,
  versions: string | undefined,
): Promise<Summary> {
  const change = definition.changeColumn ?? 'updated_at';
  // The token combines the size of the filtered collection with the newest change anywhere in the
  // table (one index lookup): it changes whenever the collection does, and sometimes when only a
  // neighbour changed, which merely sends a client back to the first page.
  const sql = `SELECT COUNT(*) AS total, ${
    definition.appendOnly ? `MAX(t.${change})` : `(SELECT MAX(${change}) FROM ${definition.table})`
  } AS last_change FROM ${definition.table} t ${where}`;
  const key = versions === undefined ? undefined : Kept.keyOf(definition.name, sql, values);
  return keptOrRead(versionsOf(sequelize).kept<Summary>('summaries'), key, versions, async () => {
    const [row] = await sequelize.query<{ total: number; last_change: unknown }>(sql, {
      replacements: values,
      type: QueryTypes.SELECT,
    });
    const total = Number(row.total);
    return { total, token: tokenOf(definition, total, row.last_change) };
  });
}

/**
 * Lists a collection: filters as a conjunction in SQL, a stable order by key, and paging through a
 * deferred join on the primary key; a page that continues after a known key (as `X-Pagination-Next`
 * does) seeks to it, so a deep page costs what the first one does. What a list computed from
 * tables that have not changed since (its total; the key a page by offset starts at; the page
 * itself) is not computed again: the versions of those tables are read first, in one query, on
 * every request.
 */
export async function listCollection(
  sequelize: Sequelize,
  definition: CollectionDefinition,
  query: ListQuery,
): Promise<ListResult> {
  const params = new SqlParams();
  const where = whereClause(definition, query, params);
  // The values of the filters alone (the page's are bound after them), for the keys of what is kept.
  const filterValues = { ...params.values };
  const columns = selectList(definition);
  // Every table the items are read from (their columns and relations too), so that a page itself
  // may be kept; where some have no version, only what the filter alone decides is.
  const filtered = `FROM ${definition.table} t ${where}`;
  const everything = definition.appendOnly
    ? undefined
    : versionedTablesOf(
        [
          `SELECT ${columns} ${filtered}`,
          ...(definition.relations ?? []).map((relation) => relation.sql),
        ].join('\n'),
      );
  const tables = definition.appendOnly ? undefined : (everything ?? versionedTablesOf(filtered));
  const versions = tables ? await versionsOf(sequelize).current(tables) : undefined;
  const { total, token } = await summaryOf(sequelize, definition, where, filterValues, versions);
  const key = keyOf(definition);
  let sql: string;
  let startKey: string | undefined;
  const pageStarts = versionsOf(sequelize).kept<PageStart>('page starts');
  if (query.page) {
    // Where an earlier page showed the key this one starts at, the page seeks to it.
    startKey =
      versions === undefined
        ? undefined
        : Kept.keyOf(definition.name, where, filterValues, query.page.offset);
    const kept = startKey === undefined ? undefined : pageStarts.get(startKey);
    const start: PageStart | undefined =
      query.page.after !== undefined
        ? { key: query.page.after, inclusive: false }
        : kept && kept.versions === versions
          ? kept.value
          : undefined;
    // Continuing after a known key reads only the page itself; an offset skips over index entries.
    const inner = start
      ? `SELECT t.${key} FROM ${definition.table} t
           ${whereClause(definition, query, params, [`t.${key} ${start.inclusive ? '>=' : '>'} ${params.bind(start.key)}`])}
          ORDER BY t.${key} LIMIT ${params.bind(query.page.limit)}`
      : `SELECT t.${key} FROM ${definition.table} t ${where}
          ORDER BY t.${key} LIMIT ${params.bind(query.page.offset)}, ${params.bind(query.page.limit)}`;
    sql = `SELECT ${columns} FROM ${definition.table} t JOIN (${inner}) page ON page.${key} = t.${key} ORDER BY t.${key}`;
  } else {
    sql = `SELECT ${columns} FROM ${definition.table} t ${where} ORDER BY t.${key}`;
  }
  // A page (never a whole list, which has no bound) read at the same versions is not read again;
  // nor is one rendered at them for the same kind of caller rendered again.
  const pageKey =
    query.page && everything !== undefined ? Kept.keyOf(definition.name, sql, params.values) : undefined;
  const renderedPages = versionsOf(sequelize).kept<RenderedPage>('rendered pages', KEPT_PAGES);
  const renderKey = pageKey !== undefined && query.render ? Kept.keyOf(pageKey, query.render.key) : undefined;
  /** The page as the caller wants it: its items, or (with `render`) the body made of them. */
  const answered = async (): Promise<AnsweredPage> => {
    const rendered = renderKey === undefined ? undefined : renderedPages.get(renderKey);
    if (rendered && rendered.versions === versions) return { ...rendered.value, items: [] };
    const { items, firstKey, lastKey } = await keptOrRead(
      versionsOf(sequelize).kept<PageRead>('pages', KEPT_PAGES),
      pageKey,
      versions,
      async (): Promise<PageRead> => {
        const rows =
          query.page && query.page.offset >= total
            ? []
            : await sequelize.query<Row>(sql, { replacements: params.values, type: QueryTypes.SELECT });
        rows.forEach((row) => decodeJson(definition, row));
        await attachRelations(sequelize, definition, rows);
        return {
          items: rows.map((row) => definition.toResource(row)),
          firstKey: rows.length ? (rows[0][key] as string | number) : undefined,
          lastKey: rows.length ? (rows[rows.length - 1][key] as string | number) : undefined,
        };
      },
    );
    if (!query.render) return { items, count: items.length, firstKey, lastKey };
    const value = { body: query.render.body(items), count: items.length, firstKey, lastKey };
    if (renderKey !== undefined) renderedPages.set(renderKey, { versions: versions!, value });
    return { ...value, items: [] };
  };
  const { items, body, count, firstKey, lastKey } = await answered();
  if (query.page && query.page.after === undefined && startKey !== undefined && count) {
    // This page starts at its first key, and the next one after its last (a page found by a
    // client's cursor tells nothing: the cursor is the client's word).
    const { offset, limit } = query.page;
    pageStarts.set(startKey, { versions: versions!, value: { key: firstKey!, inclusive: true } });
    if (count === limit)
      pageStarts.set(Kept.keyOf(definition.name, where, filterValues, offset + limit), {
        versions: versions!,
        value: { key: lastKey!, inclusive: false },
      });
  }
  return { items, total, token, lastKey, ...(body === undefined ? {} : { body }) };
}

/**
 * One resource by id, or null: a primary-key lookup plus its relations. Inside `transaction` it
 * sees what the transaction wrote, so a repository answers with the resource as stored. Outside
 * one, a resource read while every table its query and relations read kept its version is not
 * read again (the versions are read first, as for lists); each caller gets a copy of its own.
 */
export async function readResource(
  sequelize: Sequelize,
  definition: CollectionDefinition,
  id: string,
  scope?: FilterSql,
  transaction?: Transaction,
): Promise<Record<string, unknown> | null> {
  const params = new SqlParams();
  const where = whereClause(definition, { ids: [id], filters: {}, scope }, params);
  const sql = `SELECT ${selectList(definition)} FROM ${definition.table} t ${where}`;
  const tables = transaction
    ? undefined
    : versionedTablesOf([sql, ...(definition.relations ?? []).map((relation) => relation.sql)].join('\n'));
  const versions = tables ? await versionsOf(sequelize).current(tables) : undefined;
  const key = versions === undefined ? undefined : Kept.keyOf(definition.name, sql, params.values);
  const resources = versionsOf(sequelize).kept<Record<string, unknown> | null>('resources');
  return keptOrRead(resources, key, versions, async () => {
    const rows = await sequelize.query<Row>(sql, {
      replacements: params.values,
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!rows.length) return null;
    decodeJson(definition, rows[0]);
    await attachRelations(sequelize, definition, rows, transaction);
    return definition.toResource(rows[0]);
  });
}

/**
 * A resource as a read of it shows it, from what a write stored: a row with every column of the
 * definition (its computed ones too, lists as arrays), so that a write need not read back what it
 * has just written.
 */
export function resourceOfRow(definition: CollectionDefinition, row: Row): Record<string, unknown> {
  return definition.toResource(decodeJson(definition, { ...row }));
}

/** Plain SQL within an optional transaction: `select` answers rows, `run` changes them. */
export function sqlOf(sequelize: Sequelize) {
  return {
    select: <T extends object>(
      sql: string,
      replacements: Record<string, unknown>,
      transaction?: Transaction,
    ) => sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction }),
    run: (sql: string, replacements: Record<string, unknown>, transaction?: Transaction) =>
      sequelize.query(sql, { replacements, transaction }),
  };
}

/** Reads one resource of a collection as the type a repository shows it as (undefined when absent). */
export const resourceReader =
  <T>(sequelize: Sequelize, definition: CollectionDefinition) =>
  async (id: string, transaction?: Transaction): Promise<T | undefined> =>
    ((await readResource(sequelize, definition, id, undefined, transaction)) ?? undefined) as T | undefined;
