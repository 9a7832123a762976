import type { Sequelize, Transaction } from 'sequelize';
import type { DeclaredFamily, DeclaredHappening } from '../domain/declared-family';
import { declaredColumns, declaredEventType, structuredProperties } from '../domain/declared-family';
import { NotFoundError } from '../domain/errors';
import { newId } from '../domain/ids';
import type { CollectionDefinition, FilterSql } from './collection';
import { eq, readResource, sqlOf } from './collection';
import type { EventRepository } from './repositories/event-repository';
import { unitOfWork } from './unit-of-work';

/** A resource of a declared family as stored and read: its id, its two accounts and its properties. */
export interface DeclaredResource extends Record<string, unknown> {
  id: string;
  managing_account: string;
  consuming_account: string;
}

/**
 * The collection of a declared family: its columns, a filter of equality for each of its two
 * accounts and each property it lists by, and lists and objects kept as JSON.
 */
export function declaredCollection(family: DeclaredFamily): CollectionDefinition {
  const filtered = Object.entries(family.properties)
    .filter(([, property]) => property.filter)
    .map(([name]) => name);
  const filters: Record<string, FilterSql> = Object.fromEntries(
    ['managing_account', 'consuming_account', ...filtered].map((column) => [column, eq(column)]),
  );
  return {
    name: family.collection,
    table: family.table,
    columns: declaredColumns(family),
    jsonColumns: structuredProperties(family),
    filters,
    toResource: (row) => ({ ...row }),
  };
}

/**
 * The store of a declared family: each write one unit of work holding its row and its event,
 * recorded for the resource's two sides. A change and a removal lock the row first, so the caller
 * is judged against the resource as it is when the write happens.
 */
export function createDeclaredStore(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  family: DeclaredFamily;
}) {
  const { sequelize, events, family } = deps;
  const collection = declaredCollection(family);
  const sql = sqlOf(sequelize);
  const columns = declaredColumns(family);
  const structured = new Set(structuredProperties(family));
  const valuesOf = (resource: Record<string, unknown>) =>
    Object.fromEntries(
      columns.map((column) => {
        const value = resource[column] ?? null;
        return [column, structured.has(column) && value !== null ? JSON.stringify(value) : value];
      }),
    );
  const read = async (id: string, transaction: Transaction) =>
    ((await readResource(sequelize, collection, id, undefined, transaction)) ?? undefined) as
      DeclaredResource | undefined;
  const lock = async (id: string, transaction: Transaction) => {
    const [row] = await sql.select<{ id: string }>(
      `SELECT id FROM ${family.table} WHERE id = :id FOR UPDATE`,
      { id },
      transaction,
    );
    return row ? read(id, transaction) : undefined;
  };
  const record = (happening: DeclaredHappening, resource: DeclaredResource, transaction: Transaction) =>
    events.appendDeclared(
      {
        type: declaredEventType(family, happening),
        payload: { [family.resource]: resource },
        resource: resource.id,
      },
      [resource.managing_account, resource.consuming_account],
      transaction,
    );
  const missing = (id: string) => new NotFoundError(`no ${family.collection} with id ${id}`);

  return {
    findById: (id: string) => readResource(sequelize, collection, id) as Promise<DeclaredResource | null>,

    async create(input: Record<string, unknown>): Promise<DeclaredResource> {
      return unitOfWork(sequelize, async (transaction) => {
        const id = newId(family.resource);
        await sql.run(
          `INSERT INTO ${family.table} (${columns.join(', ')}, updated_at)
           VALUES (${columns.map((column) => `:${column}`).join(', ')}, NOW(3))`,
          valuesOf({ ...input, id }),
          transaction,
        );
        const created = (await read(id, transaction))!;
        await record('created', created, transaction);
        return created;
      });
    },

    /**
     * Changes a resource under its row lock: `decide` is shown it as it is (nothing when there is
     * none) and answers what to store in its place.
     */
    async change(
      id: string,
      decide: (current: DeclaredResource | undefined) => Promise<Record<string, unknown>>,
    ): Promise<DeclaredResource> {
      return unitOfWork(sequelize, async (transaction) => {
        const current = await lock(id, transaction);
        const next = await decide(current);
        if (!current) throw missing(id);
        const settable = columns.filter((column) => column !== 'id');
        await sql.run(
          `UPDATE ${family.table} SET ${settable.map((column) => `${column} = :${column}`).join(', ')},
             updated_at = NOW(3) WHERE id = :id`,
          valuesOf({ ...next, id }),
          transaction,
        );
        const changed = (await read(id, transaction))!;
        await record('changed', changed, transaction);
        return changed;
      });
    },

    /** Removes a resource once `allow` accepts the caller; answers with what was removed. */
    async destroy(id: string, allow: (resource: DeclaredResource) => void): Promise<DeclaredResource> {
      return unitOfWork(sequelize, async (transaction) => {
        const current = await lock(id, transaction);
        if (!current) throw missing(id);
        allow(current);
        await sql.run(`DELETE FROM ${family.table} WHERE id = :id`, { id }, transaction);
        await record('deleted', current, transaction);
        return current;
      });
    },
  };
}

export type DeclaredStore = ReturnType<typeof createDeclaredStore>;
