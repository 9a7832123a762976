import { workflowIdOf } from '../../domain/families';
import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { CancellationTerms } from '../../domain/cancellation';
import type { ConnectionMode } from '../../domain/connections';
import { NotFoundError, UnableToFulfillError } from '../../domain/errors';
import type { State } from '../../domain/states';
import { RECONSIDER_SIGNAL } from '../../domain/states';
import { readResource } from '../collection';
import { liveRow } from '../references';
import { connections } from '../connections-collection';
import { portReservations } from '../port-reservations-collection';
import { newId } from '../../domain/ids';
import type { EventRepository, NewEvent } from './event-repository';
import type { OutboxRepository } from './outbox-repository';
import type { PortReservation } from './port-reservation-repository';
import type { Connection } from './connection-repository';

/** The id of a connection's workflow. */
export const provisioningWorkflowId = (connectionId: string) => workflowIdOf('connection', connectionId);

/**
 * What the connection and port-reservation repositories share: the connection's row lock, its
 * reservations' rows, the facts cancellation policies are worked out from, and telling the
 * connection's workflow. Both repositories are built over one of these.
 */
export function createConnectionStore(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  outbox: OutboxRepository;
}) {
  const { sequelize, events, outbox } = deps;
  const select = <T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) => sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });

  /** Files an event with the managing account, and with the consuming one when that is another. */
  const tell = (event: NewEvent & { account: string; alsoFor: string }, transaction: Transaction) =>
    events.appendFor(
      { type: event.type, payload: event.payload },
      [event.account, event.alsoFor],
      transaction,
    );

  /** The exchange's own account, which holds the spare ports. */
  async function exchangeAccount(transaction: Transaction): Promise<string> {
    const [row] = await select<{ id: string }>(
      'SELECT id FROM accounts WHERE is_exchange = 1 ORDER BY id LIMIT 1',
      {},
      transaction,
    );
    if (!row)
      throw new UnableToFulfillError(
        'product_offering',
        'this exchange has no account of its own to hold ports',
      );
    return row.id;
  }

  /** A connection as IX-API shows it, read the way the collection reads it. */
  async function read(id: string, transaction?: Transaction): Promise<Connection | undefined> {
    const resource = await readResource(sequelize, connections, id, undefined, transaction);
    return (resource ?? undefined) as Connection | undefined;
  }

  /** A port reservation for a port just allocated to a connection, `requested` like its order. */
  async function insertReservation(
    reservation: {
      connection: string;
      port: string;
      subscriber_side_demarc: string | null;
      connecting_party: string | null;
      external_ref: string | null;
      purchase_order: string;
      contract_ref: string | null;
      cross_connect_id?: string | null;
    },
    transaction: Transaction,
  ): Promise<string> {
    const reservationId = newId('pres');
    // The exchange-side demarc names the port on its device, read in the same statement.
    await sequelize.query(
      `INSERT INTO port_reservations (id, state, status, connection, port, subscriber_side_demarc,
         exchange_side_demarc, connecting_party, cross_connect_id, external_ref, purchase_order, contract_ref,
         created_at, updated_at)
       VALUES (:id, 'requested', '[]', :connection, :port, :subscriber_side_demarc,
         (SELECT CONCAT(p.device, ' ', p.name) FROM ports p WHERE p.id = :port),
         :connecting_party, :cross_connect_id, :external_ref, :purchase_order, :contract_ref, NOW(3), NOW(3))`,
      {
        replacements: {
          cross_connect_id: null,
          ...reservation,
          id: reservationId,
        },
        transaction,
      },
    );
    return reservationId;
  }

  async function readReservation(
    id: string,
    transaction?: Transaction,
  ): Promise<PortReservation | undefined> {
    const resource = await readResource(sequelize, portReservations, id, undefined, transaction);
    return (resource ?? undefined) as PortReservation | undefined;
  }

  /** The connection's row, locked for the rest of the transaction. */
  async function lock(id: string, transaction: Transaction) {
    const [row] = await select<{
      state: State;
      managing_account: string;
      consuming_account: string;
      billing_account: string;
      current_billing_start_date: string | null;
      cancel_requested_at: Date | null;
      device: string;
      pop: string;
      mode: ConnectionMode;
    }>(
      `SELECT state, managing_account, consuming_account, billing_account, device, pop, mode, cancel_requested_at,
         DATE_FORMAT(current_billing_start_date, '%Y-%m-%d') AS current_billing_start_date
       FROM connections WHERE id = :id FOR UPDATE`,
      { id },
      transaction,
    );
    if (!row) throw new NotFoundError(`no connection ${id}`);
    return row;
  }

  /** A reservation and its connection's row, both locked for the rest of the transaction. */
  async function lockReservation(id: string, transaction: Transaction) {
    const [reservation] = await select<{ connection: string; state: State }>(
      'SELECT connection, state FROM port_reservations WHERE id = :id FOR UPDATE',
      { id },
      transaction,
    );
    if (!reservation) throw new NotFoundError(`no port-reservations with id ${id}`);
    return { reservation, row: await lock(reservation.connection, transaction) };
  }

  /**
   * The facts a cancellation policy is worked out from: the offering's notice and minimum term,
   * and when billing of the connection (or of the one reservation) started.
   */
  async function termsOf(
    kind: 'connection' | 'reservation',
    id: string,
    transaction?: Transaction,
  ): Promise<{ state: State; terms: CancellationTerms } | undefined> {
    const subject = kind === 'connection' ? 'c' : 'r';
    const [row] = await select<{
      state: State;
      notice: string | null;
      initial: string | null;
      billing_start: string | null;
      configs_go: string | null;
    }>(
      `SELECT ${subject}.state, COALESCE(o.contract_renewal_notice_period, o.contract_initial_notice_period) AS notice,
         o.contract_initial_period AS initial,
         DATE_FORMAT(${subject}.current_billing_start_date, '%Y-%m-%d') AS billing_start,
         (SELECT DATE_FORMAT(MAX(n.decommission_at), '%Y-%m-%d') FROM network_service_configs n
           WHERE n.connection = c.id AND n.vlan_held) AS configs_go
       FROM ${kind === 'connection' ? 'connections c' : 'port_reservations r JOIN connections c ON c.id = r.connection'}
       LEFT JOIN product_offerings o ON o.id = c.product_offering WHERE ${subject}.id = :id`,
      { id },
      transaction,
    );
    if (!row) return undefined;
    return {
      state: row.state,
      terms: {
        noticePeriod: row.notice,
        initialPeriod: row.initial,
        billingStart: row.billing_start,
        // The connection goes no earlier than the configs on it, which are going already (a live
        // one keeps it from going at all).
        notBefore: kind === 'connection' ? row.configs_go : null,
      },
    };
  }

  /** The configs on the connection that hold a VLAN on it (`held`), or only those of them that are live. */
  const configsOn = (id: string, which: 'live' | 'held', transaction: Transaction) =>
    select<{ id: string }>(
      `SELECT n.id FROM network_service_configs n WHERE n.connection = :id AND n.vlan_held
         ${which === 'live' ? `AND ${liveRow('n')}` : ''} ORDER BY n.id`,
      { id },
      transaction,
    );

  /**
   * Refuses what would take the connection's ports or bundle from under service configs, naming
   * each config in the way: to go, the connection waits for its live configs to be asked to go
   * first (it then goes no earlier than they do); a change of how the ports are bundled waits for
   * every config on it to be gone.
   */
  async function refuseWhileCarrying(
    id: string,
    what: string,
    transaction: Transaction,
    which: 'live' | 'held' = 'held',
  ) {
    const configs = await configsOn(id, which, transaction);
    if (configs.length)
      throw new UnableToFulfillError(
        which === 'live' ? 'id' : 'mode',
        which === 'live'
          ? `${what} while ${configs.map((config) => config.id).join(', ')} ${configs.length > 1 ? 'are' : 'is'} live on it; decommission ${configs.length > 1 ? 'those' : 'it'} first (DELETE /network-service-configs/{id}), then the connection goes no earlier than they do`
          : `${what} while it carries ${configs.map((config) => config.id).join(', ')}; decommission those first`,
        configs.map((config) => ({
          resource_type: 'connections',
          resource_id: id,
          resource_property: null,
          remote_resource_type: 'network-service-configs',
          remote_resource_id: config.id,
        })),
      );
  }

  /** Tells the connection's workflow to look at what is asked of it, once the transaction commits. */
  const reconsider = async (id: string, transaction: Transaction): Promise<void> => {
    await outbox.enqueue({ workflowId: provisioningWorkflowId(id), signal: RECONSIDER_SIGNAL }, transaction);
  };

  return {
    select,
    tell,
    exchangeAccount,
    read,
    insertReservation,
    readReservation,
    lock,
    lockReservation,
    termsOf,
    configsOn,
    refuseWhileCarrying,
    reconsider,
  };
}

export type ConnectionStore = ReturnType<typeof createConnectionStore>;
