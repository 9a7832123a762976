import { randomBytes } from 'node:crypto';
import type { CheckContext, CheckDefinition } from '../runner';
import { ACCOUNT_ADDRESS } from '../steps/accounts';
import { cleanUp } from '../steps/cleanup';
import { waitFor } from '../steps/waiting';
import { wholeList } from '../steps/whole-lists';

/** Creates a resource through an operation, writing it into the ledger first. */
async function create(
  t: CheckContext,
  operationId: string,
  destroy: string,
  body: Record<string, unknown>,
  marker: string,
  find?: { list: string; query: string },
): Promise<Record<string, unknown> | undefined> {
  const seq = t.suite.ledger.intend({ destroy, role: 'primary', marker, find });
  const response = await t.call(operationId, { body });
  if (
    !t.must(
      response.status === 201,
      `${operationId} answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
    )
  ) {
    return undefined;
  }
  const resource = response.body as Record<string, unknown>;
  t.suite.ledger.created(seq, String(resource.id));
  return resource;
}

/** Checks that create resources of their own (profile `full`); they clean up after themselves. */
export const LIFECYCLE_CHECKS: CheckDefinition[] = [
  {
    id: 'LIFE-001',
    title: 'An account can be created, read, changed and deleted',
    clause:
      'Accounts: POST answers 201 with the account; PATCH changes it; DELETE answers with the account and it is gone. Pagination: X-Pagination-Token changes when the collection changes.',
    operations: [
      'accounts_create',
      'accounts_read',
      'accounts_partial_update',
      'accounts_destroy',
      'accounts_list',
    ],
    safety: 'mutate',
    async run(t) {
      const marker = `conformance-${randomBytes(6).toString('hex')}`;
      const pageToken = async () =>
        (await t.call('accounts_list', { query: 'page_limit=1' })).headers['x-pagination-token'];
      try {
        const before = await pageToken();
        const account = await create(
          t,
          'accounts_create',
          'accounts_destroy',
          { name: 'Conformance account', address: ACCOUNT_ADDRESS, external_ref: marker },
          marker,
          {
            list: 'accounts_list',
            query: `external_ref=${marker}`,
          },
        );
        if (!account) return;
        const id = String(account.id);
        const after = await pageToken();
        t.must(
          before !== undefined && after !== before,
          `X-Pagination-Token of the account list stayed ${String(before)} after an account was added`,
        );
        t.must(
          ['requested', 'production', undefined].includes(account.state as string),
          `a new account is ${String(account.state)}`,
        );
        const listed = await wholeList(t, 'accounts_list', { query: `external_ref=${marker}` });
        t.must(listed.length === 1, 'the new account is not found by its external_ref');
        const patched = await t.call('accounts_partial_update', {
          id,
          body: { name: 'Conformance account, renamed' },
        });
        t.must([200, 202].includes(patched.status), `PATCH answered ${patched.status}`);
        const read = await t.call('accounts_read', { id });
        t.must(
          (read.body as { name?: string }).name === 'Conformance account, renamed',
          'the PATCH did not change the name',
        );
        const deleted = await t.call('accounts_destroy', { id });
        t.must(deleted.status === 200, `DELETE answered ${deleted.status}, not 200`);
        t.must(
          (deleted.body as { id?: string } | undefined)?.id === id,
          'DELETE did not answer with the account',
        );
        const gone = await t.call('accounts_read', { id });
        t.must(gone.status === 404, `after DELETE a read answered ${gone.status}, not 404`);
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'LIFE-002',
    title: 'A new account reaches production once a contact holds the legal role',
    clause:
      "Accounts: an account is usable in production; a legal contact is the exchange's requirement for on-boarding; role assignments refuse contacts lacking required fields. States: the states seen on the way follow the lifecycle (nothing after archived, no way back from decommissioned or cancelled).",
    operations: [
      'accounts_create',
      'contacts_create',
      'role_assignments_create',
      'roles_list',
      'role_assignments_destroy',
      'contacts_destroy',
    ],
    safety: 'mutate',
    deadlineMs: 45_000,
    async run(t) {
      const marker = `conformance-${randomBytes(6).toString('hex')}`;
      try {
        const primary = (await t.session()).accountId;
        const roles = await wholeList(t, 'roles_list');
        const legal =
          roles.find((role) => role.name === 'legal') ?? t.inconclusive('the exchange has no legal role');
        const account = await create(
          t,
          'accounts_create',
          'accounts_destroy',
          { name: 'Conformance on-boarding', address: ACCOUNT_ADDRESS, external_ref: marker },
          marker,
          {
            list: 'accounts_list',
            query: `external_ref=${marker}`,
          },
        );
        if (!account) return;
        const bare = await create(
          t,
          'contacts_create',
          'contacts_destroy',
          { managing_account: primary, consuming_account: account.id, external_ref: `${marker}-bare` },
          `${marker}-bare`,
        );
        const required = (legal.required_fields as string[] | undefined) ?? [];
        if (bare && required.length) {
          const refused = await t.call('role_assignments_create', {
            body: { contact: bare.id, role: legal.id },
          });
          t.must(
            refused.status === 400,
            `a contact lacking ${required.join(', ')} got the legal role (${refused.status})`,
          );
        }
        const contact = await create(
          t,
          'contacts_create',
          'contacts_destroy',
          {
            managing_account: primary,
            consuming_account: account.id,
            external_ref: marker,
            name: 'Conformance Legal',
            email: 'legal@conformance.example',
            telephone: '+4930123456',
          },
          marker,
        );
        if (!contact) return;
        await create(
          t,
          'role_assignments_create',
          'role_assignments_destroy',
          { contact: contact.id, role: legal.id },
          marker,
        );
        const live = await waitFor(
          t,
          'accounts_read',
          String(account.id),
          (body) => body.state === 'production',
        );
        t.must(live?.state === 'production', 'the account did not reach production');
      } finally {
        await cleanUp(t);
      }
    },
  },
];
