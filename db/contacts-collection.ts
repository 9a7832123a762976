import type { CollectionDefinition } from './collection';
import { eq } from './collection';
import { storedAs } from '../domain/families';

/** Contacts of accounts (people with names, e-mail addresses and telephone numbers). */
export const contacts: CollectionDefinition = {
  ...storedAs('contact'),
  columns: ['id', 'managing_account', 'consuming_account', 'external_ref', 'name', 'email', 'telephone'],
  filters: {
    managing_account: eq('managing_account'),
    consuming_account: eq('consuming_account'),
    external_ref: eq('external_ref'),
  },
  toResource: (row) => ({ ...row }),
};

/** Which contact holds which role. */
export const roleAssignments: CollectionDefinition = {
  ...storedAs('role_assignment'),
  columns: ['id', 'role', 'contact'],
  filters: { contact: eq('contact'), role: eq('role') },
  toResource: (row) => ({ ...row }),
};
