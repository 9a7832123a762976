import type { Sequelize } from 'sequelize';
import { accounts, accountsSeenWhole } from '../../db/accounts-collection';
import type { Account, AccountInput, AccountRepository } from '../../db/repositories/account-repository';
import { accountsActingFor } from '../../db/visibility';
import { accountScope } from '../../db/scope';
import {
  accessToAccount,
  requireActingAccount,
  requireChange,
  requireManagerChange,
} from '../../domain/authority';
import { countryProblems } from '../../domain/countries';
import { AuthenticationError, PermissionDeniedError, ValidationError } from '../../domain/errors';
import type { RedactionPlan } from '../../domain/redaction';
import { redact } from '../../domain/redaction';
import type { OpenApiDocument } from '../../spec';
import type { CollectionEntry } from '../collections';
import type { ResourceFamily } from '../families';
import { writableDefaults } from '../families';
import type { OperationDefinition } from '../operations';
import { redactionPlanFor } from '../redaction-plans';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { merged, replacement } from '../writes';
import { FAMILIES } from '../../domain/families';

/** What anybody may see of a discoverable account outside their scope. */
export const DISCOVERABLE_VIEW = ['id', 'name', 'metro_area_network_presence'];

/**
 * Accounts as a collection: the caller sees the accounts it acts for in full and discoverable
 * accounts in their public form; every other account does not exist for it.
 */
export function accountsCollection(plan: RedactionPlan): CollectionEntry {
  return {
    collection: accounts,
    list: 'accounts_list',
    read: 'accounts_read',
    scope: (visibility) => (_value, params) => accountScope(params.bind(visibility.accounts)),
    present: (item, visibility) =>
      visibility.accounts.includes(item.id as string)
        ? item
        : redact(item, { ...plan, only: DISCOVERABLE_VIEW }),
    fullView: (visibility) => (_value, params) => accountsSeenWhole(params.bind(visibility.accounts)),
  };
}

/**
 * Account writes and `GET /account`. The caller changes the accounts it acts for; a discoverable
 * account it does not act for is forbidden, any other is not found. Creating an account starts its
 * on-boarding (through the outbox); changes tell a waiting on-boarding to look again.
 */
function accountOperations(deps: {
  accounts: AccountRepository;
  sequelize: Sequelize;
  validators: RequestValidators;
  writes: WriteContext;
  document: OpenApiDocument;
}): OperationDefinition[] {
  const { validators, writes } = deps;
  /** The writable properties of an account, as a PUT that leaves them out sets them. */
  const ABSENT = writableDefaults<Required<AccountInput>>(deps.document, 'accounts_create');
  const writableOf = (account: Account): Required<AccountInput> =>
    merged<Required<AccountInput>>(ABSENT, account);

  /** What the document cannot say about an account: real countries, existing metro area networks. */
  async function requireValidInput(input: AccountInput) {
    const problems = countryProblems({
      address: input.address,
      'billing_information.address': input.billing_information?.address,
    });
    if (problems.length) throw new ValidationError(problems);
    const presence = input.metro_area_network_presence;
    const unknown = await deps.accounts.unknownMetroAreaNetworks(presence ?? []);
    if (unknown.length) {
      throw new ValidationError(
        unknown.map((id) => ({
          name: `metro_area_network_presence.${(presence ?? []).indexOf(id)}`,
          reason: `no metro area network with id ${id} (see GET /metro-area-networks)`,
        })),
      );
    }
  }

  function update(operationId: 'accounts_update' | 'accounts_partial_update'): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const account = await deps.accounts.update(params.id, async (current) => {
          requireChange(accessToAccount(current, scope), `accounts with id ${current.id}`);
          let next: Required<AccountInput>;
          if (operationId === 'accounts_update') {
            // A PUT that leaves out the (sensitive) managing account keeps it.
            next = replacement(body, { ...ABSENT, managing_account: current.managing_account });
          } else {
            next = merged(writableOf(current), body);
            validators.body('accounts_update', next);
          }
          await requireManagerChange(current, next.managing_account, scope, () =>
            accountsActingFor(deps.sequelize, current.id),
          );
          await requireValidInput(next);
          return next;
        });
        return { status: 202, body: account };
      },
    };
  }

  return [
    {
      operationId: 'account_read',
      authenticated: true,
      async handle({ caller }) {
        const account = caller ? await deps.accounts.findById(caller.accountId) : null;
        // A token whose account is gone is no longer a valid credential.
        if (!account) throw new AuthenticationError('the account of this token no longer exists');
        return { status: 200, body: account };
      },
    },
    {
      operationId: 'accounts_create',
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await writes.scope(caller);
        const input = replacement(body, { ...ABSENT, managing_account: scope.accountId });
        requireActingAccount(scope, 'managing_account', input.managing_account);
        await requireValidInput(input);
        const account = await deps.accounts.create(input);
        return { status: 201, body: account };
      },
    },
    update('accounts_update'),
    update('accounts_partial_update'),
    {
      operationId: 'accounts_destroy',
      authenticated: true,
      async handle({ params, caller }) {
        const scope = await writes.scope(caller);
        const account = await deps.accounts.remove(params.id, (current) => {
          requireChange(accessToAccount(current, scope), `accounts with id ${current.id}`);
          if (current.id === scope.accountId) {
            throw new PermissionDeniedError('you cannot delete the account you are signed in as');
          }
          if (current.is_exchange) throw new PermissionDeniedError("the exchange's own account stays");
        });
        return { status: 200, body: account };
      },
    },
  ];
}

/**
 * Accounts: the caller changes the accounts it acts for (`accessToAccount`). A change answers 202
 * (IX-API: it may start the account's on-boarding again); a delete removes the account at once.
 */
export const accountsFamily: ResourceFamily = {
  name: FAMILIES.account.collection,
  collections: (document) => [accountsCollection(redactionPlanFor(document, 'Account'))],
  asynchronous: false,
  changeStatus: 202,
  operations: ({ db, validators, writes, document }) => ({
    handlers: accountOperations({
      accounts: db.accounts,
      sequelize: db.sequelize,
      validators,
      writes,
      document,
    }),
  }),
};
