import { workflowStartOf } from '../../domain/families';
import type { Sequelize, Transaction } from 'sequelize';
import type { OnboardingFacts } from '../../domain/onboarding';
import type { LifecycleEvent, State } from '../../domain/states';
import { transition } from '../../domain/states';
import type { StatusEntry } from '../../domain/status';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import { discoverableNameKeys, LOOK_ALIKE_NAME } from '../../domain/account-names';
import { newId } from '../../domain/ids';
import type { AccountRow, Models } from '../models';
import {
  ACCOUNT_REFERENCES,
  BILLING_ACCOUNT_REFERENCES,
  ROLE_ASSIGNMENT_REFERENCES,
  describeConflicts,
  findConflicts,
  forgetRoleAssignments,
} from '../references';
import { Op, QueryTypes, UniqueConstraintError } from 'sequelize';
import type { Guard } from './contact-repository';
import type { EventRepository } from './event-repository';
import { signalWaitingOnboarding } from './onboarding-signals';
import type { OutboxRepository, WorkflowStart } from './outbox-repository';
import type { QuotaGuard } from './quota-guard';
import { allocatingTransaction } from '../transactions';
import { unitOfWork } from '../unit-of-work';

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

/** The properties of an account a client writes (everything but id, state and status). */
export type AccountInput = Omit<NewAccount, 'id' | 'is_exchange'>;

function toRow(input: NewAccount): Omit<AccountRow, 'id' | 'state'> {
  const keys = discoverableNameKeys(input.name, input.discoverable ?? false);
  return {
    nameKeyCased: keys?.cased ?? null,
    nameKeyCaseless: keys?.caseless ?? null,
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

/**
 * Runs a write of an account's row; a name that reads like another discoverable account's (the
 * unique keys of names refuse it) is refused naming `property`, without naming that account.
 */
async function withDistinctName<T>(property: 'name' | 'discoverable', write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    // The keys' indexes are named after their columns (accounts_name_key_cased, …_caseless).
    const fields = error instanceof UniqueConstraintError ? Object.keys(error.fields) : [];
    if (fields.some((field) => field.includes('name_key')))
      throw new ValidationError([{ name: property, reason: LOOK_ALIKE_NAME }]);
    throw error;
  }
}

/** The workflow that on-boards an account; its id is derived from the account id. */
export const onboardingStart = (accountId: string): WorkflowStart =>
  workflowStartOf('account', { id: accountId, managing_account: accountId });

export function createAccountRepository(deps: {
  sequelize: Sequelize;
  models: Models;
  events: EventRepository;
  outbox: OutboxRepository;
  quotas: QuotaGuard;
}) {
  const { sequelize, models, events, outbox, quotas } = deps;

  async function lockAccount(id: string, transaction: Transaction) {
    const row = await models.Account.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE });
    if (!row) throw new NotFoundError(`no accounts with id ${id}`);
    return row;
  }

  return {
    /** Those of `ids` that name no metro area network. */
    async unknownMetroAreaNetworks(ids: readonly string[]): Promise<string[]> {
      if (!ids.length) return [];
      const rows = await sequelize.query<{ id: string }>(
        'SELECT id FROM metro_area_networks WHERE id IN (:ids)',
        { replacements: { ids }, type: QueryTypes.SELECT },
      );
      const known = new Set(rows.map((row) => row.id));
      return ids.filter((id) => !known.has(id));
    },

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
      return unitOfWork(sequelize, async (transaction) => {
        const existing = await models.Account.findByPk(input.id, {
          transaction,
          lock: transaction.LOCK.UPDATE,
        });
        if (existing) return false;
        const row = await withDistinctName('name', () =>
          models.Account.create({ ...toRow(input), id: input.id, state }, { transaction }),
        );
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
     * outbox row that starts its on-boarding workflow. A managed account counts against its
     * manager's tree's quota of sub-accounts.
     */
    async create(input: NewAccount): Promise<Account> {
      return allocatingTransaction(sequelize, async (transaction) => {
        if (input.managing_account)
          await quotas.requireRoom(input.managing_account, { sub_accounts: 1 }, transaction);
        const id = input.id ?? newId('acc');
        const row = await withDistinctName('name', () =>
          models.Account.create({ ...toRow(input), id, state: 'requested' }, { transaction }),
        );
        const account = toAccount(row.get({ plain: true }));
        await events.append({ type: 'account.created', payload: { account }, account: id }, transaction);
        await outbox.enqueue(onboardingStart(id), transaction);
        return account;
      });
    },

    /**
     * Replaces an account's writable properties with what `change` decides from the current account
     * (it also checks the caller's authority, with the row locked). An account used as a billing
     * account keeps its billing information.
     */
    async update(
      id: string,
      change: (current: Account) => AccountInput | Promise<AccountInput>,
    ): Promise<Account> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lockAccount(id, transaction);
        const before = toAccount(row.get({ plain: true }));
        const next = await change(before);
        if (before.billing_information && !next.billing_information) {
          const conflicts = await findConflicts(sequelize, BILLING_ACCOUNT_REFERENCES, {
            resource: { type: 'accounts', id },
            targets: [id],
            transaction,
          });
          if (conflicts.length) {
            throw new UnableToFulfillError(
              'billing_information',
              `${describeConflicts(conflicts)} bill to this account, so it keeps its billing information`,
              conflicts,
            );
          }
        }
        const { isExchange: _kept, status: _status, ...writable } = toRow(next);
        await withDistinctName(next.name === before.name ? 'discoverable' : 'name', () =>
          row.update(writable, { transaction }),
        );
        const account = toAccount(row.get({ plain: true }));
        await events.append({ type: 'account.updated', payload: { account }, account: id }, transaction);
        await signalWaitingOnboarding(deps, [id], transaction);
        return account;
      });
    },

    /**
     * Deletes an account with its contacts, their role assignments and its API keys, unless
     * something else still refers to it (a managed account, a contact it manages for another
     * account, a resource that needs one of its contacts): then nothing changes and the conflicts
     * name what is in the way.
     */
    async remove(id: string, guard: Guard<Account & { is_exchange: boolean }>): Promise<Account> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lockAccount(id, transaction);
        const account = toAccount(row.get({ plain: true }));
        await guard({ ...account, is_exchange: row.get({ plain: true }).isExchange });
        const contacts = (
          await models.Contact.findAll({ attributes: ['id'], where: { consumingAccount: id }, transaction })
        ).map((contact) => contact.get({ plain: true }).id);
        const assignments = (
          await models.RoleAssignment.findAll({
            attributes: ['id'],
            where: { contact: { [Op.in]: contacts } },
            transaction,
          })
        ).map((assignment) => assignment.get({ plain: true }).id);
        const conflicts = [
          ...(await findConflicts(sequelize, ACCOUNT_REFERENCES, {
            resource: { type: 'accounts', id },
            targets: [id],
            transaction,
          })),
          ...(await findConflicts(sequelize, ROLE_ASSIGNMENT_REFERENCES, {
            resource: { type: 'accounts', id },
            targets: assignments,
            leaving: [id],
            transaction,
          })),
        ];
        if (conflicts.length) {
          throw new UnableToFulfillError(
            'id',
            `account ${id} is still in use by ${describeConflicts(conflicts)}`,
            conflicts,
          );
        }
        // Queued while the row still says whether on-boarding waits; the workflow then finds it gone.
        await signalWaitingOnboarding(deps, [id], transaction);
        await models.RoleAssignment.destroy({ where: { id: { [Op.in]: assignments } }, transaction });
        await forgetRoleAssignments(sequelize, assignments, transaction);
        await models.Contact.destroy({ where: { id: { [Op.in]: contacts } }, transaction });
        await models.RefreshToken.destroy({ where: { accountId: id }, transaction });
        await models.ApiKey.destroy({ where: { accountId: id }, transaction });
        await row.destroy({ transaction });
        await events.append(
          {
            type: 'account.deleted',
            payload: { account, contacts, role_assignments: assignments },
            account: id,
          },
          transaction,
        );
        return account;
      });
    },

    /** Moves an account along the lifecycle table and records the event, atomically. */
    async applyLifecycleEvent(id: string, event: LifecycleEvent, status: StatusEntry[]): Promise<Account> {
      return unitOfWork(sequelize, async (transaction) => {
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

    /** Records what on-boarding still waits for; an account deleted meanwhile is left alone. */
    async recordStatus(id: string, status: StatusEntry[]): Promise<void> {
      const row = await models.Account.findByPk(id);
      await row?.update({ status });
    },

    /** What on-boarding needs to know about an account, read in one query per table; null once it is gone. */
    async onboardingFacts(id: string): Promise<OnboardingFacts | null> {
      const account = await models.Account.findByPk(id, { attributes: ['id', 'address'] });
      if (!account) return null;
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
