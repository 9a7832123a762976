import type { Models } from '../models';
import { newId } from '../ids';

export interface Contact {
  id: string;
  managing_account: string;
  consuming_account: string;
  external_ref: string | null;
  name: string | null;
  email: string | null;
  telephone: string | null;
}

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

export function createContactRepository({ models }: { models: Models }) {
  return {
    async createContact(input: Omit<Contact, 'id'> & { id?: string }): Promise<Contact> {
      const id = input.id ?? newId('con');
      await models.Contact.create({
        id,
        managingAccount: input.managing_account,
        consumingAccount: input.consuming_account,
        externalRef: input.external_ref,
        name: input.name,
        email: input.email,
        telephone: input.telephone,
      });
      return { ...input, id };
    },

    /** Creates the contact unless one with this id exists (idempotent seeding). */
    async ensureContact(input: Contact): Promise<void> {
      await models.Contact.findOrCreate({
        where: { id: input.id },
        defaults: {
          id: input.id,
          managingAccount: input.managing_account,
          consumingAccount: input.consuming_account,
          externalRef: input.external_ref,
          name: input.name,
          email: input.email,
          telephone: input.telephone,
        },
      });
    },

    async ensureRoleAssignment(input: RoleAssignment): Promise<void> {
      await models.RoleAssignment.findOrCreate({ where: { id: input.id }, defaults: input });
    },

    async upsertRole(role: Role): Promise<void> {
      await models.Role.upsert({ id: role.id, name: role.name, requiredFields: role.required_fields });
    },

    async assignRole(input: { id?: string; role: string; contact: string }): Promise<RoleAssignment> {
      const id = input.id ?? newId('ra');
      await models.RoleAssignment.create({ id, role: input.role, contact: input.contact });
      return { id, role: input.role, contact: input.contact };
    },
  };
}

export type ContactRepository = ReturnType<typeof createContactRepository>;
