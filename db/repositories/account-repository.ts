import type { Sequelize, Transaction } from 'sequelize';
import type { OnboardingFacts } from '../../domain/onboarding';
import type { LifecycleEvent, State } from '../../domain/states';
import { transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import { NotFoundError } from '../../domain/errors';
import { newId } from '../ids';
import type { AccountRow, Models } from '../models';
import type { EventRepository } from './event-repository';
import type { OutboxRepository, PendingStart, WorkflowStart } from './outbox-repository';

export interface Address {
  country: string;
  locality: string;
  postal_code: string;
  street_address: string;
  post_office_box_number?: string | null;
  region?: string | null;
}

export interface BillingInformation {
  name: string;
  address: Address;
  vat_number?: string | null;
}

/** An account as IX-API shows it (before redaction). */
export interface Account {
  id: string;
  name: string;
  legal_name: string | null;
  address: Address | null;
  billing_information: BillingInformation | null;
  discoverable: boolean;
  external_ref: string | null;
  managing_account: string | null;
  metro_area_network_presence: string[];
  state: State;
  status: StatusEntry[];
}

export interface NewAccount {
  id?: string;
  name: string;
  legal_name?: string | null;
  address: Address;
  billing_information?: BillingInformation | null;
  discoverable?: boolean;
  external_ref?: string | null;
  managing_account?: string | null;
  metro_area_network_presence?: string[];
  /** The exchange's own account (the operator of the catalogue). */
  is_exchange?: boolean;
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    legal_name: row.legalName,
    address: row.address as Address | null,
    billing_information: row.billingInformation as BillingInformation | null,
    discoverable: row.discoverable,
    external_ref: row.externalRef,
    managing_account: row.managingAccount,
    metro_area_network_presence: row.metroAreaNetworkPresence,
    state: row.state as State,
    status: row.status as StatusEntry[],
  };
}

function toRow(input: NewAccount): Omit<AccountRow, 'id' | 'state'> {
  return {
    name: input.name,
    legalName: input.legal_name ?? null,
    address: input.address as unknown as Record<string, unknown>,
    billingInformation: (input.billing_information ?? null) as Record<string, unknown> | null,
    discoverable: input.discoverable ?? false,
    externalRef: input.external_ref ?? null,
    managingAccount: input.managing_account ?? null,
    metroAreaNetworkPresence: input.metro_area_network_presence ?? [],
    status: [],
    isExchange: input.is_exchange ?? false,
  };
}

/** The workflow that on-boards an account; its id is derived from the account id. */
export function onboardingStart(accountId: string): WorkflowStart {
  return {
    workflowType: 'onboardAccount',
    workflowId: `ixapi:account:${accountId}`,
    args: [{ accountId }],
    searchAttributes: { IxapiResourceType: 'account', IxapiResourceId: accountId, IxapiAccount: accountId },
  };
}

export function createAccountRepository(deps: {
  sequelize: Sequelize;
  models: Models;
  events: EventRepository;
  outbox: OutboxRepository;
}) {
  const { sequelize, models, events, outbox } = deps;

  async function lockAccount(id: string, transaction: Transaction) {
    const row = await models.Account.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE });
    if (!row) throw new NotFoundError(`account ${id} does not exist`);
    return row;
  }

  return {
    async findById(id: string): Promise<Account | null> {
      const row = await models.Account.findByPk(id);
      return row ? toAccount(row.get({ plain: true })) : null;
    },

    /**
     * Inserts an account that the exchange already knows to be on-boarded (the demo data, accounts
     * brought over from another system) in the given state, without an on-boarding workflow.
     * Does nothing when an account with that id exists.
     */
    async importAccount(input: NewAccount & { id: string }, state: State = 'production'): Promise<boolean> {
      return sequelize.transaction(async (transaction) => {
        const existing = await models.Account.findByPk(input.id, {
          transaction,
          lock: transaction.LOCK.UPDATE,
        });
        if (existing) return false;
        const row = await models.Account.create({ ...toRow(input), id: input.id, state }, { transaction });
        const account = toAccount(row.get({ plain: true }));
        await events.append(
          { type: 'account.imported', payload: { account }, account: input.id },
          transaction,
        );
        return true;
      });
    },

    /**
     * Creates an account in state `requested` and, in the same transaction, the event and the
     * outbox row that starts its on-boarding workflow.
     */
    async create(input: NewAccount): Promise<{ account: Account; start: PendingStart }> {
      return sequelize.transaction(async (transaction) => {
        const id = input.id ?? newId('acc');
        const row = await models.Account.create({ ...toRow(input), id, state: 'requested' }, { transaction });
        const account = toAccount(row.get({ plain: true }));
        await events.append({ type: 'account.created', payload: { account }, account: id }, transaction);
        const start = await outbox.enqueue(onboardingStart(id), transaction);
        return { account, start };
      });
    },

    /** Moves an account along the lifecycle table and records the event, atomically. */
    async applyLifecycleEvent(id: string, event: LifecycleEvent, status: StatusEntry[]): Promise<Account> {
      return sequelize.transaction(async (transaction) => {
        const row = await lockAccount(id, transaction);
        const from = row.get('state') as State;
        const to = transition(from, event);
        await row.update({ state: to, status }, { transaction });
        await events.append(
          { type: 'account.state_changed', payload: { id, from, to, event }, account: id },
          transaction,
        );
        return toAccount(row.get({ plain: true }));
      });
    },

    async recordStatus(id: string, status: StatusEntry[]): Promise<void> {
      await sequelize.transaction(async (transaction) => {
        const row = await lockAccount(id, transaction);
        await row.update({ status }, { transaction });
      });
    },

    /** What on-boarding needs to know about an account, read in one query per table. */
    async onboardingFacts(id: string): Promise<OnboardingFacts> {
      const account = await models.Account.findByPk(id, { attributes: ['id', 'address'] });
      if (!account) throw new NotFoundError(`account ${id} does not exist`);
      const [rows] = await sequelize.query(
        `SELECT DISTINCT r.name AS role_name
           FROM contacts c
           JOIN role_assignments ra ON ra.contact = c.id
           JOIN roles r ON r.id = ra.role
          WHERE c.consuming_account = :id`,
        { replacements: { id } },
      );
      return {
        accountId: id,
        hasAddress: account.get('address') !== null,
        assignedRoleNames: (rows as Array<{ role_name: string }>).map((r) => r.role_name),
      };
    },
  };
}

export type AccountRepository = ReturnType<typeof createAccountRepository>;
