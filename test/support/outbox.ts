import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { stack } from './stack';
import { eventually } from './wait';

/** How far the outbox row that starts a workflow got. */
interface OutboxRow {
  attempts: number;
  delivered: number;
  held: number;
  last_error: string | null;
}

/** The outbox row that starts `workflowId`; fails when the outbox holds none. */
export const outboxRowOf = async (workflowId: string): Promise<OutboxRow> => {
  const [row] = await stack().db.sequelize.query<OutboxRow>(
    `SELECT attempts, delivered_at IS NOT NULL AS delivered, claimed_until IS NOT NULL AS held, last_error
       FROM workflow_outbox WHERE workflow_id = :workflowId AND signal_name IS NULL`,
    { replacements: { workflowId }, type: QueryTypes.SELECT },
  );
  assert.ok(row, `an outbox row starts ${workflowId}`);
  return { ...row, attempts: Number(row.attempts), delivered: Number(row.delivered), held: Number(row.held) };
};

/** Waits for the outbox to deliver the start of `workflowId`. */
export const startDelivered = (workflowId: string, what = 'the start to be delivered'): Promise<true> =>
  eventually(what, async () => ((await outboxRowOf(workflowId)).delivered ? true : undefined));
