import { workflowStartOf } from '../../domain/families';
import type { Sequelize, Transaction } from 'sequelize';
import type { Scope } from '../../domain/authority';
import type { HappeningOf } from '../../domain/events';
import type { CancellationPolicy, CancellationTerms } from '../../domain/cancellation';
import { UnableToFulfillError, ValidationError } from '../../domain/errors';
import type {
  ChangeRequest,
  CurrentService,
  OrderableServiceType,
  ServiceEnd,
  ServiceOrder,
} from '../../domain/network-services';
import { missingEnds, SERVICE_GOING, shapedOrder } from '../../domain/network-services';
import type { State } from '../../domain/states';
import { isLive, transition } from '../../domain/states';
import { numberOrNull, resourceReader, sqlOf } from '../collection';
import { newId } from '../../domain/ids';
import { networkServices } from '../network-services-collection';
import { serviceOffering, serviceOrderFacts } from '../service-order-facts';
import type { EventRepository } from './event-repository';
import type { AgendaRow, StoredAgenda, TermsRow } from './lifecycle-store';
import { agendaColumns, agendaOf, createLifecycleStore, termsColumns, termsOf } from './lifecycle-store';
import { configWorkflowId, serviceWorkflowId } from './network-service-config-repository';
import type { OutboxRepository, WorkflowStart } from './outbox-repository';
import type { QuotaGuard } from './quota-guard';
import { allocatingTransaction } from '../transactions';
import { ENDED_STATES, RECONSIDER_SIGNAL } from '../../domain/states';
import { unitOfWork } from '../unit-of-work';
import type { ServiceParties } from '../../domain/network-services';

/** A network service as IX-API shows it (the properties of its type). */
export type NetworkService = Record<string, unknown> & {
  id: string;
  type: string;
  state: State;
  managing_account: string;
  consuming_account: string;
};

export type { ServiceParties };

/** What a cloud service needs from its provider. */
export interface CloudOrder {
  provider: string;
  workflow: 'exchange_first' | 'provider_first';
  region: string | null;
  pop: string | null;
  key: string;
  /** Mbit/s the circuit is to carry: the capacity, else the offering's maximum. */
  bandwidth: number | null;
  /** The capacity the customer asked for; null leaves a customer's circuit as the customer bought it. */
  capacity: number | null;
  diversity: number;
  vlans: 'single' | 'multi';
  providerRef: string | null;
}

/** A config at a cloud handover: where the provider meets it. */
export interface CloudHandover {
  handover: number;
  config: string;
  device: string;
  vlan: number | null;
  cloudVlan: number | null;
}

/** What a service's workflow has to do next, as the stored service says. */
export interface ServiceAgenda extends StoredAgenda {
  type: string;
  /** What the service still waits for before production (empty: nothing). */
  missing: string[];
  /** Configs not yet gone (the service ends after them). */
  liveConfigs: number;
  changeRequested: boolean;
  cloud: CloudOrder | null;
  /** Cloud handovers whose config is in production. */
  handovers: CloudHandover[];
}

export { serviceWorkflowId };

export const serviceProvisioningStart = (service: { id: string; managing_account: string }): WorkflowStart =>
  workflowStartOf('network_service', service);

/** Contact roles the configs of customer-ordered services need. */
export const ORDERED_SERVICE_CONTACT_ROLES = ['role-noc'];

export function createNetworkServiceRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
  quotas: QuotaGuard;
  /** The clock that decides days (billing starts, decommission days that have come). */
  clock: () => Date;
  /** Asks the service's configs (and their sessions) to go with it. */
  cascade?: (serviceId: string, policy: CancellationPolicy, transaction: Transaction) => Promise<void>;
}) {
  const { sequelize, events, outbox } = deps;
  const { select, run } = sqlOf(sequelize);
  const read = resourceReader<NetworkService>(sequelize, networkServices);

  const lifecycle = createLifecycleStore<NetworkService>({
    sequelize,
    clock: deps.clock,
    events,
    outbox,
    table: 'network_services',
    what: 'network-services',
    eventPrefix: 'network_service',
    workflowId: serviceWorkflowId,
    read,
    cascade: deps.cascade,
    // Deleted before production, a service still goes on its day: a cloud circuit may be held at
    // the provider, and its configs go on their own days (clients delete those first).
    decommissionedUnfinished: true,
  });
  const { lock, reconsider } = lifecycle;

  /** Events of a service reach its owners and, for a circuit, its B side. */
  const tell = async (
    type: HappeningOf<'network_service'>,
    payload: Record<string, unknown>,
    parties: { managing_account: string; consuming_account: string; joining_member_account?: unknown },
    transaction: Transaction,
  ) => {
    const event = { type: `network_service.${type}` as const, payload };
    await events.appendFor(event, [parties.managing_account, parties.consuming_account], transaction);
    const joining = parties.joining_member_account;
    if (
      typeof joining === 'string' &&
      joining !== parties.managing_account &&
      joining !== parties.consuming_account
    )
      await events.appendFor(event, [joining, joining], transaction);
  };

  const findOffering = (id: string, transaction?: Transaction) => serviceOffering(sequelize, id, transaction);

  const orderOfRow = (row: Record<string, unknown>): ServiceOrder =>
    shapedOrder({
      type: row.type as OrderableServiceType,
      product_offering: row.product_offering as string,
      managing_account: row.managing_account as string,
      consuming_account: row.consuming_account as string,
      billing_account: (row.billing_account as string | null) ?? '',
      external_ref: (row.external_ref as string | null) ?? null,
      purchase_order: (row.purchase_order as string | null) ?? '',
      contract_ref: (row.contract_ref as string | null) ?? null,
      joining_member_account: (row.joining_member_account as string | null) ?? null,
      display_name: (row.display_name as string | null) ?? null,
      capacity: numberOrNull(row.capacity),
      public: Boolean(Number(row.public)),
      cloud_key: (row.cloud_key as string | null) ?? null,
    });

  /** Configs of a service whose capacity follows the service's: their devices apply it again. */
  async function reconfigureConfigs(serviceId: string, transaction: Transaction): Promise<void> {
    const configs = await select<{ id: string }>(
      `SELECT id FROM network_service_configs WHERE network_service = :serviceId AND state NOT IN (:going)
       ORDER BY id FOR UPDATE`,
      { serviceId, going: SERVICE_GOING },
      transaction,
    );
    if (!configs.length) return;
    await run(
      `UPDATE network_service_configs SET revision = revision + 1, updated_at = NOW(3) WHERE id IN (:ids)`,
      { ids: configs.map((c) => c.id) },
      transaction,
    );
    for (const config of configs)
      await outbox.enqueue(
        { workflowId: configWorkflowId(config.id), signal: RECONSIDER_SIGNAL },
        transaction,
      );
  }

  const storedRow = async (id: string, transaction: Transaction) =>
    (
      await select<Record<string, unknown>>(
        'SELECT * FROM network_services WHERE id = :id',
        { id },
        transaction,
      )
    )[0];

  const partiesOf = (row: Record<string, unknown>) => ({
    managing_account: row.managing_account as string,
    consuming_account: row.consuming_account as string,
    joining_member_account: row.joining_member_account,
  });

  const changeRequestOfRow = (row: Record<string, unknown>): ChangeRequest | undefined =>
    row.change_requested_at
      ? {
          product_offering: row.change_product_offering as string,
          capacity: numberOrNull(row.change_capacity),
        }
      : undefined;

  return {
    findById: (id: string) => read(id),

    /** Who the service belongs to; undefined when there is no such service. */
    async parties(id: string): Promise<ServiceParties | undefined> {
      const [row] = await select<Record<string, unknown>>(
        `SELECT id, type, state, managing_account, consuming_account, joining_member_account, public
         FROM network_services WHERE id = :id`,
        { id },
      );
      if (!row) return undefined;
      return {
        id: row.id as string,
        type: row.type as string,
        state: row.state as State,
        managing_account: row.managing_account as string,
        consuming_account: row.consuming_account as string,
        joining_member_account: (row.joining_member_account as string | null) ?? null,
        public: Boolean(Number(row.public)),
      };
    },

    /** Whether a rule of the service allows one of `accounts` to join it. */
    async allowedMember(id: string, accounts: readonly string[]): Promise<boolean> {
      if (!accounts.length) return false;
      const [row] = await select<{ id: string }>(
        `SELECT id FROM member_joining_rules WHERE network_service = :id AND type = 'allow'
           AND consuming_account IN (:accounts) LIMIT 1`,
        { id, accounts },
      );
      return Boolean(row);
    },

    /** The rules' view of an order: its offering, its B side's account, whether billing can pay. */
    orderFacts: (order: ServiceOrder, now: Date, scope: Scope) =>
      serviceOrderFacts(sequelize, order, now, scope),

    /** The stored service as an order, with its offering and state, and its open change request. */
    async current(id: string): Promise<(CurrentService & { changeRequest?: ChangeRequest }) | undefined> {
      const [row] = await select<Record<string, unknown>>('SELECT * FROM network_services WHERE id = :id', {
        id,
      });
      if (!row || row.type === 'exchange_lan') return undefined;
      return {
        order: orderOfRow(row),
        offering: await findOffering(row.product_offering as string),
        state: row.state as State,
        changeRequest: changeRequestOfRow(row),
      };
    },

    findOffering: (id: string) => findOffering(id),

    /**
     * Stores a new service with its event and the outbox row that starts its workflow; the order
     * counts against the quota of open orders of its managing account's tree.
     */
    async create(order: ServiceOrder): Promise<NetworkService> {
      const id = newId('ns');
      return allocatingTransaction(sequelize, async (transaction) => {
        await deps.quotas.requireRoom(order.managing_account, { open_orders: 1 }, transaction);
        const offering = await findOffering(order.product_offering, transaction);
        const shaped = shapedOrder(order);
        await run(
          `INSERT INTO network_services (id, type, name, display_name, product_offering, metro_area_network,
             managing_account, consuming_account, billing_account, state, status, external_ref, purchase_order,
             contract_ref, nsc_required_contact_roles, joining_member_account, capacity, public, cloud_key,
             diversity, revision, created_at, updated_at)
           VALUES (:id, :type, NULL, :display_name, :product_offering, :metro_area_network, :managing_account,
             :consuming_account, :billing_account, 'requested', '[]', :external_ref, :purchase_order,
             :contract_ref, :roles, :joining_member_account, :capacity, :public, :cloud_key, :diversity, 1,
             NOW(3), NOW(3))`,
          {
            ...shaped,
            id,
            metro_area_network: offering?.handover_metro_area_network ?? null,
            roles: JSON.stringify(ORDERED_SERVICE_CONTACT_ROLES),
            diversity: order.type === 'cloud_vc' ? (offering?.diversity ?? 1) : null,
          },
          transaction,
        );
        const service = (await read(id, transaction))!;
        await tell('created', { network_service: service }, shaped, transaction);
        await outbox.enqueue(serviceProvisioningStart(service), transaction);
        return service;
      });
    },

    /**
     * Stores a change. A new bandwidth (capacity or offering) takes a new revision the workflow
     * carries out, with the service `production_change_pending` until then, and its configs'
     * devices apply the new rate limit; an open change request is accepted by applying what it
     * asks. The rest takes effect at once.
     */
    async change(id: string, next: ServiceOrder): Promise<NetworkService> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lock(id, transaction);
        const stored = await storedRow(id, transaction);
        const current = orderOfRow(stored);
        const shaped = shapedOrder(next);
        const bandwidthChanged =
          shaped.capacity !== current.capacity || shaped.product_offering !== current.product_offering;
        const request = changeRequestOfRow(stored);
        if (request && bandwidthChanged) {
          if (request.capacity !== shaped.capacity || request.product_offering !== shaped.product_offering)
            throw new ValidationError([
              {
                name: 'capacity',
                reason: `the B side asked for ${request.capacity ?? 'the maximum'} Mbit/s on ${request.product_offering}: apply that to accept it, or reject it with DELETE /network-services/${id}/change-request`,
              },
            ]);
        }
        const to =
          bandwidthChanged && row.state === 'production'
            ? transition(row.state, 'request_change')
            : row.state;
        await run(
          `UPDATE network_services SET product_offering = :product_offering, managing_account = :managing_account,
             consuming_account = :consuming_account, billing_account = :billing_account,
             external_ref = :external_ref, purchase_order = :purchase_order, contract_ref = :contract_ref,
             display_name = :display_name, capacity = :capacity, state = :to,
             revision = revision + :bump, updated_at = NOW(3),
             change_requested_at = CASE WHEN :accepted THEN NULL ELSE change_requested_at END,
             change_product_offering = CASE WHEN :accepted THEN NULL ELSE change_product_offering END,
             change_capacity = CASE WHEN :accepted THEN NULL ELSE change_capacity END
           WHERE id = :id`,
          {
            ...shaped,
            id,
            to,
            bump: bandwidthChanged ? 1 : 0,
            accepted: request && bandwidthChanged ? 1 : 0,
          },
          transaction,
        );
        const service = (await read(id, transaction))!;
        await tell('changed', { network_service: service }, partiesOf(stored), transaction);
        if (to !== row.state)
          await tell(
            'state_changed',
            { id, from: row.state, to, event: 'request_change' },
            partiesOf(stored),
            transaction,
          );
        if (request && bandwidthChanged)
          await tell(
            'change_request_accepted',
            { id, change_request: request },
            partiesOf(stored),
            transaction,
          );
        if (bandwidthChanged) {
          await reconfigureConfigs(id, transaction);
          await reconsider(id, transaction);
        }
        return service;
      });
    },

    /** The open change request of a circuit, if any. */
    async changeRequest(id: string): Promise<ChangeRequest | undefined> {
      const [row] = await select<Record<string, unknown>>(
        'SELECT change_requested_at, change_product_offering, change_capacity FROM network_services WHERE id = :id',
        { id },
      );
      return row ? changeRequestOfRow(row) : undefined;
    },

    /**
     * Opens the B side's change request: the circuit waits in `production_change_pending` until the
     * A side applies it or either side withdraws it. Only one is open at a time.
     */
    async openChangeRequest(id: string, request: ChangeRequest): Promise<ChangeRequest> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lock(id, transaction);
        const stored = await storedRow(id, transaction);
        if (changeRequestOfRow(stored))
          throw new UnableToFulfillError('id', `${id} has an open change request; it is answered first`, [
            {
              resource_type: 'network-services',
              resource_id: id,
              resource_property: 'change_request',
              remote_resource_type: 'network-services',
              remote_resource_id: id,
            },
          ]);
        if (row.state !== 'production')
          throw new UnableToFulfillError(
            'id',
            `${id} is ${row.state}; change requests are taken in production`,
          );
        const to = transition(row.state, 'request_change');
        await run(
          `UPDATE network_services SET state = :to, change_requested_at = NOW(3),
             change_product_offering = :product_offering, change_capacity = :capacity, updated_at = NOW(3)
           WHERE id = :id`,
          { id, to, ...request },
          transaction,
        );
        await tell('change_requested', { id, change_request: request }, partiesOf(stored), transaction);
        await tell(
          'state_changed',
          { id, from: row.state, to, event: 'request_change' },
          partiesOf(stored),
          transaction,
        );
        await reconsider(id, transaction);
        return request;
      });
    },

    /** Withdraws (B side) or rejects (A side) the open change request; the circuit stays as it is. */
    async closeChangeRequest(id: string, how: 'withdrawn' | 'rejected'): Promise<ChangeRequest | undefined> {
      return unitOfWork(sequelize, async (transaction) => {
        await lock(id, transaction);
        const stored = await storedRow(id, transaction);
        const request = changeRequestOfRow(stored);
        if (!request) return undefined;
        await run(
          `UPDATE network_services SET change_requested_at = NULL, change_product_offering = NULL,
             change_capacity = NULL, updated_at = NOW(3) WHERE id = :id`,
          { id },
          transaction,
        );
        await tell(`change_request_${how}`, { id, change_request: request }, partiesOf(stored), transaction);
        await reconsider(id, transaction);
        return request;
      });
    },

    /** The facts a cancellation policy of the service is worked out from. */
    async cancellationTerms(id: string): Promise<{ state: State; terms: CancellationTerms } | undefined> {
      const [row] = await select<TermsRow & { type: string; configs_go: string | null }>(
        `SELECT s.type, ${termsColumns('s', 'o')},
           (SELECT DATE_FORMAT(MAX(n.decommission_at), '%Y-%m-%d') FROM network_service_configs n
             WHERE n.network_service = s.id AND n.state NOT IN (:ended)) AS configs_go
         FROM network_services s LEFT JOIN product_offerings o ON o.id = s.product_offering
         WHERE s.id = :id`,
        { id, ended: ENDED_STATES },
      );
      if (!row || row.type === 'exchange_lan') return undefined;
      const { state, terms } = termsOf(row);
      // It goes no earlier than the configs that are going already (it waits for them to end).
      return { state, terms: { ...terms, notBefore: row.configs_go } };
    },

    /**
     * Asks for the service to go with its configs and their sessions: decommissioned on the
     * policy's day in production, cancelled while provisioning, archived once gone.
     */
    requestCancellation: lifecycle.requestCancellation,

    applyLifecycleEvent: lifecycle.applyLifecycleEvent,
    recordStatus: lifecycle.recordStatus,

    /** Keeps the provider's name of a cloud service's circuit. */
    async recordProviderRef(id: string, providerRef: string | null): Promise<void> {
      await run(
        'UPDATE network_services SET provider_ref = :providerRef, updated_at = NOW(3) WHERE id = :id',
        {
          id,
          providerRef,
        },
      );
    },

    /** What the service's workflow has to do next; undefined when the service is gone. */
    async agenda(id: string): Promise<ServiceAgenda | undefined> {
      const [row] = await select<AgendaRow & Record<string, unknown>>(
        `SELECT ${agendaColumns('s')}, s.type, s.consuming_account, s.joining_member_account, s.diversity,
           s.capacity, s.cloud_key, s.provider_ref, s.change_requested_at, o.service_provider,
           o.service_provider_workflow, o.service_provider_region, o.service_provider_pop, o.bandwidth_max,
           o.provider_vlans
         FROM network_services s LEFT JOIN product_offerings o ON o.id = s.product_offering WHERE s.id = :id`,
        { id },
      );
      if (!row) return undefined;
      const configs = await select<Record<string, unknown>>(
        `SELECT n.id, n.state, n.consuming_account, n.handover, n.cloud_vlan, n.outer_vlan, c.device
         FROM network_service_configs n JOIN connections c ON c.id = n.connection
         WHERE n.network_service = :id ORDER BY n.id`,
        { id },
      );
      const ends: ServiceEnd[] = configs.map((config) => ({
        id: config.id as string,
        state: config.state as State,
        consuming_account: config.consuming_account as string,
        handover: numberOrNull(config.handover),
        device: (config.device as string | null) ?? null,
      }));
      const cloud: CloudOrder | null =
        row.type === 'cloud_vc'
          ? {
              provider: row.service_provider as string,
              workflow: row.service_provider_workflow as CloudOrder['workflow'],
              region: (row.service_provider_region as string | null) ?? null,
              pop: (row.service_provider_pop as string | null) ?? null,
              key: (row.cloud_key as string | null) ?? '',
              bandwidth: numberOrNull(row.capacity) ?? numberOrNull(row.bandwidth_max),
              capacity: numberOrNull(row.capacity),
              diversity: numberOrNull(row.diversity) ?? 1,
              vlans: (row.provider_vlans as CloudOrder['vlans'] | null) ?? 'single',
              providerRef: (row.provider_ref as string | null) ?? null,
            }
          : null;
      return {
        ...agendaOf(row),
        type: row.type as string,
        missing: missingEnds(
          {
            type: row.type as string,
            consuming_account: row.consuming_account as string,
            joining_member_account: (row.joining_member_account as string | null) ?? null,
            diversity: numberOrNull(row.diversity),
          },
          ends,
        ),
        liveConfigs: ends.filter((end) => !ENDED_STATES.includes(end.state)).length,
        changeRequested: row.change_requested_at !== null && row.change_requested_at !== undefined,
        cloud,
        handovers: configs
          .filter((config) => isLive(config.state as State))
          .filter((config) => config.handover !== null)
          .map((config) => ({
            handover: Number(config.handover),
            config: config.id as string,
            device: config.device as string,
            vlan: numberOrNull(config.outer_vlan),
            cloudVlan: numberOrNull(config.cloud_vlan),
          })),
      };
    },
  };
}

export type NetworkServiceRepository = ReturnType<typeof createNetworkServiceRepository>;
