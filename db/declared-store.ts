import type { Sequelize, Transaction } from 'sequelize';
import type { DeclaredFamily, DeclaredHappening } from '../domain/declared-family';
import {
  declaredColumns,
  declaredEventType,
  instantProperties,
  structuredProperties,
} from '../domain/declared-family';
import { NotFoundError, UnableToFulfillError } from '../domain/errors';
import { newId } from '../domain/ids';
import type { CollectionDefinition, FilterSql } from './collection';
import { eq, instantOf, readResource, sqlOf } from './collection';
import { liveRow } from './references';
import type { EventRepository } from './repositories/event-repository';
import type { QuotaGuard } from './repositories/quota-guard';
import { allocatingTransaction } from './transactions';
import { unitOfWork } from './unit-of-work';

/** A resource of a declared family as stored and read: its id, its two accounts and its properties. */
export interface DeclaredResource extends Record<string, unknown> {
  id: string;
  managing_account: string;
  consuming_account: string;
}

/** A property's filter, by what the family declares of it. */
function filterOf(
  column: string,
  kind: true | 'window-start' | 'window-end',
  normalise?: (value: string) => string,
): FilterSql {
  if (kind === 'window-start')
    return (value, params) =>
      `(t.${column} IS NULL OR t.${column} <= ${params.bind(new Date(String(value)))})`;
  if (kind === 'window-end')
    return (value, params) =>
      `(t.${column} IS NULL OR t.${column} >= ${params.bind(new Date(String(value)))})`;
  return normalise ? (value, params) => `t.${column} = ${params.bind(normalise(String(value)))}` : eq(column);
}

/**
 * The collection of a declared family: its columns, a filter for each of its two accounts, each
 * property it lists by and its holders, instants as RFC 3339 and lists and objects kept as JSON.
 */
export function declaredCollection(family: DeclaredFamily): CollectionDefinition {
  const filters: Record<string, FilterSql> = {
    managing_account: eq('managing_account'),
    consuming_account: eq('consuming_account'),
  };
  for (const [name, property] of Object.entries(family.properties))
    if (property.filter) filters[name] = filterOf(name, property.filter, property.normalise);
  const { heldBy } = family;
  if (heldBy)
    filters[heldBy.filter] = (value, params) =>
      `t.id IN (SELECT ${heldBy.link.held} FROM ${heldBy.link.table} WHERE ${heldBy.link.holder} = ${params.bind(value)})`;
  const instants = instantProperties(family);
  return {
    name: family.collection,
    table: family.table,
    columns: declaredColumns(family),
    jsonColumns: structuredProperties(family),
    filters,
    toResource: (row) => {
      const resource = { ...row };
      for (const name of instants) resource[name] = instantOf(row[name]);
      return resource;
    },
  };
}

/**
 * The store of a declared family: each write one unit of work holding its row and its event,
 * recorded for the resource's two sides. A change and a removal lock the row first, so the caller
 * is judged against the resource as it is when the write happens. A create that counts against a
 * quota or must hold to a unique property runs where each statement sees what committed before it
 * (db/transactions.ts), after locking what serialises such creates.
 */
export function createDeclaredStore(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  quotas: QuotaGuard;
  family: DeclaredFamily;
}) {
  const { sequelize, events, quotas, family } = deps;
  const collection = declaredCollection(family);
  const sql = sqlOf(sequelize);
  const columns = declaredColumns(family);
  const structured = new Set(structuredProperties(family));
  const instants = new Set(instantProperties(family));
  const normalisers = Object.entries(family.properties).flatMap(([name, property]) =>
    property.normalise ? [[name, property.normalise] as const] : [],
  );
  /** What a write stores: values in their one form, instants as dates, lists and objects as JSON. */
  const stored = (resource: Record<string, unknown>) => {
    const values: Record<string, unknown> = Object.fromEntries(
      columns.map((column) => [column, resource[column] ?? null]),
    );
    for (const [name, normalise] of normalisers)
      if (typeof values[name] === 'string') values[name] = normalise(values[name]);
    for (const name of instants) if (values[name] !== null) values[name] = new Date(values[name] as string);
    for (const name of structured) if (values[name] !== null) values[name] = JSON.stringify(values[name]);
    return values;
  };
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

  /** Refuses a value of the unique property its account holds already, on another resource. */
  async function requireUnique(values: Record<string, unknown>, transaction: Transaction) {
    const { unique } = family;
    if (!unique) return;
    const account = values[unique.within] as string;
    const value = values[unique.property] as string;
    // Serialises the writes of one account, so two at once cannot both pass the check.
    await sql.select('SELECT id FROM accounts WHERE id = :account FOR UPDATE', { account }, transaction);
    const [existing] = await sql.select<{ id: string }>(
      `SELECT id FROM ${family.table} WHERE ${unique.within} = :account AND ${unique.property} = :value AND id <> :id`,
      { account, value, id: values.id },
      transaction,
    );
    if (existing)
      throw new UnableToFulfillError(unique.property, unique.taken(value), [
        {
          resource_type: family.collection,
          resource_id: existing.id,
          resource_property: unique.property,
          remote_resource_type: 'accounts',
          remote_resource_id: account,
        },
      ]);
  }

  /** Refuses to remove a resource a live holder has; takes it off the holders that are going. */
  async function letGo(resource: DeclaredResource, transaction: Transaction) {
    const { heldBy } = family;
    if (!heldBy) return;
    const { link, holders } = heldBy;
    const live = await sql.select<{ id: string }>(
      `SELECT n.id FROM ${link.table} x JOIN ${holders.table} n ON n.id = x.${link.holder}
        WHERE x.${link.held} = :id AND ${liveRow('n')} ORDER BY n.id`,
      { id: resource.id },
      transaction,
    );
    if (live.length)
      throw new UnableToFulfillError(
        'id',
        heldBy.inUse(
          resource,
          live.map((holder) => holder.id),
        ),
        live.map((holder) => ({
          resource_type: family.collection,
          resource_id: resource.id,
          resource_property: holders.property,
          remote_resource_type: holders.collection,
          remote_resource_id: holder.id,
        })),
      );
    await sql.run(`DELETE FROM ${link.table} WHERE ${link.held} = :id`, { id: resource.id }, transaction);
  }

  const writing = family.quota || family.unique ? allocatingTransaction : unitOfWork;

  return {
    async create(input: Record<string, unknown>): Promise<DeclaredResource> {
      return writing(sequelize, async (transaction) => {
        if (family.quota)
          await quotas.requireRoom(input.managing_account as string, { [family.quota]: 1 }, transaction);
        const values = stored({ ...input, id: newId(family.resource) });
        await requireUnique(values, transaction);
        await sql.run(
          `INSERT INTO ${family.table} (${columns.join(', ')}, created_at, updated_at)
           VALUES (${columns.map((column) => `:${column}`).join(', ')}, NOW(3), NOW(3))`,
          values,
          transaction,
        );
        const created = (await read(values.id as string, transaction))!;
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
      return writing(sequelize, async (transaction) => {
        const current = await lock(id, transaction);
        const next = await decide(current);
        if (!current) throw missing(id);
        const values = stored({ ...next, id });
        await requireUnique(values, transaction);
        const settable = columns.filter((column) => column !== 'id');
        await sql.run(
          `UPDATE ${family.table} SET ${settable.map((column) => `${column} = :${column}`).join(', ')},
             updated_at = NOW(3) WHERE id = :id`,
          values,
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
        await letGo(current, transaction);
        await sql.run(`DELETE FROM ${family.table} WHERE id = :id`, { id }, transaction);
        await record('deleted', current, transaction);
        return current;
      });
    },
  };
}

export type DeclaredStore = ReturnType<typeof createDeclaredStore>;
