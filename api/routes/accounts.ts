import type { AccountRepository } from '../../db/repositories/account-repository';
import { AuthenticationError } from '../../domain/errors';
import type { OperationDefinition } from '../operations';

/** GET /account: the caller's own account, shown in full (it is always in the caller's scope). */
export function accountOperations(deps: { accounts: AccountRepository }): OperationDefinition[] {
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
  ];
}
