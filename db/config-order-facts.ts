import type { Sequelize, Transaction } from 'sequelize';
import { CONNECTION_OUTER_ETHERTYPES, CONNECTION_VLAN_TYPES } from '../domain/connections';
import type { ConfigOrder, ConfigOrderFacts, JoiningRule } from '../domain/network-service-configs';
import type { State } from '../domain/states';
import { ENDED_STATES } from '../domain/states';
import { instantOrNull, numberOrNull, sqlOf } from './collection';
import { orderAccountsOf, orderRoleAssignments } from './order-accounts';

/**
 * What the rules need to know of an order: the service with where its offering delivers, the
 * connection (if one of `accounts` holds it), the offering, the roles of the order's assignments,
 * whether the billing account can pay, which of its MACs the caller may use now, and the
 * service's joining rules for the member and for the caller.
 */
export async function configOrderFacts(
  sequelize: Sequelize,
  order: ConfigOrder,
  accounts: readonly string[],
  now: Date,
  except: string | null = null,
): Promise<ConfigOrderFacts> {
  const { select } = sqlOf(sequelize);
  const scope = accounts.length ? accounts : [''];
  const [service] = await select<Record<string, unknown>>(
    `SELECT s.id, s.type, s.state, s.metro_area_network, s.product_offering, s.nsc_required_contact_roles,
           s.managing_account, s.consuming_account, s.joining_member_account, s.public, s.diversity,
           o.handover_metro_area_network, o.service_metro_area_network, o.provider_vlans
         FROM network_services s LEFT JOIN product_offerings o ON o.id = s.product_offering
         WHERE s.id = :id`,
    { id: order.network_service },
  );
  const [memberRule] = await select<Record<string, unknown>>(
    `SELECT type, capacity_min, capacity_max FROM member_joining_rules
         WHERE network_service = :service AND consuming_account = :account`,
    { service: order.network_service, account: order.consuming_account },
  );
  const [callerAllowed] = await select<{ id: string }>(
    `SELECT id FROM member_joining_rules
         WHERE network_service = :service AND type = 'allow' AND consuming_account IN (:scope) LIMIT 1`,
    { service: order.network_service, scope },
  );
  const [connection] = await select<Record<string, unknown>>(
    `SELECT c.id, c.state, p.metro_area_network, c.speed, c.capacity_allocation_limit,
           (SELECT COALESCE(SUM(n.capacity), 0) FROM network_service_configs n
             WHERE n.connection = c.id AND n.vlan_held AND n.id <> :except) AS booked
         FROM connections c JOIN pops p ON p.id = c.pop
         WHERE c.id = :id AND (c.managing_account IN (:scope) OR c.consuming_account IN (:scope))`,
    { id: order.connection, scope, except: except ?? '' },
  );
  const offeringId = order.product_offering ?? (service?.product_offering as string | null) ?? null;
  const [offering] = offeringId
    ? await select<Record<string, unknown>>(
        `SELECT id, type, bandwidth_min, bandwidth_max, orderable_not_before, orderable_not_after
             FROM product_offerings WHERE id = :id`,
        { id: offeringId },
      )
    : [];
  const roles = await orderRoleAssignments(sequelize, order.role_assignments, scope);
  const orderAccounts = await orderAccountsOf(sequelize, order);
  const macs = order.macs.length
    ? await select<{ id: string }>(
        `SELECT id FROM macs WHERE id IN (:ids)
               AND (managing_account IN (:scope) OR consuming_account IN (:scope))
               AND (valid_not_after IS NULL OR valid_not_after > :now)`,
        { ids: order.macs, scope, now },
      )
    : [];
  const heldByOthers = await macsHeldByOthers(sequelize, order, except);
  return {
    service: service && {
      id: service.id as string,
      type: service.type as string,
      state: service.state as State,
      metro_area_network: (service.metro_area_network as string | null) ?? null,
      product_offering: (service.product_offering as string | null) ?? null,
      nsc_required_contact_roles: JSON.parse(
        (service.nsc_required_contact_roles as string) || '[]',
      ) as string[],
      // A service's configs use the service's own offering.
      nsc_product_offerings: service.product_offering ? [service.product_offering as string] : [],
      managing_account: service.managing_account as string,
      consuming_account: service.consuming_account as string,
      joining_member_account: (service.joining_member_account as string | null) ?? null,
      public: Boolean(Number(service.public ?? 0)),
      diversity: numberOrNull(service.diversity),
      handover_metro_area_network: (service.handover_metro_area_network as string | null) ?? null,
      service_metro_area_network: (service.service_metro_area_network as string | null) ?? null,
      provider_vlans: (service.provider_vlans as 'single' | 'multi' | null) ?? null,
    },
    connection: connection && {
      id: connection.id as string,
      state: connection.state as State,
      metro_area_network: connection.metro_area_network as string,
      vlan_types: CONNECTION_VLAN_TYPES,
      outer_vlan_ethertypes: CONNECTION_OUTER_ETHERTYPES,
      speed: Number(connection.speed ?? 0),
      capacity_allocation_limit: numberOrNull(connection.capacity_allocation_limit),
      capacityBookedElsewhere: Number(connection.booked),
    },
    offering: offering && {
      id: offering.id as string,
      type: offering.type as string,
      bandwidth_min: numberOrNull(offering.bandwidth_min),
      bandwidth_max: numberOrNull(offering.bandwidth_max),
      orderable_not_before: instantOrNull(offering.orderable_not_before),
      orderable_not_after: instantOrNull(offering.orderable_not_after),
    },
    assignedRoles: roles.map((r) => r.role),
    knownAssignments: new Set(roles.map((r) => r.id)),
    accounts: orderAccounts,
    usableMacs: new Set(macs.map((m) => m.id)),
    macsHeldByOthers: heldByOthers,
    actingAccounts: accounts,
    memberRule: memberRule && {
      type: memberRule.type as JoiningRule['type'],
      capacity_min: numberOrNull(memberRule.capacity_min),
      capacity_max: numberOrNull(memberRule.capacity_max),
    },
    callerAllowed: Boolean(callerAllowed),
    now,
  };
}

/**
 * Of the order's MACs, those whose address another account's live config on the same service uses
 * (a MAC address is one member's on a service), by MAC id with the address. Read in the write's
 * transaction, with the service's row locked, it is the word that counts; read before, it lets the
 * rules name every problem at once.
 */
export async function macsHeldByOthers(
  sequelize: Sequelize,
  order: Pick<ConfigOrder, 'macs' | 'network_service' | 'consuming_account'>,
  except: string | null,
  transaction?: Transaction,
): Promise<Map<string, string>> {
  if (!order.macs.length) return new Map();
  const rows = await sqlOf(sequelize).select<{ id: string; address: string }>(
    `SELECT DISTINCT m.id, m.address FROM macs m
       JOIN macs other ON other.address = m.address
       JOIN network_service_config_macs x ON x.mac = other.id
       JOIN network_service_configs n ON n.id = x.network_service_config
      WHERE m.id IN (:ids) AND n.network_service = :service AND n.consuming_account <> :consumer
        AND n.state NOT IN (:ended) AND n.id <> :except`,
    {
      ids: order.macs,
      service: order.network_service,
      consumer: order.consuming_account,
      ended: ENDED_STATES,
      except: except ?? '',
    },
    transaction,
  );
  return new Map(rows.map((row) => [row.id, row.address]));
}
