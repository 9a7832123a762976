import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type {
  ConnectionMode,
  ConnectionOffering,
  CrossConnectInitiator,
  LacpTimeout,
} from '../../domain/connections';
import { NotFoundError, UnableToFulfillError } from '../../domain/errors';
import type { LifecycleEvent, State } from '../../domain/states';
import { transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import { readResource } from '../collection';
import { connections } from '../connections-collection';
import { newId } from '../ids';
import type { EventRepository } from './event-repository';
import type { OutboxRepository, PendingStart, WorkflowStart } from './outbox-repository';
import type { PortAllocation } from './port-allocation';

/** What an order names; the rest of a connection is decided by the exchange. */
export type NewConnection = {
  managing_account: string;
  consuming_account: string;
  billing_account: string;
  role_assignments: string[];
  product_offering: string;
  mode: ConnectionMode;
  lacp_timeout: LacpTimeout | null;
  port_quantity: number;
  subscriber_side_demarcs: string[];
  external_ref: string | null;
  purchase_order: string;
  contract_ref: string | null;
  connecting_party: string | null;
};

/** A connection as IX-API shows it (the order's `connecting_party` is the exchange's to keep). */
export interface Connection extends Omit<NewConnection, 'connecting_party'> {
  id: string;
  name: string;
  state: State;
  status: StatusEntry[];
  pop: string;
  ports: string[];
  port_reservations: string[];
  speed: number | null;
  capacity_allocated: number;
  capacity_allocation_limit: number | null;
  vlan_types: string[];
  outer_vlan_ethertypes: string[];
  decommission_at: string | null;
  charged_until: string | null;
  current_billing_start_date: string | null;
}

/** Where a connection lives on the fabric, for the workflow that configures it. */
export interface ConnectionPlacement {
  id: string;
  state: State;
  mode: ConnectionMode;
  lacp_timeout: LacpTimeout | null;
  device: string;
  lag_name: string | null;
  ports: Array<{ id: string; name: string }>;
  cross_connect_initiator: CrossConnectInitiator | null;
  subscriber_side_demarcs: string[];
}

/** The offering of an order with what allocating ports needs. */
export interface OrderedOffering extends ConnectionOffering {
  physical_port_speed: number;
  handover_pop: string | null;
  handover_metro_area_network: string;
}

export const provisioningWorkflowId = (connectionId: string) => `ixapi:connection:${connectionId}`;

export function provisioningStart(connection: { id: string; managing_account: string }): WorkflowStart {
  return {
    workflowType: 'provisionConnection',
    workflowId: provisioningWorkflowId(connection.id),
    args: [{ connectionId: connection.id }],
    searchAttributes: {
      IxapiResourceType: 'connection',
      IxapiResourceId: connection.id,
      IxapiAccount: connection.managing_account,
    },
  };
}

/** The state ports show while their connection is in a state. */
function portStateFor(state: State): State {
  if (state === 'production' || state === 'production_change_pending') return 'production';
  if (state === 'testing') return 'testing';
  return 'allocated';
}

export function createConnectionRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
  portAllocation: PortAllocation;
}) {
  const { sequelize, events, outbox, portAllocation } = deps;
  const select = <T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) => sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });

  /** The exchange's own account, which holds the spare ports. */
  async function exchangeAccount(transaction: Transaction): Promise<string> {
    const [row] = await select<{ id: string }>(
      'SELECT id FROM accounts WHERE is_exchange = 1 ORDER BY id LIMIT 1',
      {},
      transaction,
    );
    if (!row) throw new UnableToFulfillError('this exchange has no account of its own to hold ports');
    return row.id;
  }

  /** A connection as IX-API shows it, read the way the collection reads it. */
  async function read(id: string, transaction?: Transaction): Promise<Connection | undefined> {
    const resource = await readResource(sequelize, connections, id, undefined, transaction);
    return (resource ?? undefined) as Connection | undefined;
  }

  return {
    /** The offering an order names, when it exists, with the facts the order rules need. */
    async offering(id: string): Promise<OrderedOffering | undefined> {
      const [row] = await select<Record<string, unknown>>('SELECT * FROM product_offerings WHERE id = :id', {
        id,
      });
      if (!row) return undefined;
      return {
        id: row.id as string,
        type: row.type as string,
        cross_connect_initiator: (row.cross_connect_initiator as CrossConnectInitiator | null) ?? null,
        maximum_port_quantity: row.maximum_port_quantity === null ? null : Number(row.maximum_port_quantity),
        required_contact_roles: row.required_contact_roles
          ? (JSON.parse(row.required_contact_roles as string) as string[])
          : [],
        physical_port_speed: Number(row.physical_port_speed),
        handover_pop: (row.handover_pop as string | null) ?? null,
        handover_metro_area_network: row.handover_metro_area_network as string,
      };
    },

    /**
     * What the order rules need to know about an order's role assignments and billing account:
     * the roles given by the assignments the caller's accounts hold (others count as unknown).
     */
    async orderFacts(
      input: Pick<NewConnection, 'role_assignments' | 'billing_account'>,
      accounts: readonly string[],
    ): Promise<{ roles: Map<string, string>; billingAccountCanPay: boolean; maxLagMembers: number }> {
      const assignments = input.role_assignments.length
        ? await select<{ id: string; role: string }>(
            `SELECT ra.id, ra.role FROM role_assignments ra JOIN contacts c ON c.id = ra.contact
             WHERE ra.id IN (:ids) AND (c.managing_account IN (:accounts) OR c.consuming_account IN (:accounts))`,
            { ids: input.role_assignments, accounts: accounts.length ? accounts : [''] },
          )
        : [];
      const [billing] = await select<{ pays: number }>(
        'SELECT billing_information IS NOT NULL AS pays FROM accounts WHERE id = :id',
        { id: input.billing_account },
      );
      const [lag] = await select<{ max_lag: number | null }>(
        'SELECT MIN(max_lag) AS max_lag FROM devices',
        {},
      );
      return {
        roles: new Map(assignments.map((a) => [a.id, a.role])),
        billingAccountCanPay: Boolean(Number(billing?.pays ?? 0)),
        maxLagMembers: Number(lag?.max_lag ?? 8),
      };
    },

    /**
     * Stores a new connection with its ports allocated, its event and the outbox row that starts
     * its provisioning, in one transaction: either all of it exists afterwards or none.
     */
    async create(
      input: NewConnection,
      offering: OrderedOffering,
    ): Promise<{ connection: Connection; start: PendingStart }> {
      const id = newId('conn');
      const created = await portAllocation.transaction(async (transaction) => {
        const allocated = await portAllocation.allocate(
          {
            connection: id,
            pop: offering.handover_pop,
            metroAreaNetwork: offering.handover_metro_area_network,
            speed: offering.physical_port_speed,
            quantity: input.port_quantity,
            exchange: await exchangeAccount(transaction),
            accounts: {
              managing_account: input.managing_account,
              consuming_account: input.consuming_account,
              billing_account: input.billing_account,
            },
          },
          transaction,
        );
        await sequelize.query(
          `INSERT INTO connections (id, name, state, status, managing_account, consuming_account, billing_account,
             role_assignments, external_ref, purchase_order, contract_ref, product_offering, pop, device, lag_name,
             mode, lacp_timeout, port_quantity, subscriber_side_demarcs, connecting_party, speed,
             capacity_allocation_limit, created_at, updated_at)
           VALUES (:id, :name, 'requested', '[]', :managing_account, :consuming_account, :billing_account,
             :role_assignments, :external_ref, :purchase_order, :contract_ref, :product_offering, :pop, :device,
             :lag_name, :mode, :lacp_timeout, :port_quantity, :subscriber_side_demarcs, :connecting_party, :speed,
             NULL, NOW(3), NOW(3))`,
          {
            replacements: {
              ...input,
              id,
              name: `${allocated.pop}-${id.slice(5, 11)}`.toUpperCase().slice(0, 80),
              role_assignments: JSON.stringify(input.role_assignments),
              subscriber_side_demarcs: JSON.stringify(input.subscriber_side_demarcs),
              pop: allocated.pop,
              device: allocated.device,
              lag_name: input.mode === 'standalone' ? null : `ae-${id}`,
              speed: offering.physical_port_speed * input.port_quantity,
            },
            transaction,
          },
        );
        const connection = (await read(id, transaction))!;
        await events.append(
          { type: 'connection.created', payload: { connection }, account: connection.managing_account },
          transaction,
        );
        const start = await outbox.enqueue(provisioningStart(connection), transaction);
        return { connection, start };
      });
      return created;
    },

    async findById(id: string): Promise<Connection | undefined> {
      return read(id);
    },

    /** Where the connection's ports sit and how they are to be bundled. */
    async placement(id: string): Promise<ConnectionPlacement | undefined> {
      const [row] = await select<Record<string, unknown>>(
        `SELECT t.*, o.cross_connect_initiator FROM connections t
         LEFT JOIN product_offerings o ON o.id = t.product_offering WHERE t.id = :id`,
        { id },
      );
      if (!row) return undefined;
      const ports = await select<{ id: string; name: string }>(
        'SELECT id, name FROM ports WHERE connection = :id ORDER BY name, id',
        { id },
      );
      return {
        id,
        state: row.state as State,
        mode: row.mode as ConnectionMode,
        lacp_timeout: (row.lacp_timeout as LacpTimeout | null) ?? null,
        device: row.device as string,
        lag_name: (row.lag_name as string | null) ?? null,
        ports,
        cross_connect_initiator: (row.cross_connect_initiator as CrossConnectInitiator | null) ?? null,
        subscriber_side_demarcs: JSON.parse(row.subscriber_side_demarcs as string) as string[],
      };
    },

    /** Moves a connection (and its ports) along the lifecycle and records the event, in one transaction. */
    async applyLifecycleEvent(id: string, event: LifecycleEvent, status: StatusEntry[]): Promise<Connection> {
      return sequelize.transaction(async (transaction) => {
        const [row] = await select<{ state: State; managing_account: string }>(
          'SELECT state, managing_account FROM connections WHERE id = :id FOR UPDATE',
          { id },
          transaction,
        );
        if (!row) throw new NotFoundError(`no connection ${id}`);
        const from = row.state;
        const to = transition(from, event);
        await sequelize.query(
          'UPDATE connections SET state = :to, status = :status, updated_at = NOW(3) WHERE id = :id',
          { replacements: { id, to, status: JSON.stringify(status) }, transaction },
        );
        await sequelize.query('UPDATE ports SET state = :state, updated_at = NOW(3) WHERE connection = :id', {
          replacements: { id, state: portStateFor(to) },
          transaction,
        });
        await events.append(
          {
            type: 'connection.state_changed',
            payload: { id, from, to, event },
            account: row.managing_account,
          },
          transaction,
        );
        return (await read(id, transaction))!;
      });
    },

    async recordStatus(id: string, status: StatusEntry[]): Promise<void> {
      await sequelize.query('UPDATE connections SET status = :status, updated_at = NOW(3) WHERE id = :id', {
        replacements: { id, status: JSON.stringify(status) },
      });
    },
  };
}

export type ConnectionRepository = ReturnType<typeof createConnectionRepository>;
