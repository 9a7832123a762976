import { macs } from '../../db/macs-collection';
import type { MacRepository, NewMac } from '../../db/repositories/mac-repository';
import { ownedScope } from '../../db/scope';
import { accessToOwned, requireActingAccount, requireChange } from '../../domain/authority';
import { ValidationError } from '../../domain/errors';
import { macProblems } from '../../domain/macs';
import type { CollectionEntry } from '../collections';
import type { OperationDefinition } from '../operations';
import type { WriteContext } from '../writes';
import { replacement } from '../writes';

/** MAC addresses belong to whoever manages or consumes them. */
export const MAC_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: macs,
    list: 'macs_list',
    read: 'macs_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
];

const ABSENT: NewMac = {
  managing_account: '',
  consuming_account: '',
  external_ref: null,
  address: '',
  valid_not_before: null,
  valid_not_after: null,
};

/**
 * MAC address registrations: created for accounts the caller acts for (unicast addresses only, a
 * validity window ending in the future), never changed (a new window means a new registration),
 * and deleted by the managing side.
 */
export function macOperations(deps: {
  macs: MacRepository;
  writes: WriteContext;
  clock?: () => Date;
}): OperationDefinition[] {
  const { writes } = deps;
  return [
    {
      operationId: 'macs_create',
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await writes.scope(caller);
        const input = replacement(body, ABSENT);
        requireActingAccount(scope, 'managing_account', input.managing_account);
        requireActingAccount(scope, 'consuming_account', input.consuming_account);
        const problems = macProblems(input, (deps.clock ?? (() => new Date()))());
        if (problems.length) throw new ValidationError(problems);
        return { status: 201, body: await deps.macs.create(input) };
      },
    },
    {
      operationId: 'macs_destroy',
      authenticated: true,
      async handle({ params, caller }) {
        const scope = await writes.scope(caller);
        const mac = await deps.macs.destroy(params.id, (current) =>
          requireChange(accessToOwned(current, scope), `macs with id ${params.id}`),
        );
        return { status: 200, body: mac };
      },
    },
  ];
}
