import type { Sequelize, Transaction } from 'sequelize';
import { Op } from 'sequelize';
import { missingFields } from '../../domain/contacts';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import type { ContactRow, Models } from '../models';
import {
  ROLE_ASSIGNMENT_REFERENCES,
  describeConflicts,
  findConflicts,
  forgetRoleAssignments,
} from '../references';
import { allocatingTransaction } from '../transactions';
import type { EventRepository } from './event-repository';
import { signalWaitingOnboarding } from './onboarding-signals';
import type { OutboxRepository } from './outbox-repository';
import type { QuotaGuard } from './quota-guard';
import { unitOfWork } from '../unit-of-work';

export interface Contact {
  id: string;
  managing_account: string;
  consuming_account: string;
  external_ref: string | null;
  name: string | null;
  email: string | null;
  telephone: string | null;
}

export type ContactInput = Omit<Contact, 'id'>;

export interface Role {
  id: string;
  name: string;
  required_fields: string[];
}

export interface RoleAssignment {
  id: string;
  role: string;
  contact: string;
}

/** Decides, inside the write's transaction and with the row locked, whether the caller may go on. */
export type Guard<T> = (current: T) => void | Promise<void>;

function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    managing_account: row.managingAccount,
    consuming_account: row.consumingAccount,
    external_ref: row.externalRef,
    name: row.name,
    email: row.email,
    telephone: row.telephone,
  };
}

const toAssignment = ({ id, role, contact }: RoleAssignment): RoleAssignment => ({ id, role, contact });

function toRow(input: ContactInput) {
  return {
    managingAccount: input.managing_account,
    consumingAccount: input.consuming_account,
    externalRef: input.external_ref ?? null,
    name: input.name ?? null,
    email: input.email ?? null,
    telephone: input.telephone ?? null,
  };
}

export function createContactRepository(deps: {
  sequelize: Sequelize;
  models: Models;
  events: EventRepository;
  outbox: OutboxRepository;
  quotas: QuotaGuard;
}) {
  const { sequelize, models, events, outbox, quotas } = deps;
  const accountOfEvent = (contact: Contact) => contact.managing_account;

  const nudgeOnboarding = (accountIds: readonly string[], transaction: Transaction) =>
    signalWaitingOnboarding({ models, outbox }, accountIds, transaction);

  /** Records a role assignment's creation or deletion; the contact's account may be on-boarding. */
  async function assignmentChanged(
    type: 'role_assignment.created' | 'role_assignment.deleted',
    assignment: RoleAssignment,
    contact: Contact,
    transaction: Transaction,
  ): Promise<RoleAssignment> {
    await events.append(
      { type, payload: { role_assignment: assignment }, account: accountOfEvent(contact) },
      transaction,
    );
    await nudgeOnboarding([contact.consuming_account], transaction);
    return assignment;
  }

  async function lockContact(id: string, transaction: Transaction) {
    const row = await models.Contact.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE });
    if (!row) throw new NotFoundError(`no contacts with id ${id}`);
    return row;
  }

  /** The roles a contact holds, with their required fields. */
  async function rolesOf(contactId: string, transaction?: Transaction) {
    const assignments = await models.RoleAssignment.findAll({ where: { contact: contactId }, transaction });
    const roles = await models.Role.findAll({
      where: { id: { [Op.in]: assignments.map((a) => a.get({ plain: true }).role) } },
      transaction,
    });
    const byId = new Map(roles.map((role) => [role.get({ plain: true }).id, role.get({ plain: true })]));
    return assignments.map((a) => ({
      assignment: a.get({ plain: true }).id,
      role: byId.get(a.get({ plain: true }).role)!,
    }));
  }

  return {
    async findContact(id: string): Promise<Contact | null> {
      const row = await models.Contact.findByPk(id);
      return row ? toContact(row.get({ plain: true })) : null;
    },

    async findAssignment(id: string): Promise<RoleAssignment | null> {
      const row = await models.RoleAssignment.findByPk(id);
      return row ? toAssignment(row.get({ plain: true })) : null;
    },

    /** Stores a new contact, within the quota of contacts of its managing account's tree. */
    async createContact(input: ContactInput & { id?: string }): Promise<Contact> {
      return allocatingTransaction(sequelize, async (transaction) => {
        await quotas.requireRoom(input.managing_account, { contacts: 1 }, transaction);
        const id = input.id ?? newId('con');
        const row = await models.Contact.create({ id, ...toRow(input) }, { transaction });
        const contact = toContact(row.get({ plain: true }));
        await events.append(
          { type: 'contact.created', payload: { contact }, account: accountOfEvent(contact) },
          transaction,
        );
        return contact;
      });
    },

    /**
     * Replaces a contact's properties with what `change` decides from the current contact (it also
     * checks the caller's authority, with the row locked). A field that one of the contact's roles requires cannot be
     * emptied; the on-boarding of the accounts it served is told to look again.
     */
    async updateContact(
      id: string,
      change: (current: Contact) => ContactInput | Promise<ContactInput>,
    ): Promise<Contact> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lockContact(id, transaction);
        const before = toContact(row.get({ plain: true }));
        const next = await change(before);
        const problems = (await rolesOf(id, transaction)).flatMap(({ role, assignment }) =>
          missingFields(next, role.requiredFields).map((field) => ({
            name: field,
            reason: `the contact holds the role "${role.name}" (${assignment}), which requires it`,
          })),
        );
        if (problems.length) throw new ValidationError(problems);
        await row.update(toRow(next), { transaction });
        const contact = toContact(row.get({ plain: true }));
        await events.append(
          { type: 'contact.updated', payload: { contact }, account: accountOfEvent(contact) },
          transaction,
        );
        await nudgeOnboarding([before.consuming_account, contact.consuming_account], transaction);
        return contact;
      });
    },

    /**
     * Deletes a contact and its role assignments, unless a resource still needs one of them: then
     * nothing changes and the conflicts say what is in the way.
     */
    async deleteContact(id: string, guard: Guard<Contact>): Promise<Contact> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await lockContact(id, transaction);
        const contact = toContact(row.get({ plain: true }));
        await guard(contact);
        const assignments = (await rolesOf(id, transaction)).map((entry) => entry.assignment);
        const conflicts = await findConflicts(sequelize, ROLE_ASSIGNMENT_REFERENCES, {
          resource: { type: 'contacts', id },
          targets: assignments,
          transaction,
        });
        if (conflicts.length) {
          throw new UnableToFulfillError(
            'id',
            `contact ${id} holds a role that ${describeConflicts(conflicts)} still needs`,
            conflicts,
          );
        }
        await models.RoleAssignment.destroy({ where: { contact: id }, transaction });
        await forgetRoleAssignments(sequelize, assignments, transaction);
        await row.destroy({ transaction });
        await events.append(
          {
            type: 'contact.deleted',
            payload: { contact, role_assignments: assignments },
            account: accountOfEvent(contact),
          },
          transaction,
        );
        await nudgeOnboarding([contact.consuming_account], transaction);
        return contact;
      });
    },

    /**
     * Gives a contact a role. Refused when the role does not exist, when the contact lacks a field
     * the role requires, or when the contact already holds the role.
     */
    async assignRole(
      input: { id?: string; role: string; contact: string },
      guard: Guard<Contact> = () => undefined,
    ): Promise<RoleAssignment> {
      return unitOfWork(sequelize, async (transaction) => {
        const contactRow = await models.Contact.findByPk(input.contact, {
          transaction,
          lock: transaction.LOCK.UPDATE,
        });
        if (!contactRow) {
          throw new ValidationError([{ name: 'contact', reason: `no contact with id ${input.contact}` }]);
        }
        const contact = toContact(contactRow.get({ plain: true }));
        await guard(contact);
        const role = (await models.Role.findByPk(input.role, { transaction }))?.get({ plain: true });
        if (!role) throw new ValidationError([{ name: 'role', reason: `no role with id ${input.role}` }]);
        const missing = missingFields(contact, role.requiredFields);
        if (missing.length) {
          throw new UnableToFulfillError(
            'contact',
            `the role "${role.name}" requires the contact's ${missing.join(', ')}; fill ${missing.length > 1 ? 'them' : 'it'} first`,
            missing.map((field) => ({
              resource_type: 'contacts',
              resource_id: contact.id,
              resource_property: field,
              remote_resource_type: 'roles',
              remote_resource_id: role.id,
            })),
          );
        }
        const existing = await models.RoleAssignment.findOne({
          where: { contact: contact.id, role: role.id },
          transaction,
        });
        if (existing) {
          throw new UnableToFulfillError('role', `the contact already holds the role "${role.name}"`, [
            {
              resource_type: 'contacts',
              resource_id: contact.id,
              resource_property: 'role',
              remote_resource_type: 'role-assignments',
              remote_resource_id: existing.get({ plain: true }).id,
            },
          ]);
        }
        const id = input.id ?? newId('ra');
        await models.RoleAssignment.create({ id, role: role.id, contact: contact.id }, { transaction });
        return assignmentChanged(
          'role_assignment.created',
          { id, role: role.id, contact: contact.id },
          contact,
          transaction,
        );
      });
    },

    /** Takes a role from a contact, unless a resource still needs the contact in that role. */
    async unassignRole(id: string, guard: Guard<Contact>): Promise<RoleAssignment> {
      return unitOfWork(sequelize, async (transaction) => {
        const row = await models.RoleAssignment.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE });
        if (!row) throw new NotFoundError(`no role-assignments with id ${id}`);
        const assignment = toAssignment(row.get({ plain: true }));
        const contact = toContact((await lockContact(assignment.contact, transaction)).get({ plain: true }));
        await guard(contact);
        const conflicts = await findConflicts(sequelize, ROLE_ASSIGNMENT_REFERENCES, {
          resource: { type: 'role-assignments', id },
          targets: [id],
          transaction,
        });
        if (conflicts.length) {
          throw new UnableToFulfillError(
            'id',
            `${describeConflicts(conflicts)} still needs this role assignment`,
            conflicts,
          );
        }
        await row.destroy({ transaction });
        await forgetRoleAssignments(sequelize, [id], transaction);
        return assignmentChanged('role_assignment.deleted', assignment, contact, transaction);
      });
    },

    /** Creates the contact unless one with this id exists (idempotent seeding). */
    async ensureContact(input: Contact): Promise<void> {
      await models.Contact.findOrCreate({
        where: { id: input.id },
        defaults: { id: input.id, ...toRow(input) },
      });
    },

    async ensureRoleAssignment(input: RoleAssignment): Promise<void> {
      await models.RoleAssignment.findOrCreate({ where: { id: input.id }, defaults: input });
    },

    async upsertRole(role: Role): Promise<void> {
      await models.Role.upsert({ id: role.id, name: role.name, requiredFields: role.required_fields });
    },
  };
}

export type ContactRepository = ReturnType<typeof createContactRepository>;
