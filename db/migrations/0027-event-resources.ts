import type { QueryInterface, Sequelize } from 'sequelize';
import { DataTypes, QueryTypes } from 'sequelize';
import { EVENT_RESOURCE_PROPERTIES } from '../../domain/events';

/** Rows given their resource per statement, so that no statement holds a large log at once. */
const BATCH = 10_000;

/** The string at `path` of the payload, when it is an id (at most 80 characters); NULL otherwise. */
const idAt = (path: string) =>
  `IF(JSON_TYPE(JSON_EXTRACT(payload, '${path}')) = 'STRING'
      AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(payload, '${path}'))) BETWEEN 1 AND 80,
      JSON_UNQUOTE(JSON_EXTRACT(payload, '${path}')), NULL)`;

/**
 * Gives the events that name no resource yet the resource their payload names, as
 * `eventResourceOf` (domain/events.ts) finds it: the id of the resource the payload holds where
 * events of its kind hold it, else the payload's `id`.
 */
export async function backfillEventResources(sequelize: Sequelize): Promise<void> {
  const [{ first, last }] = await sequelize.query<{ first: number | null; last: number | null }>(
    'SELECT MIN(serial) AS first, MAX(serial) AS last FROM events WHERE resource IS NULL',
    { type: QueryTypes.SELECT },
  );
  if (first === null || last === null) return;
  const cases = Object.entries(EVENT_RESOURCE_PROPERTIES)
    .map(([kind, property]) => `WHEN '${kind}' THEN ${idAt(`$.${property}.id`)}`)
    .join('\n');
  for (let from = Number(first) - 1; from < Number(last); from += BATCH)
    await sequelize.query(
      `UPDATE events
          SET resource = COALESCE(CASE SUBSTRING_INDEX(type, '.', 1) ${cases} END, ${idAt('$.id')})
        WHERE serial > :from AND serial <= :to AND resource IS NULL AND JSON_VALID(payload)`,
      { replacements: { from, to: from + BATCH } },
    );
}

/**
 * Each event names the resource it is about (`resource`, the id), so that `GET /events?resource=`
 * finds one resource's events by an index rather than by reading every payload. The events written
 * before are given theirs from their payloads.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('events', 'resource', { type: DataTypes.STRING(80), allowNull: true });
  await qi.addIndex('events', ['resource', 'serial']);
  await backfillEventResources(qi.sequelize);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeIndex('events', ['resource', 'serial']);
  await qi.removeColumn('events', 'resource');
}
