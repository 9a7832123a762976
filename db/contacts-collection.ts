import type { CollectionDefinition } from './collection';
import { eq } from './collection';

/** Contacts of accounts (people with names, e-mail addresses and telephone numbers). */
export const contacts: CollectionDefinition = {
  name: 'contacts',
  table: 'contacts',
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
  name: 'role-assignments',
  table: 'role_assignments',
  columns: ['id', 'role', 'contact'],
  filters: { contact: eq('contact'), role: eq('role') },
  toResource: (row) => ({ ...row }),
};
