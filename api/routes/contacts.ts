import { contacts, roleAssignments } from '../../db/contacts-collection';
import type { Contact, ContactInput, ContactRepository } from '../../db/repositories/contact-repository';
import { ownedScope, roleAssignmentScope } from '../../db/scope';
import type { Scope } from '../../domain/authority';
import { accessToOwned, requireActingAccount, requireChange } from '../../domain/authority';
import { ValidationError } from '../../domain/errors';
import type { CollectionEntry } from '../collections';
import type { OperationDefinition } from '../operations';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { deliverAll, merged, replacement } from '../writes';

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

const ABSENT: ContactInput = {
  managing_account: '',
  consuming_account: '',
  external_ref: null,
  name: null,
  email: null,
  telephone: null,
};

const writableOf = (contact: Contact): ContactInput => merged(ABSENT, contact);

function requireActingAccounts(scope: Scope, input: ContactInput) {
  requireActingAccount(scope, 'managing_account', input.managing_account);
  requireActingAccount(scope, 'consuming_account', input.consuming_account);
}

/**
 * Contact and role-assignment writes. The managing side changes a contact and its roles; the
 * consuming side sees them only. A role assignment names its contact in the body, so a contact the
 * caller may not change is a validation error of `contact`, never a hint at what exists.
 */
export function contactOperations(deps: {
  contacts: ContactRepository;
  validators: RequestValidators;
  writes: WriteContext;
}): OperationDefinition[] {
  const { validators, writes } = deps;

  function update(operationId: 'contacts_update' | 'contacts_partial_update'): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const { resource, messages } = await deps.contacts.updateContact(params.id, (current) => {
          requireChange(accessToOwned(current, scope), `contacts with id ${current.id}`);
          const next =
            operationId === 'contacts_update' ? replacement(body, ABSENT) : merged(writableOf(current), body);
          validators.body('contacts_update', next);
          requireActingAccounts(scope, next);
          return next;
        });
        await deliverAll(writes.starter, messages);
        return { status: 200, body: resource };
      },
    };
  }

  return [
    {
      operationId: 'contacts_create',
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await writes.scope(caller);
        const input = replacement(body, ABSENT);
        requireActingAccounts(scope, input);
        const { resource } = await deps.contacts.createContact(input);
        return { status: 201, body: resource };
      },
    },
    update('contacts_update'),
    update('contacts_partial_update'),
    {
      operationId: 'contacts_destroy',
      authenticated: true,
      async handle({ params, caller }) {
        const scope = await writes.scope(caller);
        const { resource, messages } = await deps.contacts.deleteContact(params.id, (current) =>
          requireChange(accessToOwned(current, scope), `contacts with id ${current.id}`),
        );
        await deliverAll(writes.starter, messages);
        return { status: 200, body: resource };
      },
    },
    {
      operationId: 'role_assignments_create',
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await writes.scope(caller);
        const input = body as { role: string; contact: string };
        const { resource, messages } = await deps.contacts.assignRole(
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
        await deliverAll(writes.starter, messages);
        return { status: 201, body: resource };
      },
    },
    {
      operationId: 'role_assignments_destroy',
      authenticated: true,
      async handle({ params, caller }) {
        const scope = await writes.scope(caller);
        const { resource, messages } = await deps.contacts.unassignRole(params.id, (contact) =>
          requireChange(accessToOwned(contact, scope), `role-assignments with id ${params.id}`),
        );
        await deliverAll(writes.starter, messages);
        return { status: 200, body: resource };
      },
    },
  ];
}
