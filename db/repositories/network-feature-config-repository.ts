import { workflowIdOf, workflowStartOf } from '../../domain/families';
import type { Sequelize, Transaction } from 'sequelize';
import type { CancellationPolicy, CancellationTerms } from '../../domain/cancellation';
import { UnableToFulfillError } from '../../domain/errors';
import type {
  FeatureConfigFacts,
  FlagSetting,
  RouteServerConfigOrder,
} from '../../domain/network-feature-configs';
import { flagsInForce } from '../../domain/network-feature-configs';
import type { State } from '../../domain/states';
import { RECONSIDER_SIGNAL, transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import { numberOrNull, resourceReader, sqlOf } from '../collection';
import { newId } from '../../domain/ids';
import { networkFeatureConfigs } from '../network-feature-configs-collection';
import { orderAccountsOf, orderRoleAssignments } from '../order-accounts';
import type { EventRepository } from './event-repository';
import type { AgendaRow, StoredAgenda } from './lifecycle-store';
import { agendaColumns, agendaOf, createLifecycleStore } from './lifecycle-store';
import { CONFIG_GOING, configWorkflowId } from './network-service-config-repository';
import type { OutboxRepository, WorkflowStart } from './outbox-repository';
import type { QuotaGuard } from './quota-guard';
import { allocatingTransaction } from '../transactions';
import { unitOfWork } from '../unit-of-work';

/** A route-server session as IX-API shows it. */
export interface NetworkFeatureConfig extends RouteServerConfigOrder {
  id: string;
  state: State;
  status: StatusEntry[];
  decommission_at: string | null;
  charged_until: string | null;
  current_billing_start_date: string | null;
}

/** What a session's workflow has to do next, as the stored session says. */
export interface FeatureConfigAgenda extends StoredAgenda {
  /** The state of the network service config the session runs over. */
  configState: State;
}

/** Where a session lives: the route server, and the session it holds. */
export interface SessionPlacement {
  id: string;
  routeServer: string;
  revision: number;
  session: {
    name: string;
    peerAsn: number;
    peerAddress: string;
    passive: boolean;
    password: string | null;
    asSet: string | null;
    maxPrefix: number | null;
    insertIxpAsn: boolean;
    flags: string[];
  };
}

export const featureConfigWorkflowId = (id: string) => workflowIdOf('network_feature_config', id);

export const featureConfigStart = (config: { id: string; managing_account: string }): WorkflowStart =>
  workflowStartOf('network_feature_config', config);

/** What the route server does with a session: a change of these needs the workflow. */
const SESSION_PROPERTIES = [
  'asn',
  'password',
  'as_set_v4',
  'as_set_v6',
  'max_prefix_v4',
  'max_prefix_v6',
  'insert_ixp_asn',
  'bgp_session_type',
  'ip',
  'flags',
] as const;

export function createNetworkFeatureConfigRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
  quotas: QuotaGuard;
  /** The clock that decides days (billing starts, decommission days that have come). */
  clock: () => Date;
}) {
  const { sequelize, events, outbox, quotas } = deps;
  const { select, run } = sqlOf(sequelize);
  const read = resourceReader<NetworkFeatureConfig>(sequelize, networkFeatureConfigs);
  const lifecycle = createLifecycleStore<NetworkFeatureConfig>({
    sequelize,
    clock: deps.clock,
    events,
    outbox,
    table: 'network_feature_configs',
    what: 'network-feature-configs',
    eventPrefix: 'network_feature_config',
    workflowId: featureConfigWorkflowId,
    read,
  });
  const columns = (order: RouteServerConfigOrder) => ({
    ...order,
    role_assignments: JSON.stringify(order.role_assignments),
    flags: JSON.stringify(order.flags),
  });

  /**
   * A second session of one config with one route server from one address is refused, naming the
   * first. The config's row is locked, so two orders for it are checked one after the other.
   */
  async function refuseTwin(order: RouteServerConfigOrder, except: string, transaction: Transaction) {
    await select(
      'SELECT id FROM network_service_configs WHERE id = :id FOR UPDATE',
      { id: order.network_service_config },
      transaction,
    );
    const [twin] = await select<{ id: string }>(
      `SELECT id FROM network_feature_configs WHERE network_service_config = :config AND network_feature = :feature
         AND ip = :ip AND state NOT IN (:gone) AND id <> :except`,
      {
        config: order.network_service_config,
        feature: order.network_feature,
        ip: order.ip,
        gone: CONFIG_GOING,
        except,
      },
      transaction,
    );
    if (twin)
      throw new UnableToFulfillError('ip', `${twin.id} holds this session already`, [
        {
          resource_type: 'network-feature-configs',
          resource_id: twin.id,
          resource_property: 'ip',
          remote_resource_type: 'network-features',
          remote_resource_id: order.network_feature,
        },
      ]);
  }

  return {
    /** What the rules need to know of an order: the route server, the config (if the caller manages it), roles, billing. */
    async orderFacts(
      order: RouteServerConfigOrder,
      accounts: readonly string[],
    ): Promise<FeatureConfigFacts> {
      const scope = accounts.length ? accounts : [''];
      const [feature] = await select<Record<string, string>>(
        `SELECT id, type, network_service, session_mode, address_families, available_bgp_session_types, flags,
           nfc_required_contact_roles FROM network_features WHERE id = :id`,
        { id: order.network_feature },
      );
      const [config] = await select<{ id: string; state: State; network_service: string; asns: string }>(
        `SELECT id, state, network_service, asns FROM network_service_configs
         WHERE id = :id AND managing_account IN (:scope)`,
        { id: order.network_service_config, scope },
      );
      const ips = config
        ? await select<{ id: string; version: number; address: string }>(
            'SELECT id, version, address FROM ip_addresses WHERE network_service_config = :id',
            { id: config.id },
          )
        : [];
      const roles = await orderRoleAssignments(sequelize, order.role_assignments, scope);
      const orderAccounts = await orderAccountsOf(sequelize, order);
      const parse = <T>(text: string | null | undefined, fallback: T): T =>
        text ? (JSON.parse(text) as T) : fallback;
      return {
        feature: feature && {
          id: feature.id,
          type: feature.type,
          network_service: feature.network_service,
          session_mode: feature.session_mode,
          address_families: parse(feature.address_families, []),
          available_bgp_session_types: parse(feature.available_bgp_session_types, []),
          flags: parse(feature.flags, []),
          nfc_required_contact_roles: parse(feature.nfc_required_contact_roles, []),
        },
        config: config && {
          id: config.id,
          state: config.state,
          network_service: config.network_service,
          asns: parse<number[]>(config.asns, []).map(Number),
          ips: new Map(ips.map((ip) => [ip.id, { version: Number(ip.version), address: ip.address }])),
        },
        assignedRoles: roles.map((r) => r.role),
        knownAssignments: new Set(roles.map((r) => r.id)),
        accounts: orderAccounts,
      };
    },

    /**
     * Stores a new session with its event and the outbox row that starts its provisioning, and
     * tells its config's workflow (which may be waiting for it to go live), in one transaction.
     * The order counts against the quota of open orders of its managing account's tree.
     */
    async create(order: RouteServerConfigOrder): Promise<NetworkFeatureConfig> {
      const id = newId('nfc');
      return allocatingTransaction(sequelize, async (transaction) => {
        await quotas.requireRoom(order.managing_account, { open_orders: 1 }, transaction);
        await refuseTwin(order, id, transaction);
        await run(
          `INSERT INTO network_feature_configs (id, type, state, status, managing_account, consuming_account,
             billing_account, role_assignments, external_ref, purchase_order, contract_ref, network_feature,
             network_service_config, asn, password, as_set_v4, as_set_v6, max_prefix_v4, max_prefix_v6,
             insert_ixp_asn, session_mode, bgp_session_type, ip, flags, revision, created_at, updated_at)
           VALUES (:id, :type, 'requested', '[]', :managing_account, :consuming_account, :billing_account,
             :role_assignments, :external_ref, :purchase_order, :contract_ref, :network_feature,
             :network_service_config, :asn, :password, :as_set_v4, :as_set_v6, :max_prefix_v4, :max_prefix_v6,
             :insert_ixp_asn, :session_mode, :bgp_session_type, :ip, :flags, 1, NOW(3), NOW(3))`,
          { ...columns(order), id },
          transaction,
        );
        const featureConfig = (await read(id, transaction))!;
        await lifecycle.tell(
          'created',
          { network_feature_config: featureConfig },
          featureConfig,
          transaction,
        );
        await outbox.enqueue(featureConfigStart(featureConfig), transaction);
        await outbox.enqueue(
          { workflowId: configWorkflowId(order.network_service_config), signal: RECONSIDER_SIGNAL },
          transaction,
        );
        return featureConfig;
      });
    },

    findById: (id: string) => read(id),

    /**
     * Stores a change; what the route server does with the session takes a new revision that the
     * workflow configures (`production_change_pending` in production until then).
     */
    async change(id: string, next: RouteServerConfigOrder): Promise<NetworkFeatureConfig> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lifecycle.lock(id, transaction);
        const current = (await read(id, transaction))!;
        await refuseTwin(next, id, transaction);
        const session = SESSION_PROPERTIES.some(
          (name) => JSON.stringify(next[name]) !== JSON.stringify(current[name]),
        );
        const to =
          session && row.state === 'production' ? transition(row.state, 'request_change') : row.state;
        await run(
          `UPDATE network_feature_configs SET managing_account = :managing_account,
             consuming_account = :consuming_account, billing_account = :billing_account,
             role_assignments = :role_assignments, external_ref = :external_ref, purchase_order = :purchase_order,
             contract_ref = :contract_ref, asn = :asn, password = :password, as_set_v4 = :as_set_v4,
             as_set_v6 = :as_set_v6, max_prefix_v4 = :max_prefix_v4, max_prefix_v6 = :max_prefix_v6,
             insert_ixp_asn = :insert_ixp_asn, session_mode = :session_mode, bgp_session_type = :bgp_session_type,
             ip = :ip, flags = :flags, state = :to, revision = revision + :session, updated_at = NOW(3)
           WHERE id = :id`,
          { ...columns(next), id, to, session: session ? 1 : 0 },
          transaction,
        );
        const featureConfig = (await read(id, transaction))!;
        await lifecycle.tell(
          'changed',
          { network_feature_config: featureConfig },
          featureConfig,
          transaction,
        );
        if (to !== row.state)
          await lifecycle.tell(
            'state_changed',
            { id, from: row.state, to, event: 'request_change' },
            featureConfig,
            transaction,
          );
        if (session) await lifecycle.reconsider(id, transaction);
        return featureConfig;
      });
    },

    /** Sessions have no terms of their own: they go with the day asked for, or at once. */
    async cancellationTerms(id: string): Promise<{ state: State; terms: CancellationTerms } | undefined> {
      const [row] = await select<{ state: State }>(
        'SELECT state FROM network_feature_configs WHERE id = :id',
        {
          id,
        },
      );
      return (
        row && { state: row.state, terms: { noticePeriod: null, initialPeriod: null, billingStart: null } }
      );
    },

    requestCancellation: lifecycle.requestCancellation,

    /** Asks every live session of a config to go with it, by the config's policy, in its transaction. */
    async cascadeFrom(configId: string, policy: CancellationPolicy, transaction: Transaction): Promise<void> {
      const sessions = await select<{ id: string }>(
        'SELECT id FROM network_feature_configs WHERE network_service_config = :configId AND state NOT IN (:gone) ORDER BY id',
        { configId, gone: CONFIG_GOING },
        transaction,
      );
      for (const session of sessions) {
        const row = await lifecycle.lock(session.id, transaction);
        await lifecycle.requestCancellationIn(session.id, row, policy, transaction);
      }
    },

    applyLifecycleEvent: lifecycle.applyLifecycleEvent,
    recordStatus: lifecycle.recordStatus,

    /** What the session's workflow has to do next; undefined when the session is gone. */
    async agenda(id: string): Promise<FeatureConfigAgenda | undefined> {
      const [row] = await select<AgendaRow & { config_state: State }>(
        `SELECT ${agendaColumns('x')}, n.state AS config_state
         FROM network_feature_configs x JOIN network_service_configs n ON n.id = x.network_service_config
         WHERE x.id = :id`,
        { id },
      );
      if (!row) return undefined;
      return { ...agendaOf(row), configState: row.config_state };
    },

    /** The route server and the session it is to hold, as the session is stored now. */
    async placement(id: string): Promise<SessionPlacement | undefined> {
      const [row] = await select<Record<string, unknown>>(
        `SELECT x.*, i.address, i.version, f.flags AS offered FROM network_feature_configs x
         JOIN network_features f ON f.id = x.network_feature
         LEFT JOIN ip_addresses i ON i.id = x.ip WHERE x.id = :id`,
        { id },
      );
      if (!row) return undefined;
      const v4 = Number(row.version) === 4;
      // Mandatory flags of the route server are on whether a session names them or not.
      const flags = flagsInForce(
        JSON.parse(row.flags as string) as FlagSetting[],
        JSON.parse((row.offered as string) || '[]') as Array<{ name: string; mandatory: boolean }>,
      );
      return {
        id,
        routeServer: row.network_feature as string,
        revision: Number(row.revision),
        session: {
          name: id,
          peerAsn: Number(row.asn),
          peerAddress: (row.address as string | null) ?? '',
          passive: row.bgp_session_type === 'passive',
          password: (row.password as string | null) || null,
          asSet: ((v4 ? row.as_set_v4 : row.as_set_v6) as string | null) ?? null,
          maxPrefix: numberOrNull(v4 ? row.max_prefix_v4 : row.max_prefix_v6),
          insertIxpAsn: row.insert_ixp_asn === null ? true : Boolean(row.insert_ixp_asn),
          flags: flags
            .filter((flag) => flag.enabled)
            .map((flag) => flag.name)
            .sort(),
        },
      };
    },
  };
}

export type NetworkFeatureConfigRepository = ReturnType<typeof createNetworkFeatureConfigRepository>;
