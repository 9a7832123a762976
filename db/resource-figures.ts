import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { ResourceKind } from '../domain/families';
import { BILLED_KINDS, FAMILIES, RESOURCE_KINDS } from '../domain/families';

/** Status codes by which a connection says it waits for the customer's side of the cross-connect. */
const AWAITING_SUBSCRIBER = ['cross_connect_pending', 'loa_missing'];

/** Stateful resources by kind and state: one grouped query over each table's `state` index. */
const COUNTS = `SELECT kind, state, COUNT(*) AS n FROM (${RESOURCE_KINDS.map(
  (kind) => `SELECT '${kind}' AS kind, state FROM ${FAMILIES[kind].table}`,
).join(' UNION ALL ')}) resources GROUP BY kind, state`;

/** The figures the worker's metrics read of the stored resources. */
export function createResourceFigures(sequelize: Sequelize) {
  return {
    /** How many resources of each stateful kind are in each state. */
    async countsByState(): Promise<{ kind: ResourceKind; state: string; count: number }[]> {
      const rows = await sequelize.query<{ kind: ResourceKind; state: string; n: number | string }>(COUNTS, {
        type: QueryTypes.SELECT,
      });
      return rows.map(({ kind, state, n }) => ({ kind, state, count: Number(n) }));
    },

    /** Connections waiting for the customer's side of the cross-connect (LOA or cross-connect). */
    async crossConnectsAwaitingSubscriber(): Promise<number> {
      const [row] = await sequelize.query<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM connections
          WHERE state IN ('requested', 'allocated', 'testing')
            AND (${AWAITING_SUBSCRIBER.map((code) => `status LIKE '%"tag":"${code}"%'`).join(' OR ')})`,
        { type: QueryTypes.SELECT },
      );
      return Number(row?.n ?? 0);
    },

    /**
     * A resource's age in seconds, and whether it was ever billed (whether it reached production
     * before); undefined if there is no such resource.
     */
    async ageAndBilling(
      kind: ResourceKind,
      id: string,
    ): Promise<{ age: number; billed: boolean } | undefined> {
      const [row] = await sequelize.query<{ age: number | string; billed: number | string }>(
        `SELECT TIMESTAMPDIFF(MICROSECOND, created_at, NOW(3)) / 1000000 AS age,
                ${BILLED_KINDS.has(kind) ? 'current_billing_start_date IS NOT NULL' : '0'} AS billed
           FROM ${FAMILIES[kind].table} WHERE id = :id`,
        { type: QueryTypes.SELECT, replacements: { id } },
      );
      return row ? { age: Number(row.age), billed: Number(row.billed) === 1 } : undefined;
    },
  };
}

export type ResourceFigures = ReturnType<typeof createResourceFigures>;
