import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { QueuedResourceType, WaitingResource } from '../../domain/operator-queue';
import type { WaitingKind } from '../../domain/search-attributes';
import type { StatusEntry } from '../../domain/status';
import { onboardingWorkflowId } from '../../domain/onboarding';
import { provisioningWorkflowId } from './connection-store';
import { featureConfigWorkflowId } from './network-feature-config-repository';
import { configWorkflowId, serviceWorkflowId } from './network-service-config-repository';

/** The tables of resources with a lifecycle, and how their workflows are named. */
const LIFECYCLE_TABLES: ReadonlyArray<[QueuedResourceType, string, (id: string) => string]> = [
  ['connection', 'connections', provisioningWorkflowId],
  ['network_service', 'network_services', serviceWorkflowId],
  ['network_service_config', 'network_service_configs', configWorkflowId],
  ['network_feature_config', 'network_feature_configs', featureConfigWorkflowId],
];

/** How the workflow of each kind of queued resource is named. */
const WORKFLOW_OF = new Map<QueuedResourceType, (id: string) => string>([
  ...LIFECYCLE_TABLES.map(([type, , workflowId]) => [type, workflowId] as const),
  ['account', onboardingWorkflowId],
]);

/** The status tags of a connection whose cross-connect is awaited. */
const CROSS_CONNECT_TAGS = ['cross_connect_pending', 'cross_connect_ordered', 'loa_missing'];

interface QueueRow {
  resource_type: QueuedResourceType;
  id: string;
  account: string;
  state: string;
  status: string;
  updated_at: Date;
  decommission_at: string | null;
}

const KIND_OF_STATE: Readonly<Record<string, WaitingKind>> = {
  error: 'retry_provisioning',
  operator: 'retry_testing',
  decommission_requested: 'decommission_day',
  requested: 'onboarding',
  allocated: 'cross_connect',
};

/**
 * What waits on the exchange, read from the resources themselves (so that it holds also for runs
 * begun before their workflows said so in a search attribute): resources in `error` or `operator`,
 * connections waiting for their cross-connect, resources whose decommission day is still to come,
 * and accounts whose on-boarding waits for what their member is to add. Oldest first.
 */
export function createOperatorQueue(deps: { sequelize: Sequelize; clock?: () => Date }) {
  const { sequelize } = deps;
  const clock = deps.clock ?? (() => new Date());

  return {
    async waiting(): Promise<WaitingResource[]> {
      const lifecycles = LIFECYCLE_TABLES.map(
        ([type, table]) =>
          `SELECT '${type}' AS resource_type, id, managing_account AS account, state, status, updated_at,
                  DATE_FORMAT(decommission_at, '%Y-%m-%d') AS decommission_at
             FROM ${table}
            WHERE state IN ('error', 'operator')
               OR (state = 'decommission_requested' AND decommission_at > :today)
               ${type === 'connection' ? "OR (state = 'allocated' AND JSON_VALUE(status, '$[0].tag') IN (:crossConnect))" : ''}`,
      );
      const rows = await sequelize.query<QueueRow>(
        `${lifecycles.join(' UNION ALL ')}
         UNION ALL
         SELECT 'account', id, id, state, status, updated_at, NULL FROM accounts
          WHERE state = 'requested' AND JSON_LENGTH(status) > 0`,
        {
          replacements: { today: clock().toISOString().slice(0, 10), crossConnect: CROSS_CONNECT_TAGS },
          type: QueryTypes.SELECT,
        },
      );
      return rows
        .map((row) => {
          const kind = KIND_OF_STATE[row.state];
          const status = JSON.parse(row.status || '[]') as StatusEntry[];
          const decommissioning = kind === 'decommission_day';
          return {
            kind,
            resourceType: row.resource_type,
            id: row.id,
            account: row.account,
            since: (!decommissioning && status[0]?.timestamp) || new Date(row.updated_at).toISOString(),
            why: decommissioning
              ? `goes on ${row.decommission_at}`
              : status.map((entry) => entry.message).join(' ') || `in state ${row.state}`,
            ...(decommissioning ? { day: row.decommission_at! } : {}),
            workflowId: WORKFLOW_OF.get(row.resource_type)!(row.id),
          };
        })
        .sort((a, b) => a.since.localeCompare(b.since) || a.id.localeCompare(b.id));
    },
  };
}

export type OperatorQueue = ReturnType<typeof createOperatorQueue>;
