import { workflowIdOf, workflowStartOf } from '../../domain/families';
import type { Sequelize, Transaction } from 'sequelize';
import type { CancellationPolicy, CancellationTerms } from '../../domain/cancellation';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import type { ConfigOrder, SiblingConfig, TypedProperty } from '../../domain/network-service-configs';
import { absentConfigOrder, macsHeldProblems, siblingClashes } from '../../domain/network-service-configs';
import type { State } from '../../domain/states';
import { GOING_STATES, RECONSIDER_SIGNAL, transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import type { Tagging } from '../../domain/vlans';
import { taggingOf } from '../../domain/vlans';
import { numberOrNull, resourceReader, sqlOf } from '../collection';
import type { AgendaRow, StoredAgenda } from './lifecycle-store';
import { agendaColumns, agendaOf, createLifecycleStore } from './lifecycle-store';
import { newId } from '../../domain/ids';
import { allocatingTransaction } from '../transactions';
import { createConfigAllocation } from '../allocation/config-resources';
import { networkServiceConfigs } from '../network-service-configs-collection';
import { configOrderFacts, macsHeldByOthers } from '../config-order-facts';
import type { EventRepository } from './event-repository';
import type { OutboxRepository, WorkflowStart } from './outbox-repository';
import type { QuotaGuard } from './quota-guard';

/** A network service config as IX-API shows it: the shared properties and those of its type. */
export interface NetworkServiceConfig
  extends Omit<ConfigOrder, TypedProperty>, Partial<Pick<ConfigOrder, TypedProperty>> {
  id: string;
  state: State;
  status: StatusEntry[];
  /** Exchange LANs only. */
  ips?: string[];
  network_feature_configs: string[];
  decommission_at: string | null;
  charged_until: string | null;
  current_billing_start_date: string | null;
}

/** Where a config lives on the fabric, for the workflow that configures it. */
export interface ConfigPlacement {
  id: string;
  state: State;
  connection: string;
  connectionState: State;
  device: string;
  /** The connection's bundle, or its one port when standalone. */
  parent: string;
  tagging: Tagging;
  /** The addresses of the config's MACs that are valid now. */
  macs: string[];
  /**
   * The rate limit in Mbit/s: the least of the config's capacity, its service's and the cap of a
   * joining rule admitting its account; null when none is set.
   */
  capacity: number | null;
  /** Which change of the config this is; the workflow configures each revision once. */
  revision: number;
  /** The network service the config joins on the device. */
  segment: string;
  /** A leaf of a point-to-multipoint service: it may reach only the service's roots. */
  isolated: boolean;
}

/** What a config's workflow has to do next, as the stored config says. */
export interface ConfigAgenda extends StoredAgenda {
  connectionState: State;
  /** Required network features (route servers) the config has no session with yet. */
  missingFeatures: string[];
}

/** States a config no longer changes from. */
export const CONFIG_GOING = GOING_STATES;

export const configWorkflowId = (configId: string) => workflowIdOf('network_service_config', configId);

/** The workflow of a network service a customer ordered. */
export const serviceWorkflowId = (serviceId: string) => workflowIdOf('network_service', serviceId);

/** Config states the workflow of a customer's service waits for: an end up, or gone. */
const NEWS_FOR_THE_SERVICE: readonly State[] = ['production', 'decommissioned', 'cancelled'];

export const configProvisioningStart = (config: { id: string; managing_account: string }): WorkflowStart =>
  workflowStartOf('network_service_config', config);

/** What the device does with a config: a change of these needs the workflow. */
const onDevice = (order: ConfigOrder) =>
  JSON.stringify([
    taggingOf(order.vlan_config),
    [...order.macs].sort(),
    order.capacity,
    order.connection,
    order.role,
    order.handover,
    order.cloud_vlan,
  ]);

/** A stored config as an order: what its type does not show takes the type's absent value. */
const asOrder = (config: NetworkServiceConfig): ConfigOrder => ({
  ...absentConfigOrder(config.type),
  ...config,
});

/** The smallest of the limits that are set; null when none is. */
const smallest = (...limits: Array<number | null>): number | null => {
  const set = limits.filter((limit): limit is number => limit !== null);
  return set.length ? Math.min(...set) : null;
};

export function createNetworkServiceConfigRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
  quotas: QuotaGuard;
  /** The clock that decides days (billing starts, decommission days that have come). */
  clock: () => Date;
  /** Asks the config's route-server sessions to go with it. */
  cascade?: (configId: string, policy: CancellationPolicy, transaction: Transaction) => Promise<void>;
  /** Asks a connection to go once nothing holds it (the connection repository's `releaseWhenLeft`). */
  releaseConnection: (connectionId: string, transaction: Transaction) => Promise<void>;
}) {
  const { sequelize, events, outbox } = deps;
  const { select, run } = sqlOf(sequelize);
  const read = resourceReader<NetworkServiceConfig>(sequelize, networkServiceConfigs);

  const lifecycle = createLifecycleStore<NetworkServiceConfig>({
    sequelize,
    clock: deps.clock,
    events,
    outbox,
    table: 'network_service_configs',
    what: 'network-service-configs',
    eventPrefix: 'network_service_config',
    workflowId: configWorkflowId,
    read,
    onEnded: (id, transaction) => release(id, transaction),
    // A customer's service waits for its configs: it hears of each end that comes up or goes.
    onMoved: async (id, to, transaction) => {
      if (!NEWS_FOR_THE_SERVICE.includes(to)) return;
      const [service] = await select<{ id: string }>(
        `SELECT s.id FROM network_services s JOIN network_service_configs n ON n.network_service = s.id
         WHERE n.id = :id AND s.type <> 'exchange_lan'`,
        { id },
        transaction,
      );
      if (service)
        await outbox.enqueue(
          { workflowId: serviceWorkflowId(service.id), signal: RECONSIDER_SIGNAL },
          transaction,
        );
    },
    cascade: deps.cascade,
    // The config's connection may be left with nothing: its ports given back, the configs going.
    async afterAskedToGo(id, transaction) {
      const [config] = await select<{ connection: string }>(
        'SELECT connection FROM network_service_configs WHERE id = :id',
        { id },
        transaction,
      );
      if (config) await deps.releaseConnection(config.connection, transaction);
    },
  });
  const { lock, tell, reconsider } = lifecycle;
  const { tagsOn, allocateAddresses, replaceMacs, release } = createConfigAllocation({ sequelize });

  /**
   * Refuses MACs whose addresses another member's live config on the service uses, read with the
   * service's row locked: of two orders naming one address at once, the second sees the first.
   */
  async function requireMacsFree(
    order: ConfigOrder,
    except: string,
    transaction: Transaction,
  ): Promise<void> {
    if (!order.macs.length) return;
    await select(
      'SELECT id FROM network_services WHERE id = :id FOR UPDATE',
      { id: order.network_service },
      transaction,
    );
    const problems = macsHeldProblems(
      order.macs,
      await macsHeldByOthers(sequelize, order, except, transaction),
    );
    if (problems.length) throw new ValidationError(problems);
  }

  /**
   * Holds the service still (its row locked) and refuses what the order would take from the
   * service's other live configs: a side of a circuit, a cloud handover and provider VLAN, a device
   * another handover uses. Concurrent orders of one service pass here one after the other.
   */
  async function holdService(order: ConfigOrder, except: string, transaction: Transaction): Promise<void> {
    const [service] = await select<{
      id: string;
      consuming_account: string;
      joining_member_account: string | null;
      diversity: number | null;
    }>(
      `SELECT id, consuming_account, joining_member_account, diversity FROM network_services
       WHERE id = :id FOR UPDATE`,
      { id: order.network_service },
      transaction,
    );
    if (!service) throw new NotFoundError(`no network service ${order.network_service}`);
    if (order.type !== 'p2p_vc' && order.type !== 'cloud_vc') return;
    const others = await select<Record<string, unknown>>(
      `SELECT n.id, n.consuming_account, n.handover, n.cloud_vlan, c.device
       FROM network_service_configs n JOIN connections c ON c.id = n.connection
       WHERE n.network_service = :service AND n.id <> :except AND n.state NOT IN (:going)`,
      { service: service.id, except, going: CONFIG_GOING },
      transaction,
    );
    const [connection] = await select<{ device: string }>(
      'SELECT device FROM connections WHERE id = :id',
      { id: order.connection },
      transaction,
    );
    const siblings: SiblingConfig[] = others.map((other) => ({
      id: other.id as string,
      consuming_account: other.consuming_account as string,
      handover: numberOrNull(other.handover),
      cloud_vlan: numberOrNull(other.cloud_vlan),
      device: other.device as string,
    }));
    const clashes = siblingClashes(
      order,
      { ...service, diversity: numberOrNull(service.diversity) },
      connection?.device ?? '',
      siblings,
    );
    if (clashes.problems.length) throw new ValidationError(clashes.problems);
    if (clashes.conflicts.length)
      throw new UnableToFulfillError(
        clashes.conflicts[0]?.resource_property ?? 'connection',
        clashes.reasons.join('; '),
        clashes.conflicts,
      );
  }

  const tagColumns = (tagging: Tagging) => ({
    vlan_type: tagging.vlan_type,
    outer_vlan: tagging.outer_vlan,
    outer_vlan_ethertype: tagging.outer_vlan_ethertype,
    inner_vlan: tagging.inner_vlan,
  });

  return {
    /** What the rules need to know of an order (db/config-order-facts.ts). */
    orderFacts: (order: ConfigOrder, accounts: readonly string[], now: Date, except: string | null = null) =>
      configOrderFacts(sequelize, order, accounts, now, except),

    /**
     * Stores a new config with its tags chosen, its MACs (and, on an exchange LAN, its addresses)
     * allocated, its event and the outbox row that starts its provisioning, in one transaction.
     * The order counts against the quota of open orders of its managing account's tree.
     */
    async create(order: ConfigOrder, options: { quarantineSeconds: number }): Promise<NetworkServiceConfig> {
      const id = newId('nsc');
      return allocatingTransaction(sequelize, async (transaction) => {
        await deps.quotas.requireRoom(order.managing_account, { open_orders: 1 }, transaction);
        const tagging = await tagsOn(order.connection, taggingOf(order.vlan_config), id, transaction);
        await holdService(order, id, transaction);
        await requireMacsFree(order, id, transaction);
        await run(
          `INSERT INTO network_service_configs (id, type, state, status, managing_account, consuming_account,
             billing_account, role_assignments, external_ref, purchase_order, contract_ref, network_service,
             connection, product_offering, vlan_type, outer_vlan, outer_vlan_ethertype, inner_vlan, vlan_held,
             capacity, asns, listed, role, handover, cloud_vlan, revision, created_at, updated_at)
           VALUES (:id, :type, 'requested', '[]', :managing_account, :consuming_account, :billing_account,
             :role_assignments, :external_ref, :purchase_order, :contract_ref, :network_service, :connection,
             :product_offering, :vlan_type, :outer_vlan, :outer_vlan_ethertype, :inner_vlan, TRUE, :capacity,
             :asns, :listed, :role, :handover, :cloud_vlan, 1, NOW(3), NOW(3))`,
          {
            ...order,
            ...tagColumns(tagging),
            id,
            role_assignments: JSON.stringify(order.role_assignments),
            asns: JSON.stringify(order.asns),
          },
          transaction,
        );
        await replaceMacs(id, order.macs, transaction);
        if (order.type === 'exchange_lan')
          await allocateAddresses({ ...order, id }, options.quarantineSeconds, transaction);
        const config = (await read(id, transaction))!;
        await tell('created', { network_service_config: config }, config, transaction);
        await outbox.enqueue(configProvisioningStart(config), transaction);
        return config;
      });
    },

    findById: (id: string) => read(id),

    /**
     * Stores a change. What the device does with the config (tags, MACs, capacity, role, handover,
     * provider VLAN) takes a new revision that the workflow configures; in production the config
     * shows `production_change_pending` until then. The rest takes effect at once.
     */
    async change(id: string, next: ConfigOrder): Promise<NetworkServiceConfig> {
      return allocatingTransaction(sequelize, async (transaction) => {
        const row = await lock(id, transaction);
        const current = asOrder((await read(id, transaction))!);
        const tagging = await tagsOn(current.connection, taggingOf(next.vlan_config), id, transaction);
        // What the rules between the service's configs look at: checked with the service held.
        if (
          next.consuming_account !== current.consuming_account ||
          next.handover !== current.handover ||
          next.cloud_vlan !== current.cloud_vlan
        )
          await holdService({ ...next, connection: current.connection }, id, transaction);
        if (next.consuming_account !== current.consuming_account || onDevice(next) !== onDevice(current))
          await requireMacsFree(next, id, transaction);
        const device = onDevice(next) !== onDevice(current);
        const to = device && row.state === 'production' ? transition(row.state, 'request_change') : row.state;
        await run(
          `UPDATE network_service_configs SET managing_account = :managing_account,
             consuming_account = :consuming_account, billing_account = :billing_account,
             role_assignments = :role_assignments, external_ref = :external_ref, purchase_order = :purchase_order,
             contract_ref = :contract_ref, product_offering = :product_offering, vlan_type = :vlan_type,
             outer_vlan = :outer_vlan, outer_vlan_ethertype = :outer_vlan_ethertype, inner_vlan = :inner_vlan,
             capacity = :capacity, asns = :asns, listed = :listed, role = :role, handover = :handover,
             cloud_vlan = :cloud_vlan, state = :to,
             revision = revision + :device, updated_at = NOW(3)
           WHERE id = :id`,
          {
            ...next,
            ...tagColumns(tagging),
            id,
            to,
            device: device ? 1 : 0,
            role_assignments: JSON.stringify(next.role_assignments),
            asns: JSON.stringify(next.asns),
          },
          transaction,
        );
        await replaceMacs(id, next.macs, transaction);
        // Addresses serve the config's accounts.
        await run(
          `UPDATE ip_addresses SET managing_account = :managing_account, consuming_account = :consuming_account,
             updated_at = NOW(3) WHERE network_service_config = :id`,
          { ...next, id },
          transaction,
        );
        const config = (await read(id, transaction))!;
        await tell('changed', { network_service_config: config }, config, transaction);
        if (to !== row.state)
          await tell(
            'state_changed',
            { id, from: row.state, to, event: 'request_change' },
            config,
            transaction,
          );
        if (device) await reconsider(id, transaction);
        return config;
      });
    },

    /** The facts a cancellation policy of the config is worked out from. */
    async cancellationTerms(id: string): Promise<{ state: State; terms: CancellationTerms } | undefined> {
      const [row] = await select<{
        state: State;
        notice: string | null;
        initial: string | null;
        billing_start: string | null;
      }>(
        `SELECT n.state, COALESCE(o.contract_renewal_notice_period, o.contract_initial_notice_period) AS notice,
           o.contract_initial_period AS initial,
           DATE_FORMAT(n.current_billing_start_date, '%Y-%m-%d') AS billing_start
         FROM network_service_configs n JOIN network_services s ON s.id = n.network_service
         LEFT JOIN product_offerings o ON o.id = COALESCE(n.product_offering, s.product_offering)
         WHERE n.id = :id`,
        { id },
      );
      if (!row) return undefined;
      return {
        state: row.state,
        terms: { noticePeriod: row.notice, initialPeriod: row.initial, billingStart: row.billing_start },
      };
    },

    /**
     * Asks for the config to go (its route-server sessions with it): decommissioned on the policy's
     * day in production, cancelled while provisioning, archived once gone.
     */
    requestCancellation: lifecycle.requestCancellation,

    /**
     * Asks every live config of a service to go with it, by the service's policy, within the
     * caller's transaction; each config's route-server sessions go with it in turn.
     */
    async cascadeFromService(
      serviceId: string,
      policy: CancellationPolicy,
      transaction: Transaction,
    ): Promise<void> {
      const configs = await select<{ id: string }>(
        'SELECT id FROM network_service_configs WHERE network_service = :serviceId AND state NOT IN (:gone) ORDER BY id',
        { serviceId, gone: CONFIG_GOING },
        transaction,
      );
      for (const config of configs) {
        const row = await lock(config.id, transaction);
        await lifecycle.requestCancellationIn(config.id, row, policy, transaction);
      }
    },

    /** Moves a config along the lifecycle; decommissioned or cancelled, its tags and addresses go back. */
    applyLifecycleEvent: lifecycle.applyLifecycleEvent,
    recordStatus: lifecycle.recordStatus,

    /** What the config's workflow has to do next; undefined when the config is gone. */
    async agenda(id: string): Promise<ConfigAgenda | undefined> {
      const [row] = await select<AgendaRow & { connection_state: State }>(
        `SELECT ${agendaColumns('n')}, c.state AS connection_state
         FROM network_service_configs n JOIN connections c ON c.id = n.connection WHERE n.id = :id`,
        { id },
      );
      if (!row) return undefined;
      // Required features (route servers) without a live session of this config.
      const missing = await select<{ id: string }>(
        `SELECT f.id FROM network_features f JOIN network_service_configs n ON n.network_service = f.network_service
         WHERE n.id = :id AND f.required AND NOT EXISTS (SELECT 1 FROM network_feature_configs x
           WHERE x.network_service_config = n.id AND x.network_feature = f.id AND x.state NOT IN (:gone))
         ORDER BY f.id`,
        { id, gone: CONFIG_GOING },
      );
      return {
        ...agendaOf(row),
        connectionState: row.connection_state,
        missingFeatures: missing.map((feature) => feature.id),
      };
    },

    /** Where the config sits on the fabric and what the device is to do with it. */
    async placement(id: string): Promise<ConfigPlacement | undefined> {
      const [row] = await select<Record<string, unknown>>(
        `SELECT n.*, c.state AS connection_state, c.device, c.mode, c.lag_name,
           (SELECT p.name FROM ports p WHERE p.connection = c.id ORDER BY p.name, p.id LIMIT 1) AS port_name,
           s.capacity AS service_capacity,
           (SELECT r.capacity_max FROM member_joining_rules r WHERE r.network_service = n.network_service
             AND r.consuming_account = n.consuming_account AND r.type = 'allow') AS member_capacity_max
         FROM network_service_configs n JOIN connections c ON c.id = n.connection
         JOIN network_services s ON s.id = n.network_service WHERE n.id = :id`,
        { id },
      );
      if (!row) return undefined;
      const macs = await select<{ address: string }>(
        `SELECT m.address FROM network_service_config_macs x JOIN macs m ON m.id = x.mac
         WHERE x.network_service_config = :id AND (m.valid_not_before IS NULL OR m.valid_not_before <= NOW(3))
           AND (m.valid_not_after IS NULL OR m.valid_not_after > NOW(3))
         ORDER BY m.address`,
        { id },
      );
      const tag = (value: unknown) => (value === null ? null : Number(value));
      return {
        id,
        state: row.state as State,
        connection: row.connection as string,
        connectionState: row.connection_state as State,
        device: row.device as string,
        parent: (row.mode === 'standalone' ? row.port_name : row.lag_name) as string,
        tagging: {
          vlan_type: row.vlan_type as Tagging['vlan_type'],
          outer_vlan: tag(row.outer_vlan),
          outer_vlan_ethertype: (row.outer_vlan_ethertype as string | null) ?? null,
          inner_vlan: tag(row.inner_vlan),
        },
        macs: macs.map((m) => m.address),
        // The config's own limit, the service's bandwidth and a joining rule's cap: the least holds.
        capacity: smallest(
          numberOrNull(row.capacity),
          numberOrNull(row.service_capacity),
          numberOrNull(row.member_capacity_max),
        ),
        revision: Number(row.revision),
        segment: row.network_service as string,
        isolated: row.role === 'leaf',
      };
    },
  };
}

export type NetworkServiceConfigRepository = ReturnType<typeof createNetworkServiceConfigRepository>;
