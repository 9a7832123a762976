import type { Sequelize, Transaction } from 'sequelize';
import type { Scope } from '../domain/authority';
import type { ServiceOffering, ServiceOrder, ServiceOrderFacts } from '../domain/network-services';
import { instantOrNull, numberOrNull, sqlOf } from './collection';
import { orderAccountsOf } from './order-accounts';
import { accountSeenBy } from './visibility';

/** An offering's row as the service rules see it. */
function offeringOf(row: Record<string, unknown> | undefined): ServiceOffering | undefined {
  if (!row) return undefined;
  return {
    id: row.id as string,
    type: row.type as string,
    resource_type: row.resource_type as string,
    handover_metro_area_network: (row.handover_metro_area_network as string | null) ?? null,
    service_metro_area_network: (row.service_metro_area_network as string | null) ?? null,
    service_provider: row.service_provider as string,
    bandwidth_min: numberOrNull(row.bandwidth_min),
    bandwidth_max: numberOrNull(row.bandwidth_max),
    upgrade_allowed: Boolean(Number(row.upgrade_allowed)),
    downgrade_allowed: Boolean(Number(row.downgrade_allowed)),
    orderable_not_before: instantOrNull(row.orderable_not_before),
    orderable_not_after: instantOrNull(row.orderable_not_after),
    diversity: numberOrNull(row.diversity),
    service_provider_workflow: (row.service_provider_workflow as string | null) ?? null,
    cloud_key_pattern: (row.cloud_key_pattern as string | null) ?? null,
  };
}

/** The offering of a network service order, when it exists. */
export async function serviceOffering(
  sequelize: Sequelize,
  id: string,
  transaction?: Transaction,
): Promise<ServiceOffering | undefined> {
  const [row] = await sqlOf(sequelize).select<Record<string, unknown>>(
    `SELECT id, type, resource_type, handover_metro_area_network, service_metro_area_network, service_provider,
       bandwidth_min, bandwidth_max, upgrade_allowed, downgrade_allowed, orderable_not_before,
       orderable_not_after, diversity, service_provider_workflow, cloud_key_pattern
     FROM product_offerings WHERE id = :id`,
    { id },
    transaction,
  );
  return offeringOf(row);
}

/** What the service order rules need to know: the offering, the joining member as the caller sees it, the accounts. */
export async function serviceOrderFacts(
  sequelize: Sequelize,
  order: ServiceOrder,
  now: Date,
  scope: Scope,
): Promise<ServiceOrderFacts> {
  const offering = order.product_offering
    ? await serviceOffering(sequelize, order.product_offering)
    : undefined;
  const joining = order.joining_member_account
    ? await accountSeenBy(sequelize, order.joining_member_account, scope)
    : undefined;
  return { offering, joiningAccount: joining, accounts: await orderAccountsOf(sequelize, order), now };
}
