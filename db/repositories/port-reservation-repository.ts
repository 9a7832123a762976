import type { Sequelize, Transaction } from 'sequelize';
import type { CancellationPolicy } from '../../domain/cancellation';
import { UnableToFulfillError } from '../../domain/errors';
import type { State } from '../../domain/states';
import { GOING_STATES, isGoing, isLive, transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import type { ConnectionRepository } from './connection-repository';
import type { EventRepository } from './event-repository';
import type { OutboxRepository } from './outbox-repository';
import type { PortAllocation } from '../allocation/ports';
import type { QuotaGuard } from './quota-guard';
import { createConnectionStore } from './connection-store';
import { allocatingTransaction } from '../transactions';
import { unitOfWork } from '../unit-of-work';

/** What a new port reservation names. */
export type NewReservation = {
  connection: string;
  subscriber_side_demarc: string | null;
  connecting_party: string | null;
  cross_connect_id: string | null;
  external_ref: string | null;
  purchase_order: string;
  contract_ref: string | null;
};

/** The writable properties of a port reservation. */
export type ReservationChange = Omit<NewReservation, 'connection'>;

/** A port reservation as IX-API shows it. */
export interface PortReservation extends NewReservation {
  id: string;
  state: State;
  status: StatusEntry[];
  port: string | null;
  exchange_side_demarc: string | null;
  decommission_at: string | null;
  charged_until: string | null;
  current_billing_start_date: string | null;
}

/**
 * Port reservations: a port added to a connection's bundle in production, its cross-connect
 * details, its LOA, and giving it back. The connection's workflow carries each out on the device.
 */
export function createPortReservationRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
  portAllocation: PortAllocation;
  quotas: QuotaGuard;
  /** Asks for a connection to go, within a transaction that locked it (the connection repository's). */
  cancelConnection: ConnectionRepository['cancelWithin'];
}) {
  const { sequelize, events, outbox, portAllocation, quotas, cancelConnection } = deps;
  const {
    select,
    tell,
    insertReservation,
    readReservation,
    lock,
    lockReservation,
    termsOf,
    configsOn,
    reconsider,
  } = createConnectionStore({ sequelize, events, outbox });

  /** The last port's DELETE asks its connection to go; a refusal (configs live on it) names the connection too. */
  async function takeConnection(
    id: string,
    connection: string,
    row: Parameters<typeof cancelConnection>[1],
    policy: CancellationPolicy,
    transaction: Transaction,
  ): Promise<void> {
    try {
      await cancelConnection(connection, row, policy, transaction);
    } catch (error) {
      if (!(error instanceof UnableToFulfillError)) throw error;
      throw new UnableToFulfillError(
        'id',
        `this is the last port of connection ${connection}, which would go with it, but ${error.message}`,
        [
          {
            resource_type: 'port-reservations',
            resource_id: id,
            resource_property: 'connection',
            remote_resource_type: 'connections',
            remote_resource_id: connection,
          },
          ...error.conflicts,
        ],
      );
    }
  }

  /** Whether no other port of the connection stays: each other reservation is going or gone. */
  async function isLast(id: string, connection: string, transaction?: Transaction): Promise<boolean> {
    const [staying] = await select<{ n: number }>(
      `SELECT COUNT(*) AS n FROM port_reservations
        WHERE connection = :connection AND id <> :id AND state NOT IN (:going)`,
      { connection, id, going: GOING_STATES },
      transaction,
    );
    return Number(staying.n) === 0;
  }

  return {
    /** A port reservation as IX-API shows it. */
    async findById(id: string): Promise<PortReservation | undefined> {
      return readReservation(id);
    },

    /**
     * Adds a port to a bundle in production: a spare port on the bundle's device is reserved in
     * the same transaction as the reservation, and the connection's workflow brings it into the
     * bundle (`production_change_pending` until it is in). The port and the order count against
     * the quotas of the connection's managing account's tree, checked before the connection is
     * locked (every order takes the tree's lock first).
     */
    async reserve(input: NewReservation, speed: number): Promise<PortReservation> {
      return portAllocation.transaction(async (transaction) => {
        const [owner] = await select<{ managing_account: string }>(
          'SELECT managing_account FROM connections WHERE id = :id',
          { id: input.connection },
          transaction,
        );
        if (owner)
          await quotas.requireRoom(owner.managing_account, { ports: 1, open_orders: 1 }, transaction);
        const row = await lock(input.connection, transaction);
        const to = transition(row.state, 'request_change');
        const allocated = await portAllocation.allocate(
          {
            connection: input.connection,
            pop: row.pop,
            metroAreaNetwork: '',
            device: row.device,
            speed,
            quantity: 1,
            accounts: {
              managing_account: row.managing_account,
              consuming_account: row.consuming_account,
              billing_account: row.billing_account,
            },
          },
          transaction,
        );
        const reservationId = await insertReservation({ ...input, port: allocated.ports[0].id }, transaction);
        await sequelize.query(
          `UPDATE connections SET state = :to, port_quantity = port_quantity + 1, speed = speed + :speed,
             updated_at = NOW(3) WHERE id = :id`,
          { replacements: { id: input.connection, to, speed }, transaction },
        );
        const reservation = (await readReservation(reservationId, transaction))!;
        await tell(
          {
            type: 'port_reservation.created',
            payload: { reservation },
            account: row.managing_account,
            alsoFor: row.consuming_account,
          },
          transaction,
        );
        await tell(
          {
            type: 'connection.state_changed',
            payload: { id: input.connection, from: row.state, to, event: 'request_change' },
            account: row.managing_account,
            alsoFor: row.consuming_account,
          },
          transaction,
        );
        await reconsider(input.connection, transaction);
        return reservation;
      });
    },

    /** Changes a reservation's cross-connect details and references; nothing on the device changes. */
    async change(id: string, values: ReservationChange): Promise<PortReservation> {
      return unitOfWork(sequelize, async (transaction) => {
        const { row } = await lockReservation(id, transaction);
        await sequelize.query(
          `UPDATE port_reservations SET subscriber_side_demarc = :subscriber_side_demarc,
             connecting_party = :connecting_party, cross_connect_id = :cross_connect_id,
             external_ref = :external_ref, purchase_order = :purchase_order, contract_ref = :contract_ref,
             updated_at = NOW(3) WHERE id = :id`,
          { replacements: { ...values, id }, transaction },
        );
        const reservation = (await readReservation(id, transaction))!;
        await tell(
          {
            type: 'port_reservation.changed',
            payload: { reservation },
            account: row.managing_account,
            alsoFor: row.consuming_account,
          },
          transaction,
        );
        return reservation;
      });
    },

    /**
     * Ends a reservation: its port leaves the bundle on the policy's day (the connection's workflow
     * takes it out and gives it back). One already gone is archived; one going stays as it is. The
     * last port of a connection takes the connection along, on the day `whole` gives (the
     * connection's policy): clients that tear a configuration down in dependency order give back
     * the ports before the connection, and send no DELETE for the connection itself.
     */
    async end(
      id: string,
      policy: CancellationPolicy,
      whole: (connection: string) => Promise<CancellationPolicy>,
    ): Promise<PortReservation> {
      // Whether configs stand on the connection is judged by what committed while its lock was awaited.
      return allocatingTransaction(sequelize, async (transaction) => {
        const { reservation, row } = await lockReservation(id, transaction);
        const moveTo = async (to: State, extra = '', by: CancellationPolicy = policy) => {
          await sequelize.query(
            `UPDATE port_reservations SET state = :to${extra}, updated_at = NOW(3) WHERE id = :id`,
            { replacements: { id, to, ...by }, transaction },
          );
          await tell(
            {
              type: 'port_reservation.state_changed',
              payload: { id, from: reservation.state, to, decommission_at: by.decommission_at },
              account: row.managing_account,
              alsoFor: row.consuming_account,
            },
            transaction,
          );
        };
        if (reservation.state === 'decommissioned' || reservation.state === 'cancelled') {
          await moveTo(transition(reservation.state, 'archive'));
        } else if (isGoing(row.state, row.cancel_requested_at !== null)) {
          // The connection is going: its reservations go with it, on its day.
        } else if (isGoing(reservation.state, false)) {
          // Going already, on its own day.
        } else if (await isLast(id, reservation.connection, transaction)) {
          const policyOfConnection = await whole(reservation.connection);
          if (
            reservation.state === 'production' &&
            isLive(row.state) &&
            (await configsOn(reservation.connection, 'live', transaction)).length
          )
            // Configs still stand on it (a client deleting a whole configuration deletes them at
            // the same time): the port is given back now, and stays until the connection goes with
            // it, once the last of them is going (`releaseWhenLeft`).
            await moveTo(
              transition('production', 'request_decommission'),
              ', decommission_at = :decommission_at, charged_until = :charged_until',
              policyOfConnection,
            );
          else await takeConnection(id, reservation.connection, row, policyOfConnection, transaction);
        } else if (reservation.state === 'production') {
          if (row.state !== 'production')
            throw new UnableToFulfillError(
              'id',
              `the connection is ${row.state}; its ports can be given back once it is in production`,
            );
          await moveTo(
            transition('production', 'request_decommission'),
            ', decommission_at = :decommission_at, charged_until = :charged_until',
          );
          await reconsider(reservation.connection, transaction);
        } else {
          throw new UnableToFulfillError(
            'id',
            `the reservation is ${reservation.state}; it can be given back once its port is in production`,
          );
        }
        return (await readReservation(id, transaction))!;
      });
    },

    /**
     * The facts a reservation's cancellation policy is worked out from (its connection's offering);
     * the last port of a connection goes by the connection's policy, since it takes the connection.
     */
    async cancellationTerms(id: string) {
      const [found] = await select<{ connection: string }>(
        'SELECT connection FROM port_reservations WHERE id = :id',
        { id },
      );
      if (!found) return undefined;
      return (await isLast(id, found.connection))
        ? termsOf('connection', found.connection)
        : termsOf('reservation', id);
    },

    async loa(id: string): Promise<Buffer | null> {
      const [row] = await select<{ loa: Buffer | null }>('SELECT loa FROM port_reservations WHERE id = :id', {
        id,
      });
      return row?.loa ?? null;
    },

    async storeLoa(id: string, document: Buffer): Promise<PortReservation> {
      return unitOfWork(sequelize, async (transaction) => {
        const { reservation, row } = await lockReservation(id, transaction);
        await sequelize.query(
          'UPDATE port_reservations SET loa = :document, updated_at = NOW(3) WHERE id = :id',
          {
            replacements: { id, document },
            transaction,
          },
        );
        await tell(
          {
            type: 'port_reservation.loa_uploaded',
            payload: { id, bytes: document.length },
            account: row.managing_account,
            alsoFor: row.consuming_account,
          },
          transaction,
        );
        const stored = (await readReservation(id, transaction))!;
        await reconsider(reservation.connection, transaction);
        return stored;
      });
    },
  };
}

export type PortReservationRepository = ReturnType<typeof createPortReservationRepository>;
