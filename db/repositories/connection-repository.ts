import { workflowStartOf } from '../../domain/families';
import type { Sequelize, Transaction } from 'sequelize';
import type { ConnectionMode, CrossConnectInitiator, LacpTimeout } from '../../domain/connections';
import { connectionSpeed, lagNameOf } from '../../domain/connections';
import type { CancellationPolicy } from '../../domain/cancellation';
import { cancellationPolicy, dayOf } from '../../domain/cancellation';
import type { State } from '../../domain/states';
import { ENDED_STATES, GOING_STATES, isGoing, isLive, transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import { newId } from '../../domain/ids';
import type { OrderAccountProperty } from '../../domain/order-accounts';
import type { OrderedOffering } from '../connection-order-facts';
import { connectionOrderFacts, orderedOffering } from '../connection-order-facts';
import type { EventRepository } from './event-repository';
import type { OutboxRepository, WorkflowStart } from './outbox-repository';
import type { PortAllocation } from '../allocation/ports';
import type { QuotaGuard } from './quota-guard';
import { createConnectionStore, provisioningWorkflowId } from './connection-store';
import type { LifecycleRow } from './lifecycle-store';
import { createLifecycleStore } from './lifecycle-store';
import { allocatingTransaction } from '../transactions';
import { resourceOfRow } from '../collection';
import { connections } from '../connections-collection';
import { unitOfWork } from '../unit-of-work';

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
  /** The ports the connection keeps. */
  ports: Array<{ id: string; name: string }>;
  /** Ports whose reservations end now: they leave the bundle and go back to the exchange. */
  leaving: Array<{ id: string; name: string }>;
  cross_connect_initiator: CrossConnectInitiator | null;
  subscriber_side_demarcs: string[];
}

/** The offering of an order with what allocating ports needs. */
export type { OrderedOffering } from '../connection-order-facts';

export { provisioningWorkflowId };

/** What a connection's workflow has to do next, as the stored connection says. */
export interface ConnectionAgenda {
  state: State;
  /** A cancellation was asked for while provisioning was under way. */
  cancelRequested: boolean;
  /** Whether the connection went into production once (billing started). */
  billed: boolean;
  /** The day of a requested decommission. */
  decommissionAt: string | null;
  /** The earliest day a port reservation ends that has not been carried out. */
  reservationDue: string | null;
  /** Reservations waiting for their port to join the bundle. */
  reservationsWaiting: number;
  /** Whether the subscriber uploaded a letter of authorisation (for the connection or a port). */
  loaUploaded: boolean;
}

/** The writable properties of a connection, as a change leaves them. */
export type ConnectionChange = Pick<
  NewConnection,
  | 'managing_account'
  | 'consuming_account'
  | 'billing_account'
  | 'role_assignments'
  | 'product_offering'
  | 'mode'
  | 'lacp_timeout'
  | 'external_ref'
  | 'purchase_order'
  | 'contract_ref'
>;

export const provisioningStart = (connection: { id: string; managing_account: string }): WorkflowStart =>
  workflowStartOf('connection', connection);

/** The state ports show while their connection is in a state. */
function portStateFor(state: State): State {
  if (isLive(state)) return 'production';
  if (state === 'testing') return 'testing';
  return 'allocated';
}

export function createConnectionRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
  portAllocation: PortAllocation;
  quotas: QuotaGuard;
  /** The clock that decides days (billing starts, decommission days that have come). */
  clock: () => Date;
}) {
  const { sequelize, events, outbox, portAllocation, quotas } = deps;
  const {
    select,
    tell,
    exchangeAccount,
    read,
    insertReservation,
    lock,
    termsOf,
    configsOn,
    refuseWhileCarrying,
    reconsider,
  } = createConnectionStore({ sequelize, events, outbox });
  const lifecycle = createLifecycleStore<Connection>({
    sequelize,
    clock: deps.clock,
    events,
    outbox,
    table: 'connections',
    what: 'connection',
    eventPrefix: 'connection',
    workflowId: provisioningWorkflowId,
    read,
    // The ports and reservations follow (a reservation decommissioned now went today); while a
    // change is pending, ports joining or leaving keep their own states until it is done.
    async onMoved(id, to, transaction) {
      if (to === 'production_change_pending') return;
      await sequelize.query('UPDATE ports SET state = :state, updated_at = NOW(3) WHERE connection = :id', {
        replacements: { id, state: portStateFor(to) },
        transaction,
      });
      const ending = to === 'cancelled' || to === 'decommissioned' || to === 'archived';
      await sequelize.query(
        `UPDATE port_reservations SET
           decommission_at = CASE WHEN :state = 'decommissioned' AND state <> 'decommissioned'
             THEN :today ELSE decommission_at END,
           state = :state, updated_at = NOW(3),
           current_billing_start_date = CASE WHEN :state = 'production'
             THEN COALESCE(current_billing_start_date, :today) ELSE current_billing_start_date END
         WHERE connection = :id AND (${ending ? "state <> 'archived'" : 'state NOT IN (:done)'})`,
        {
          replacements: {
            id,
            state: ending ? to : portStateFor(to),
            done: GOING_STATES,
            today: dayOf(deps.clock()),
          },
          transaction,
        },
      );
    },
    // Archived, its reservations are too; going, those still live go on the same day.
    async onGoing(id, to, policy, transaction) {
      await sequelize.query(
        to === 'archived'
          ? 'UPDATE port_reservations SET state = :to, updated_at = NOW(3) WHERE connection = :id'
          : `UPDATE port_reservations SET state = :to, decommission_at = :decommission_at,
               charged_until = :charged_until, updated_at = NOW(3)
             WHERE connection = :id AND state NOT IN (:done)`,
        // Ports given back before and not gone yet go with the connection, on its day.
        { replacements: { id, to, done: ENDED_STATES, ...policy }, transaction },
      );
    },
  });

  /**
   * Asks for the connection to go, within a transaction that locked it already (its own DELETE, or
   * the DELETE of its last port reservation): refused while configs on it are live.
   */
  async function cancelWithin(
    id: string,
    row: LifecycleRow,
    policy: CancellationPolicy,
    transaction: Transaction,
  ): Promise<void> {
    if (row.state !== 'decommissioned' && row.state !== 'cancelled')
      await refuseWhileCarrying(id, 'the connection cannot go', transaction, 'live');
    return lifecycle.requestCancellationIn(id, row, policy, transaction);
  }

  /**
   * Asks the connection to go once nothing holds it any more: every port given back (its last
   * reservation's DELETE came while configs stood on it) and no config on it live. Called when a
   * config on it is asked to go, in that transaction (READ COMMITTED: once the connection's lock is
   * held, what the reservations' and configs' writers committed shows); the connection goes on its
   * policy's first day.
   */
  async function releaseWhenLeft(id: string, transaction: Transaction): Promise<void> {
    const row = await lock(id, transaction);
    if (isGoing(row.state, row.cancel_requested_at !== null)) return;
    const [ports] = await select<{ staying: number; given: number }>(
      `SELECT COALESCE(SUM(state NOT IN (:going)), 0) AS staying, COALESCE(SUM(state = 'decommission_requested'), 0) AS given
         FROM port_reservations WHERE connection = :id`,
      { id, going: GOING_STATES },
      transaction,
    );
    if (Number(ports.staying) > 0 || Number(ports.given) === 0) return;
    if ((await configsOn(id, 'live', transaction)).length) return;
    const found = await termsOf('connection', id, transaction);
    if (!found) return;
    const { decommission_at, charged_until } = cancellationPolicy(found.terms, dayOf(deps.clock()));
    await cancelWithin(id, row, { decommission_at, charged_until }, transaction);
  }

  return {
    /** The offering an order names, when it exists (db/connection-order-facts.ts). */
    offering: (id: string) => orderedOffering(sequelize, id),

    /** What the order rules need to know of an order: its offering, role assignments and accounts. */
    orderFacts: (
      input: Pick<NewConnection, 'product_offering' | 'role_assignments' | OrderAccountProperty>,
      accounts: readonly string[],
    ) => connectionOrderFacts(sequelize, input, accounts),

    /**
     * Stores a new connection with its ports allocated, its event and the outbox row that starts
     * its provisioning, in one transaction: either all of it exists afterwards or none. Its ports
     * and the order count against the quotas of its managing account's tree.
     */
    async create(input: NewConnection, offering: OrderedOffering): Promise<Connection> {
      const id = newId('conn');
      return portAllocation.transaction(async (transaction) => {
        await quotas.requireRoom(
          input.managing_account,
          { ports: input.port_quantity, open_orders: 1 },
          transaction,
        );
        const allocated = await portAllocation.allocate(
          {
            connection: id,
            pop: offering.handover_pop,
            metroAreaNetwork: offering.handover_metro_area_network,
            devices: offering.devices,
            speed: offering.physical_port_speed,
            quantity: input.port_quantity,
            accounts: {
              managing_account: input.managing_account,
              consuming_account: input.consuming_account,
              billing_account: input.billing_account,
            },
          },
          transaction,
        );
        const name = `${allocated.pop}-${id.slice(5, 11)}`.toUpperCase().slice(0, 80);
        const speed = connectionSpeed(offering.physical_port_speed, input.port_quantity);
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
              name,
              role_assignments: JSON.stringify(input.role_assignments),
              subscriber_side_demarcs: JSON.stringify(input.subscriber_side_demarcs),
              pop: allocated.pop,
              device: allocated.device,
              lag_name: lagNameOf(id, input.mode),
              speed,
            },
            transaction,
          },
        );
        const reservations: string[] = [];
        for (const [index, port] of allocated.ports.entries())
          reservations.push(
            await insertReservation(
              {
                connection: id,
                port: port.id,
                subscriber_side_demarc: input.subscriber_side_demarcs[index] ?? null,
                connecting_party: input.connecting_party,
                external_ref: input.external_ref,
                purchase_order: input.purchase_order,
                contract_ref: input.contract_ref,
              },
              transaction,
            ),
          );
        // The connection as a read of it shows it now, from what was written.
        const connection = resourceOfRow(connections, {
          id,
          name,
          state: 'requested',
          status: [],
          managing_account: input.managing_account,
          consuming_account: input.consuming_account,
          billing_account: input.billing_account,
          role_assignments: input.role_assignments,
          external_ref: input.external_ref,
          purchase_order: input.purchase_order,
          contract_ref: input.contract_ref,
          product_offering: input.product_offering,
          pop: allocated.pop,
          mode: input.mode,
          lacp_timeout: input.lacp_timeout,
          port_quantity: input.port_quantity,
          subscriber_side_demarcs: input.subscriber_side_demarcs,
          speed,
          capacity_allocation_limit: null,
          decommission_at: null,
          charged_until: null,
          current_billing_start_date: null,
          ports: allocated.ports.map((port) => port.id).sort(),
          port_reservations: reservations.sort(),
          capacity_allocated: 0,
        }) as unknown as Connection;
        await tell(
          {
            type: 'connection.created',
            payload: { connection },
            account: connection.managing_account,
            alsoFor: connection.consuming_account,
          },
          transaction,
        );
        await outbox.enqueue(provisioningStart(connection), transaction);
        return connection;
      });
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
      const all = await select<{ id: string; name: string; leaving: number }>(
        `SELECT p.id, p.name, EXISTS (SELECT 1 FROM port_reservations r WHERE r.port = p.id
           AND r.state = 'decommission_requested' AND r.decommission_at <= :today) AS leaving
         FROM ports p WHERE p.connection = :id ORDER BY p.name, p.id`,
        { id, today: dayOf(deps.clock()) },
      );
      // A connection being decommissioned goes as a whole: none of its ports leaves on its own;
      // nor does its last port, given back while configs still stand on it (the connection goes
      // with it once they go).
      const staying = all.some((port) => !Number(port.leaving));
      const alone = (port: { leaving: number }) =>
        Boolean(Number(port.leaving)) && row.state !== 'decommission_requested' && staying;
      const ports = all.filter((port) => !alone(port)).map(({ id, name }) => ({ id, name }));
      const leaving = all.filter(alone).map(({ id, name }) => ({ id, name }));
      return {
        id,
        state: row.state as State,
        mode: row.mode as ConnectionMode,
        lacp_timeout: (row.lacp_timeout as LacpTimeout | null) ?? null,
        device: row.device as string,
        lag_name: (row.lag_name as string | null) ?? null,
        ports,
        leaving,
        cross_connect_initiator: (row.cross_connect_initiator as CrossConnectInitiator | null) ?? null,
        subscriber_side_demarcs: JSON.parse(row.subscriber_side_demarcs as string) as string[],
      };
    },

    /**
     * Moves a connection (its ports and reservations with it) along the lifecycle and records the
     * event, in one transaction. Going live the first time starts billing.
     */
    applyLifecycleEvent: lifecycle.applyLifecycleEvent,

    /** What the connection's workflow has to do next; undefined when the connection is gone. */
    async agenda(id: string): Promise<ConnectionAgenda | undefined> {
      const [row] = await select<{
        state: State;
        cancel_requested_at: Date | null;
        billed: number;
        decommission_at: string | null;
        reservation_due: string | null;
        waiting: number;
        loa_uploaded: number;
      }>(
        `SELECT state, cancel_requested_at, current_billing_start_date IS NOT NULL AS billed,
           DATE_FORMAT(decommission_at, '%Y-%m-%d') AS decommission_at,
           (SELECT DATE_FORMAT(MIN(r.decommission_at), '%Y-%m-%d') FROM port_reservations r
             WHERE r.connection = c.id AND r.state = 'decommission_requested'
               AND EXISTS (SELECT 1 FROM port_reservations k WHERE k.connection = c.id
                 AND k.state NOT IN (:going))) AS reservation_due,
           (SELECT COUNT(*) FROM port_reservations r WHERE r.connection = c.id
             AND r.state IN ('requested', 'allocated')) AS waiting,
           (c.loa IS NOT NULL OR EXISTS (SELECT 1 FROM port_reservations r
             WHERE r.connection = c.id AND r.loa IS NOT NULL)) AS loa_uploaded
         FROM connections c WHERE c.id = :id`,
        { id, going: GOING_STATES },
      );
      if (!row) return undefined;
      return {
        state: row.state,
        cancelRequested: row.cancel_requested_at !== null,
        billed: Boolean(Number(row.billed)),
        decommissionAt: row.decommission_at,
        reservationDue: row.reservation_due,
        reservationsWaiting: Number(row.waiting),
        loaUploaded: Boolean(Number(row.loa_uploaded)),
      };
    },

    /** The facts a cancellation policy of the connection is worked out from. */
    cancellationTerms: (id: string) => termsOf('connection', id),

    /** The service configs still on the connection's ports (holding a VLAN there), by id. */
    async carriedConfigs(id: string): Promise<string[]> {
      const rows = await select<{ id: string }>(
        'SELECT id FROM network_service_configs WHERE connection = :id AND vlan_held ORDER BY id',
        { id },
      );
      return rows.map((row) => row.id);
    },

    /**
     * Asks for the connection to go: a connection in production is decommissioned on the policy's
     * day; one still being provisioned is cancelled as soon as its workflow can stop; one
     * decommissioned or cancelled is archived. Asking again while it is going changes nothing.
     */
    async requestCancellation(id: string, policy: CancellationPolicy): Promise<Connection> {
      return allocatingTransaction(sequelize, async (transaction) => {
        await cancelWithin(id, await lifecycle.lock(id, transaction), policy, transaction);
        return (await read(id, transaction))!;
      });
    },

    cancelWithin,
    releaseWhenLeft,

    /**
     * Stores a change of the connection's writable properties. A change of how the ports are
     * bundled needs the device: the connection goes to `production_change_pending` and its
     * workflow reconfigures it; the rest takes effect at once.
     */
    async change(id: string, values: ConnectionChange, reconfigure: boolean): Promise<Connection> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lock(id, transaction);
        // Services sit on the bundle or on the one port: they cannot move between the two.
        if ((row.mode === 'standalone') !== (values.mode === 'standalone'))
          await refuseWhileCarrying(id, `the connection cannot become ${values.mode}`, transaction);
        const to = reconfigure ? transition(row.state, 'request_change') : row.state;
        await sequelize.query(
          `UPDATE connections SET managing_account = :managing_account, consuming_account = :consuming_account,
             billing_account = :billing_account, role_assignments = :role_assignments,
             product_offering = :product_offering, mode = :mode, lacp_timeout = :lacp_timeout,
             lag_name = :lag_name, external_ref = :external_ref, purchase_order = :purchase_order,
             contract_ref = :contract_ref, state = :to, updated_at = NOW(3) WHERE id = :id`,
          {
            replacements: {
              ...values,
              id,
              to,
              role_assignments: JSON.stringify(values.role_assignments),
              lag_name: lagNameOf(id, values.mode),
            },
            transaction,
          },
        );
        // Ports serve the connection's accounts.
        await sequelize.query(
          `UPDATE ports SET managing_account = :managing_account, consuming_account = :consuming_account,
             billing_account = :billing_account, updated_at = NOW(3) WHERE connection = :id`,
          { replacements: { ...values, id }, transaction },
        );
        const connection = (await read(id, transaction))!;
        await tell(
          {
            type: 'connection.changed',
            payload: { connection },
            account: values.managing_account,
            alsoFor: values.consuming_account,
          },
          transaction,
        );
        if (to !== row.state) {
          await tell(
            {
              type: 'connection.state_changed',
              payload: { id, from: row.state, to, event: 'request_change' },
              account: values.managing_account,
              alsoFor: values.consuming_account,
            },
            transaction,
          );
          await reconsider(id, transaction);
        }
        return connection;
      });
    },

    /**
     * Gives the connection's ports (or only those leaving it) back to the exchange; their
     * reservations end with them.
     */
    async releasePorts(id: string, only?: readonly string[]): Promise<number> {
      return portAllocation.transaction(async (transaction) => {
        await lock(id, transaction);
        const exchange = await exchangeAccount(transaction);
        if (only?.length)
          await sequelize.query(
            `UPDATE port_reservations SET state = 'decommissioned', decommission_at = :today, updated_at = NOW(3)
             WHERE connection = :id AND port IN (:only)`,
            { replacements: { id, only, today: dayOf(deps.clock()) }, transaction },
          );
        const released = await portAllocation.release(id, exchange, transaction, only);
        if (only?.length)
          await sequelize.query(
            `UPDATE connections c SET
               port_quantity = (SELECT COUNT(*) FROM ports p WHERE p.connection = c.id),
               speed = (SELECT SUM(p.speed) FROM ports p WHERE p.connection = c.id), updated_at = NOW(3)
             WHERE c.id = :id`,
            { replacements: { id }, transaction },
          );
        return released;
      });
    },

    /** The connection's stored letter of authorisation, if one was uploaded. */
    async loa(id: string): Promise<Buffer | null> {
      const [row] = await select<{ loa: Buffer | null }>('SELECT loa FROM connections WHERE id = :id', {
        id,
      });
      return row?.loa ?? null;
    },

    /** Keeps an uploaded LOA and tells the connection's workflow, which may be waiting for it. */
    async storeLoa(id: string, document: Buffer): Promise<Connection> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lock(id, transaction);
        await sequelize.query('UPDATE connections SET loa = :document, updated_at = NOW(3) WHERE id = :id', {
          replacements: { id, document },
          transaction,
        });
        await tell(
          {
            type: 'connection.loa_uploaded',
            payload: { id, bytes: document.length },
            account: row.managing_account,
            alsoFor: row.consuming_account,
          },
          transaction,
        );
        const connection = (await read(id, transaction))!;
        await reconsider(id, transaction);
        return connection;
      });
    },

    recordStatus: lifecycle.recordStatus,
  };
}

export type ConnectionRepository = ReturnType<typeof createConnectionRepository>;
