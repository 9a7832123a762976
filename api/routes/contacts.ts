import { contacts, roleAssignments } from '../../db/contacts-collection';
import type { Contact, ContactInput } from '../../db/repositories/contact-repository';
import { ownedScope, roleAssignmentScope } from '../../db/scope';
import { accessToOwned, requireChange } from '../../domain/authority';
import { ValidationError } from '../../domain/errors';
import type { CollectionEntry } from '../collections';
import type { ResourceFamily } from '../families';
import { generatedWrites } from '../family-writes';
import { FAMILIES } from '../../domain/families';

/** Contacts are visible to the accounts that manage or consume them and to those acting for them. */
export const CONTACT_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: contacts,
    list: 'contacts_list',
    read: 'contacts_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
  {
    collection: roleAssignments,
    list: 'role_assignments_list',
    read: 'role_assignments_read',
    scope: (visibility) => (_value, params) => roleAssignmentScope(params.bind(visibility.accounts)),
  },
];

/**
 * Contacts and their role assignments, owned: the managing side changes a contact and its roles;
 * the consuming side sees them only. A role assignment names its contact in the body, so a contact
 * the caller may not change is a validation error of `contact`, never a hint at what exists.
 */
export const contactsFamily: ResourceFamily = {
  name: FAMILIES.contact.collection,
  collections: () => CONTACT_COLLECTIONS,
  asynchronous: false,
  operations(deps) {
    const { contacts } = deps.db;
    const { writes } = deps;
    return {
      handlers: [
        ...generatedWrites<ContactInput, [Contact]>(this, deps, {
          access: (scope, contact) => accessToOwned(contact, scope),
          references: ['managing_account', 'consuming_account'],
          create: async (input) => ({ resource: await contacts.createContact(input) }),
          change: async (id, decide) => ({
            resource: await contacts.updateContact(id, (current) => decide(current)),
          }),
          destroy: async (id, allow) => ({ resource: await contacts.deleteContact(id, allow) }),
        }),
        {
          operationId: 'role_assignments_create',
          authenticated: true,
          async handle({ body, caller }) {
            const scope = await writes.scope(caller);
            const input = body as { role: string; contact: string };
            const assignment = await contacts.assignRole(
              { role: input.role, contact: input.contact },
              (contact) => {
                const access = accessToOwned(contact, scope);
                if (access === 'change') return;
                throw new ValidationError([
                  {
                    name: 'contact',
                    reason:
                      access === 'none'
                        ? `no contact with id ${input.contact}`
                        : 'you may see this contact but not change its roles; its managing account can',
                  },
                ]);
              },
            );
            return { status: 201, body: assignment };
          },
        },
        {
          operationId: 'role_assignments_destroy',
          authenticated: true,
          async handle({ params, caller }) {
            const scope = await writes.scope(caller);
            const assignment = await contacts.unassignRole(params.id, (contact) =>
              requireChange(accessToOwned(contact, scope), `role-assignments with id ${params.id}`),
            );
            return { status: 200, body: assignment };
          },
        },
      ],
    };
  },
};
