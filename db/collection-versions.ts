import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { sharedFreshReads } from './fresh-reads';
import { VERSION_SHARDS, VERSIONED_TABLES, versionTriggers } from './migrations/0022-collection-versions';

/** The tables with a version: those of migration 0022, and those of declared families once checked. */
const VERSIONED = new Set<string>(VERSIONED_TABLES);

/**
 * Tables whose rows a foreign key's `ON DELETE CASCADE` removes when a row of another goes: the
 * database fires no trigger for those, so what reads them also depends on the tables they cascade
 * from.
 */
const CASCADED_FROM: Readonly<Record<string, readonly string[]>> = {
  contacts: ['accounts'],
  role_assignments: ['contacts', 'accounts'],
};

/**
 * The versioned tables a query's result depends on: each table its SQL reads (after FROM or JOIN)
 * and those they cascade from. Undefined when it reads a table without a version (nothing computed
 * from it may then be kept).
 */
export function versionedTablesOf(sql: string): readonly string[] | undefined {
  // The same statements come back with every request: what each one reads is worked out once, and
  // every caller shares the one (frozen) list.
  let known = tablesOfStatements.get(sql);
  if (known === undefined) {
    const tables = tablesRead(sql);
    known = tables ? Object.freeze(tables) : null;
    tablesOfStatements.set(sql, known);
  }
  return known ?? undefined;
}

function tablesRead(sql: string): string[] | undefined {
  const tables = new Set<string>();
  for (const [, name] of sql.matchAll(/\b(?:FROM|JOIN)\s+`?([A-Za-z_][A-Za-z0-9_]*)`?/g)) {
    if (!VERSIONED.has(name)) return undefined;
    tables.add(name);
    for (const parent of CASCADED_FROM[name] ?? []) tables.add(parent);
  }
  return [...tables].sort();
}

/** A map of at most `limit` entries that forgets the one least recently used. */
export class Kept<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly limit = 2000) {}

  /**
   * The key of what a query computed: its collection, SQL and bound values, as they are (a map
   * hashes a string natively, several times faster than a digest of it; a kept entry's key takes a
   * few kilobytes at most).
   */
  static keyOf(...parts: unknown[]): string {
    return JSON.stringify(parts);
  }

  get(key: string): T | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** What each statement `versionedTablesOf` was asked about reads (null: a table without a version). */
const tablesOfStatements = new Kept<readonly string[] | null>(500);

/**
 * Gives a table added after migration 0022 (a declared family's) a version, as that migration gave
 * its tables one: its rows of `collection_versions` and the triggers that move them. Run by the
 * migration that creates the table; running it again changes nothing.
 */
export async function addVersionedTable(sequelize: Sequelize, table: string): Promise<void> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) throw new Error(`${table} is not a table name`);
  const shards = Array.from({ length: VERSION_SHARDS }, (_, shard) => `(:table, ${shard}, 0)`);
  await sequelize.query(
    `INSERT IGNORE INTO collection_versions (table_name, shard, version) VALUES ${shards.join(', ')}`,
    { replacements: { table } },
  );
  for (const statement of versionTriggers([table]))
    await sequelize.query(statement.replace(/^CREATE TRIGGER /, 'CREATE TRIGGER IF NOT EXISTS '));
}

/**
 * Lets reads of `tables` be kept by their versions, once the database shows each has one; a table
 * without stops start-up, since reads of it would be kept past its changes.
 */
export async function requireVersions(sequelize: Sequelize, tables: readonly string[]): Promise<void> {
  if (!tables.length) return;
  const rows = await sequelize.query<{ table_name: string; shards: number }>(
    `SELECT table_name, COUNT(*) AS shards FROM collection_versions WHERE table_name IN (:tables)
      GROUP BY table_name`,
    { replacements: { tables }, type: QueryTypes.SELECT },
  );
  const versioned = new Set(
    rows.filter((row) => Number(row.shards) === VERSION_SHARDS).map((row) => row.table_name),
  );
  const without = tables.filter((table) => !versioned.has(table));
  if (without.length)
    throw new Error(
      `table ${without.join(', ')} has no version: its migration gives it one with addVersionedTable (db/collection-versions.ts)`,
    );
  for (const table of tables) VERSIONED.add(table);
  // What was worked out before any of them had a version is worked out again.
  tablesOfStatements.clear();
}

/** What one database's versions give its readers. */
export interface Versions {
  /**
   * The versions of `tables` as one string, read after the call began (never an older answer: a
   * change committed before is in it, on every replica); concurrent calls for the same tables share
   * one read.
   */
  current(tables: readonly string[]): Promise<string>;
  /** What readers of this database computed, by key, each with the versions it was computed at. */
  kept<T>(name: string, limit?: number): Kept<{ versions: string; value: T }>;
}

const versionsByDatabase = new WeakMap<Sequelize, Versions>();

/** The versions of the tables of the database `sequelize` talks to. */
export function versionsOf(sequelize: Sequelize): Versions {
  let versions = versionsByDatabase.get(sequelize);
  if (!versions) {
    const read = sharedFreshReads(async (key) => {
      const rows = await sequelize.query<{ table_name: string; version: string | number }>(
        `SELECT table_name, SUM(version) AS version FROM collection_versions
          WHERE table_name IN (:tables) GROUP BY table_name ORDER BY table_name`,
        { replacements: { tables: key.split(',') }, type: QueryTypes.SELECT },
      );
      return rows.map((row) => `${row.table_name}:${String(row.version)}`).join(',');
    });
    const stores = new Map<string, Kept<{ versions: string; value: unknown }>>();
    versions = {
      current: (tables) => read([...tables].sort().join(',')),
      kept: <T>(name: string, limit?: number) => {
        let store = stores.get(name);
        if (!store) {
          store = new Kept(limit);
          stores.set(name, store);
        }
        return store as Kept<{ versions: string; value: T }>;
      },
    };
    versionsByDatabase.set(sequelize, versions);
  }
  return versions;
}

/**
 * A deep copy of what a read answered: rows, their parsed JSON columns, dates and buffers. Plain
 * objects, arrays, dates and buffers are copied here, anything else by `structuredClone`. A page of 100 ports is
 * copied several times faster than by `structuredClone` alone, which serialises and parses it.
 */
export function copyOf<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyOf) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Buffer.isBuffer(value)) return Buffer.from(value) as T;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> =
    prototype === null ? (Object.create(null) as Record<string, unknown>) : {};
  for (const name of Object.keys(value)) copy[name] = copyOf((value as Record<string, unknown>)[name]);
  return copy as T;
}

/**
 * What `read` answers, or a copy of what it answered before under `key` at the same `versions`;
 * without a key or versions nothing is kept. Each caller gets a copy of its own.
 */
export async function keptOrRead<T>(
  store: Kept<{ versions: string; value: T }>,
  key: string | undefined,
  versions: string | undefined,
  read: () => Promise<T>,
): Promise<T> {
  const kept = key === undefined ? undefined : store.get(key);
  if (kept && kept.versions === versions) return copyOf(kept.value);
  const value = await read();
  if (key !== undefined && versions !== undefined) store.set(key, { versions, value: copyOf(value) });
  return value;
}
