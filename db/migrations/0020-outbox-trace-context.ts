import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

/**
 * The trace an outbox message was written in (W3C `traceparent` and `tracestate`, as JSON), so that
 * the workflow start or signal, sent later by the handler or the relay, joins the trace of the
 * request that asked for it. Null when the request was not traced.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('workflow_outbox', 'trace_context', { type: DataTypes.STRING(1024), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('workflow_outbox', 'trace_context');
}
