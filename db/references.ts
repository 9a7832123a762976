import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { Conflict } from '../domain/errors';
import { ONBOARDING_REQUIRED_ROLES } from '../domain/onboarding';
import { ENDED_STATES, GOING_STATES, LIVE_STATES } from '../domain/states';

/**
 * What stands in the way of deleting or changing a resource, as registered queries: every resource
 * that refers to an account, a billing account or a role assignment adds its query here, and the
 * delete and update paths of those resources report what the queries find as conflicts.
 */
export interface ReferenceSource {
  /** Collection name of the referring resource, as conflicts name it (`accounts`, `connections`). */
  remoteType: string;
  /** Property of the referring resource that holds the reference, if one does. */
  property: string | null;
  /**
   * Selects `id` (of the referring resource) for the referenced ids in `:targets`, leaving out the
   * resources in `:leaving` (those removed together with the target).
   */
  sql: string;
}

/**
 * A table whose rows name an account in the given columns; `live` narrows to the rows that still
 * hold something of it (a resource decommissioned, cancelled or archived no longer stands in the way).
 */
const accountColumns = (
  table: string,
  remoteType: string,
  columns: readonly string[],
  live = 'TRUE',
): ReferenceSource[] =>
  columns.map((column) => ({
    remoteType,
    property: column,
    sql: `SELECT id FROM ${table} WHERE ${column} IN (:targets) AND id NOT IN (:leaving) AND ${live}`,
  }));

/** Rows of a lifecycle resource that has not ended. */
const NOT_ENDED = `state NOT IN (${ENDED_STATES.map((state) => `'${state}'`).join(', ')})`;

/**
 * Rows (of the lifecycle table aliased `alias`) of resources that are live: not going, not gone,
 * no cancellation asked for. Only those hold on to what they refer to; what a going resource
 * refers to may be asked to go as well (no earlier than it does).
 */
export const liveRow = (alias: string) =>
  `(${alias}.state NOT IN (${GOING_STATES.map((state) => `'${state}'`).join(', ')}) AND ${alias}.cancel_requested_at IS NULL)`;

/** Lifecycle resources that name managing, consuming and billing accounts, with their collections. */
const ORDERED = [
  ['connections', 'connections'],
  ['network_service_configs', 'network-service-configs'],
  ['network_feature_configs', 'network-feature-configs'],
] as const;

/**
 * Rows of a resource not yet archived: one decommissioned or cancelled may still be charged (until
 * its `charged_until`), so the accounts that consume and pay for it stay until it is archived.
 */
const NOT_ARCHIVED = "state <> 'archived'";

/** Resources that keep an account from being deleted. */
export const ACCOUNT_REFERENCES: ReferenceSource[] = [
  ...accountColumns('ports', 'ports', ['managing_account', 'consuming_account', 'billing_account']),
  ...[['network_services', 'network-services'] as const, ...ORDERED].flatMap(([table, remoteType]) => [
    ...accountColumns(table, remoteType, ['consuming_account', 'billing_account'], NOT_ARCHIVED),
    ...accountColumns(
      table,
      remoteType,
      table === 'network_services' ? ['managing_account', 'joining_member_account'] : ['managing_account'],
      NOT_ENDED,
    ),
  ]),
  ...accountColumns('member_joining_rules', 'member-joining-rules', [
    'managing_account',
    'consuming_account',
  ]),
  ...accountColumns('macs', 'macs', ['managing_account', 'consuming_account']),
  // Addresses the account registered, or holds from the exchange until they go back to it.
  ...accountColumns('ip_addresses', 'ips', ['managing_account', 'consuming_account'], 'released_at IS NULL'),
  {
    remoteType: 'accounts',
    property: 'managing_account',
    sql: `SELECT id FROM accounts WHERE managing_account IN (:targets) AND id NOT IN (:leaving)`,
  },
  // Contacts consumed by the account go with it; a contact it manages for another account does not.
  {
    remoteType: 'contacts',
    property: 'managing_account',
    sql: `SELECT id FROM contacts
           WHERE managing_account IN (:targets) AND consuming_account NOT IN (:targets)
             AND id NOT IN (:leaving)`,
  },
];

/** Resources that name an account as their billing account (it must keep its billing information). */
export const BILLING_ACCOUNT_REFERENCES: ReferenceSource[] = [
  ...accountColumns('ports', 'ports', ['billing_account']),
  ...accountColumns('network_services', 'network-services', ['billing_account'], NOT_ENDED),
  ...ORDERED.flatMap(([table, remoteType]) =>
    accountColumns(table, remoteType, ['billing_account'], NOT_ENDED),
  ),
];

/** Lifecycle resources that list role assignments in their `role_assignments`. */
const ASSIGNING = [...ORDERED] as const;

/**
 * Resources that need a role assignment because they require a contact in that role: live
 * connections and configs that list it (those going need it no more), and an account in production,
 * which needs a contact in every role on-boarding requires (the last such assignment stays).
 */
export const ROLE_ASSIGNMENT_REFERENCES: ReferenceSource[] = [
  ...ASSIGNING.map(([table, remoteType]) => ({
    remoteType,
    property: 'role_assignments',
    sql: `SELECT t.id FROM ${table} t
           WHERE JSON_OVERLAPS(t.role_assignments, JSON_ARRAY(:targets)) AND t.id NOT IN (:leaving)
             AND ${liveRow('t')}
           ORDER BY t.id`,
  })),
  {
    remoteType: 'accounts',
    property: null,
    sql: `SELECT DISTINCT a.id
            FROM role_assignments ra
            JOIN roles r ON r.id = ra.role
            JOIN contacts c ON c.id = ra.contact
            JOIN accounts a ON a.id = c.consuming_account
           WHERE ra.id IN (:targets)
             AND r.name IN (${ONBOARDING_REQUIRED_ROLES.map((name) => `'${name}'`).join(', ')})
             AND a.state IN (${LIVE_STATES.map((state) => `'${state}'`).join(', ')})
             AND a.id NOT IN (:leaving)
             AND NOT EXISTS (
                   SELECT 1 FROM role_assignments other
                     JOIN contacts oc ON oc.id = other.contact
                    WHERE other.role = ra.role AND oc.consuming_account = a.id
                      AND other.id NOT IN (:targets))`,
  },
];

/**
 * Takes deleted role assignments out of the `role_assignments` of the resources that listed them
 * (all of them going, or the deletion would have been refused), so that no resource names one
 * that is gone.
 */
export async function forgetRoleAssignments(
  sequelize: Sequelize,
  ids: readonly string[],
  transaction: Transaction,
): Promise<void> {
  if (!ids.length) return;
  const gone = new Set(ids);
  for (const [table] of ASSIGNING) {
    const rows = await sequelize.query<{ id: string; role_assignments: string }>(
      `SELECT id, role_assignments FROM ${table}
        WHERE JSON_OVERLAPS(role_assignments, JSON_ARRAY(:ids)) FOR UPDATE`,
      { replacements: { ids }, type: QueryTypes.SELECT, transaction },
    );
    for (const row of rows) {
      const kept = (JSON.parse(row.role_assignments) as string[]).filter((id) => !gone.has(id));
      await sequelize.query(
        `UPDATE ${table} SET role_assignments = :kept, updated_at = NOW(3) WHERE id = :id`,
        { replacements: { id: row.id, kept: JSON.stringify(kept) }, transaction },
      );
    }
  }
}

/**
 * Runs the registered queries for `targets` and reports every referring resource as a conflict of
 * `resource` (the thing the caller asked to remove or change).
 */
export async function findConflicts(
  sequelize: Sequelize,
  sources: readonly ReferenceSource[],
  options: {
    resource: { type: string; id: string };
    targets: readonly string[];
    /** Ids removed together with the targets, which therefore do not stand in the way. */
    leaving?: readonly string[];
    transaction?: Transaction;
  },
): Promise<Conflict[]> {
  const conflicts: Conflict[] = [];
  if (!options.targets.length) return conflicts;
  for (const source of sources) {
    const rows = await sequelize.query<{ id: string }>(source.sql, {
      replacements: { targets: options.targets, leaving: options.leaving?.length ? options.leaving : [''] },
      type: QueryTypes.SELECT,
      transaction: options.transaction,
    });
    for (const row of rows) {
      conflicts.push({
        resource_type: options.resource.type,
        resource_id: options.resource.id,
        resource_property: source.property,
        remote_resource_type: source.remoteType,
        remote_resource_id: row.id,
      });
    }
  }
  return conflicts;
}

/** "accounts acc-1, connections con-2" for a message. */
export function describeConflicts(conflicts: readonly Conflict[]): string {
  return conflicts.map((c) => `${c.remote_resource_type} ${c.remote_resource_id}`).join(', ');
}
