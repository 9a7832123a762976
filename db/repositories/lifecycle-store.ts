import type { Sequelize, Transaction } from 'sequelize';
import type { CancellationPolicy, CancellationTerms } from '../../domain/cancellation';
import { dayOf } from '../../domain/cancellation';
import { NotFoundError } from '../../domain/errors';
import type { LifecycleHappening, LifecycleResource } from '../../domain/events';
import type { LifecycleEvent, State } from '../../domain/states';
import { allocatingTransaction } from '../transactions';
import { canTransition, GOING_STATES, RECONSIDER_SIGNAL, transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import { sqlOf } from '../collection';
import type { EventRepository } from './event-repository';
import type { OutboxRepository } from './outbox-repository';
import { unitOfWork } from '../unit-of-work';

/** The row of a stateful resource, as its lifecycle needs it. */
export interface LifecycleRow {
  state: State;
  managing_account: string;
  consuming_account: string;
  current_billing_start_date: string | null;
  cancel_requested_at: Date | null;
}

/** The stored facts every workflow on the lifecycle framing reads, with the revision it configures. */
export interface StoredAgenda {
  state: State;
  cancelRequested: boolean;
  billed: boolean;
  decommissionAt: string | null;
  revision: number;
}

/** The columns of a resource aliased `alias` that `agendaOf` turns into its agenda. */
export const agendaColumns = (alias: string) =>
  `${alias}.state, ${alias}.cancel_requested_at, ${alias}.current_billing_start_date IS NOT NULL AS billed,
   DATE_FORMAT(${alias}.decommission_at, '%Y-%m-%d') AS decommission_at, ${alias}.revision`;

export interface AgendaRow {
  state: State;
  cancel_requested_at: Date | null;
  billed: number;
  decommission_at: string | null;
  revision: number;
}

export const agendaOf = (row: AgendaRow): StoredAgenda => ({
  state: row.state,
  cancelRequested: row.cancel_requested_at !== null,
  billed: Boolean(Number(row.billed)),
  decommissionAt: row.decommission_at,
  revision: Number(row.revision),
});

/**
 * The columns a cancellation policy is worked out from, of a resource aliased `resource` and its
 * offering aliased `offering`: the notice period (the renewal one, else the initial one), the
 * minimum term and the billing start.
 */
export const termsColumns = (resource: string, offering: string) =>
  `${resource}.state, COALESCE(${offering}.contract_renewal_notice_period, ${offering}.contract_initial_notice_period) AS notice,
   ${offering}.contract_initial_period AS initial,
   DATE_FORMAT(${resource}.current_billing_start_date, '%Y-%m-%d') AS billing_start`;

export interface TermsRow {
  state: State;
  notice: string | null;
  initial: string | null;
  billing_start: string | null;
}

export const termsOf = (row: TermsRow): { state: State; terms: CancellationTerms } => ({
  state: row.state,
  terms: { noticePeriod: row.notice, initialPeriod: row.initial, billingStart: row.billing_start },
});

/**
 * The stored side of a stateful resource's lifecycle, written once for every table that holds one
 * (state, status, billing start, decommission day, cancellation mark): locking the row, moving it
 * along the one transition table with an event, recording status, and asking it to go. What is
 * particular to a kind of resource comes in as hooks.
 */
export function createLifecycleStore<R>(deps: {
  sequelize: Sequelize;
  /** The clock that decides days (billing starts, decommission days that have come). */
  clock: () => Date;
  events: EventRepository;
  outbox: OutboxRepository;
  table: string;
  /** The resource family in errors (`network-service-configs`). */
  what: string;
  /** The prefix of event types (`network_service_config`). */
  eventPrefix: LifecycleResource;
  workflowId: (id: string) => string;
  read: (id: string, transaction: Transaction) => Promise<R | undefined>;
  /** Runs when the resource is cancelled or decommissioned, in the same transaction. */
  onEnded?: (id: string, transaction: Transaction) => Promise<void>;
  /** Runs after every move along the lifecycle, in the same transaction (to tell others of it). */
  onMoved?: (id: string, to: State, transaction: Transaction) => Promise<void>;
  /**
   * Runs when asking the resource to go moves it (archived, or its decommission requested), right
   * after its row, in the same transaction: what belongs to it moves along.
   */
  onGoing?: (id: string, to: State, policy: CancellationPolicy, transaction: Transaction) => Promise<void>;
  /**
   * Runs when the resource is asked to go, in the same transaction, with the policy it goes by:
   * the resources that go with it are asked to go too.
   */
  cascade?: (id: string, policy: CancellationPolicy, transaction: Transaction) => Promise<void>;
  /**
   * Whether the resource, asked to go while still being provisioned, goes like a live one
   * (`decommission_requested`, decommissioned on its day) rather than staying in its state with
   * a cancellation mark until its workflow can stop.
   */
  decommissionedUnfinished?: boolean;
  /**
   * Runs whenever the resource is asked to go, last, in the same transaction: what it stood on may
   * be free to go now.
   */
  afterAskedToGo?: (id: string, transaction: Transaction) => Promise<void>;
}) {
  const { sequelize, events, outbox, table } = deps;
  const { select, run } = sqlOf(sequelize);

  const tell = (
    type: LifecycleHappening,
    payload: Record<string, unknown>,
    owner: { managing_account: string; consuming_account: string },
    transaction: Transaction,
  ) =>
    events.appendFor(
      { type: `${deps.eventPrefix}.${type}`, payload },
      [owner.managing_account, owner.consuming_account],
      transaction,
    );

  async function lock(id: string, transaction: Transaction): Promise<LifecycleRow> {
    const [row] = await select<LifecycleRow>(
      `SELECT state, managing_account, consuming_account, cancel_requested_at,
         DATE_FORMAT(current_billing_start_date, '%Y-%m-%d') AS current_billing_start_date
       FROM ${table} WHERE id = :id FOR UPDATE`,
      { id },
      transaction,
    );
    if (!row) throw new NotFoundError(`no ${deps.what} with id ${id}`);
    return row;
  }

  const reconsider = async (id: string, transaction: Transaction): Promise<void> => {
    await outbox.enqueue({ workflowId: deps.workflowId(id), signal: RECONSIDER_SIGNAL }, transaction);
  };

  /** Asks for the resource to go, within a transaction that locked it already. */
  async function requestCancellationIn(
    id: string,
    row: LifecycleRow,
    policy: CancellationPolicy,
    transaction: Transaction,
  ): Promise<void> {
    const stateChanged = (to: State, event: LifecycleEvent, extra: Record<string, unknown> = {}) =>
      tell('state_changed', { id, from: row.state, to, event, ...extra }, row, transaction);
    if (row.state === 'decommissioned' || row.state === 'cancelled') {
      const to = transition(row.state, 'archive');
      await run(
        `UPDATE ${table} SET state = :to, updated_at = NOW(3) WHERE id = :id`,
        { id, to },
        transaction,
      );
      if (deps.onGoing) await deps.onGoing(id, to, policy, transaction);
      await stateChanged(to, 'archive');
    } else if (
      row.state === 'production' ||
      row.state === 'production_change_pending' ||
      // In trouble after going live (a change that failed): decommissioned like any live one.
      (row.current_billing_start_date !== null && (row.state === 'error' || row.state === 'operator')) ||
      (deps.decommissionedUnfinished &&
        !row.cancel_requested_at &&
        canTransition(row.state, 'request_decommission'))
    ) {
      const to = transition(row.state, 'request_decommission');
      await run(
        `UPDATE ${table} SET state = :to, decommission_at = :decommission_at, charged_until = :charged_until,
           status = '[]', updated_at = NOW(3) WHERE id = :id`,
        { id, to, ...policy },
        transaction,
      );
      if (deps.onGoing) await deps.onGoing(id, to, policy, transaction);
      // What the decommission is charged until is the resource's business, not the event's.
      await stateChanged(to, 'request_decommission', { decommission_at: policy.decommission_at });
      await reconsider(id, transaction);
      if (deps.cascade) await deps.cascade(id, policy, transaction);
    } else if (
      row.state !== 'decommission_requested' &&
      row.state !== 'archived' &&
      !row.cancel_requested_at
    ) {
      await run(
        `UPDATE ${table} SET cancel_requested_at = NOW(3), decommission_at = :decommission_at,
           charged_until = :charged_until, status = '[]', updated_at = NOW(3) WHERE id = :id`,
        { id, ...policy },
        transaction,
      );
      await tell('cancellation_requested', { id, state: row.state }, row, transaction);
      await reconsider(id, transaction);
      if (deps.cascade) await deps.cascade(id, policy, transaction);
    }
    if (deps.afterAskedToGo) await deps.afterAskedToGo(id, transaction);
  }

  return {
    lock,
    tell,
    reconsider,
    requestCancellationIn,

    /**
     * Asks for the resource to go: in production it is decommissioned on the policy's day; still
     * being provisioned, it is cancelled as soon as its workflow can stop; decommissioned or
     * cancelled, it is archived. Asking again while it is going changes nothing.
     */
    requestCancellation: async (id: string, policy: CancellationPolicy): Promise<R> => {
      // What goes with it is judged by what committed while its locks were awaited.
      return allocatingTransaction(sequelize, async (transaction) => {
        const row = await lock(id, transaction);
        await requestCancellationIn(id, row, policy, transaction);
        return (await deps.read(id, transaction))!;
      });
    },

    /**
     * Moves the resource along the lifecycle and records the event, in one transaction. Going live
     * the first time starts billing; decommissioned, its decommission day becomes the day it went
     * (earlier when an operator brought it forward); cancelled or decommissioned, `onEnded` gives
     * back what it held.
     */
    applyLifecycleEvent: async (id: string, event: LifecycleEvent, status: StatusEntry[]): Promise<R> => {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lock(id, transaction);
        const to = transition(row.state, event);
        await run(
          `UPDATE ${table} SET state = :to, status = :status, updated_at = NOW(3),
             decommission_at = CASE WHEN :to = 'decommissioned' THEN :today ELSE decommission_at END,
             current_billing_start_date = CASE WHEN :to = 'production'
               THEN COALESCE(current_billing_start_date, :today) ELSE current_billing_start_date END
           WHERE id = :id`,
          { id, to, status: JSON.stringify(status), today: dayOf(deps.clock()) },
          transaction,
        );
        if ((to === 'decommissioned' || to === 'cancelled') && deps.onEnded)
          await deps.onEnded(id, transaction);
        if (deps.onMoved) await deps.onMoved(id, to, transaction);
        await tell('state_changed', { id, from: row.state, to, event }, row, transaction);
        return (await deps.read(id, transaction))!;
      });
    },

    /**
     * Records what the resource waits for while it is provisioned. A resource that is going (its
     * cancellation asked for, or on its way out) waits for nothing any more: a status its workflow
     * recorded in the meantime is stale and is not written over the one the request left.
     */
    recordStatus: async (id: string, status: StatusEntry[]): Promise<void> => {
      await run(
        `UPDATE ${table} SET status = :status, updated_at = NOW(3)
          WHERE id = :id AND cancel_requested_at IS NULL AND state NOT IN (:going)`,
        { id, status: JSON.stringify(status), going: GOING_STATES },
      );
    },
  };
}
