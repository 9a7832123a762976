/** The rehearsal's orders as a plan at the start, and their decommissioning at the end. */
import type { Client } from '@temporalio/client';
import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { sleep } from './machine';
import { say } from './phases';
import type { Balancer } from './traffic';
import { isAnswer } from './traffic';

/** The metro of each connection the rehearsal orders: spread over `metros`, where 10G ports are spare. */
export async function connectionPlan(
  db: Sequelize,
  metros: readonly string[],
  connections: number,
): Promise<string[]> {
  const spare = await db.query<{ metro: string; n: number }>(
    `SELECT SUBSTRING_INDEX(SUBSTRING_INDEX(pop, '-', 2), '-', -1) AS metro, COUNT(*) AS n
       FROM ports WHERE connection IS NULL AND speed = 10000 GROUP BY metro`,
    { type: QueryTypes.SELECT },
  );
  const room = new Map(
    spare.filter((row) => metros.includes(row.metro)).map((row) => [row.metro, Number(row.n)]),
  );
  const total = [...room.values()].reduce((sum, n) => sum + n, 0);
  if (total < connections)
    throw new Error(
      `${connections} connections need as many spare 10G ports in ${metros.join(', ')}; there are ${total}`,
    );
  const plan: string[] = [];
  while (plan.length < connections)
    for (const metro of metros)
      if ((room.get(metro) ?? 0) > 0 && plan.length < connections) {
        plan.push(metro);
        room.set(metro, room.get(metro)! - 1);
      }
  return plan;
}

/**
 * The rehearsal's end: every config whose `external_ref` is `like`, then every such connection, is
 * cancelled through the API by its managing account and waited for until decommissioned.
 */
export async function decommission(
  db: Sequelize,
  balancer: Balancer,
  client: Client,
  tokens: ReadonlyMap<string, string>,
  like: string,
): Promise<void> {
  const ids = async (table: string) =>
    (
      await db.query<{ id: string; account: string }>(
        `SELECT id, managing_account AS account FROM ${table} WHERE external_ref LIKE :like`,
        { replacements: { like }, type: QueryTypes.SELECT },
      )
    ).map((row) => row);
  const takeDown = async (table: string, collection: string, workflowId: (id: string) => string) => {
    const rows = await ids(table);
    for (const row of rows) {
      const answer = await balancer.call('DELETE', `${collection}/${row.id}`, {
        token: tokens.get(row.account),
      });
      if (!isAnswer(answer) || answer.status !== 202)
        throw new Error(
          `DELETE ${collection}/${row.id}: ${isAnswer(answer) ? answer.status : answer.transport}`,
        );
    }
    // Exchange-LAN access has a month's notice: the exchange's operator ends it now, as from the
    // Temporal UI or CLI; 10G connections go at once.
    for (const row of rows) {
      const state = await db.query<{ state: string }>(`SELECT state FROM ${table} WHERE id = :id`, {
        replacements: { id: row.id },
        type: QueryTypes.SELECT,
      });
      if (state[0]?.state === 'decommission_requested')
        await client.workflow.getHandle(workflowId(row.id)).signal('decommissionNow');
    }
    for (;;) {
      const [left] = await db.query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM ${table} WHERE external_ref LIKE :like AND state <> 'decommissioned'`,
        { replacements: { like }, type: QueryTypes.SELECT },
      );
      if (Number(left.n) === 0) return rows.length;
      say(`${left.n} ${collection.slice(1)} still to go`);
      await sleep(3000);
    }
  };
  const configs = await takeDown('network_service_configs', '/network-service-configs', configWorkflowId);
  const connections = await takeDown('connections', '/connections', provisioningWorkflowId);
  say(`${configs} configs and ${connections} connections decommissioned`);
}
