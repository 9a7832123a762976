import { ipAddresses } from '../../db/ips-collection';
import type { IpRepository } from '../../db/repositories/ip-repository';
import { ownedScope } from '../../db/scope';
import { accessToOwned, canSee, requireActingAccount, requireChange } from '../../domain/authority';
import { NotFoundError, ValidationError } from '../../domain/errors';
import type { IpInput } from '../../domain/ip-registrations';
import { canonicalAddress, EXCHANGE_SET, ipProblems } from '../../domain/ip-registrations';
import type { CollectionEntry } from '../collections';
import type { OperationDefinition } from '../operations';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { merged, replacement } from '../writes';

/** IP addresses belong to whoever manages or consumes them. */
export const IP_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: ipAddresses,
    list: 'ips_list',
    read: 'ips_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
];

const ABSENT: IpInput = {
  managing_account: '',
  consuming_account: '',
  external_ref: null,
  version: 4,
  address: '',
  prefix_length: 32,
  fqdn: null,
  valid_not_before: null,
  valid_not_after: null,
};

/**
 * IP addresses. The exchange allocates the addresses of exchange-LAN configs; their holders may
 * set a host name (`fqdn`), a validity window and their own reference, and nothing else. Customers
 * may register addresses of their own, outside the exchange's subnets, and change them freely.
 * Updates answer 200.
 */
export function ipOperations(deps: {
  ips: IpRepository;
  validators: RequestValidators;
  writes: WriteContext;
  clock?: () => Date;
}): OperationDefinition[] {
  const { writes, validators } = deps;
  const now = () => (deps.clock ?? (() => new Date()))();

  function update(operationId: 'ips_update' | 'ips_partial_update'): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const found = await deps.ips.findById(params.id);
        const access = found ? accessToOwned(found, scope) : 'none';
        if (!found || !canSee(access)) throw new NotFoundError(`no ips with id ${params.id}`);
        requireChange(access, `ips with id ${params.id}`);
        const { id: _id, exchangeAllocated, ...current } = found;
        const next =
          operationId === 'ips_update' ? replacement(body, ABSENT) : merged(merged(ABSENT, current), body);
        validators.body('ips_update', next);
        if (exchangeAllocated) {
          const fixed = EXCHANGE_SET.filter((name) =>
            name === 'address'
              ? canonicalAddress(String(next.address)) !== current.address
              : next[name] !== current[name],
          );
          if (fixed.length)
            throw new ValidationError(
              fixed.map((name) => ({
                name,
                reason:
                  'the exchange allocated this address; only fqdn, the validity window and external_ref change',
              })),
            );
        } else {
          requireActingAccount(scope, 'managing_account', next.managing_account);
          requireActingAccount(scope, 'consuming_account', next.consuming_account);
        }
        const subnets = exchangeAllocated ? [] : await deps.ips.exchangeSubnets();
        const problems = ipProblems(next, now(), subnets);
        if (problems.length) throw new ValidationError(problems);
        return { status: 200, body: await deps.ips.update(params.id, next) };
      },
    };
  }

  return [
    {
      operationId: 'ips_create',
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await writes.scope(caller);
        const input = replacement(body, ABSENT);
        requireActingAccount(scope, 'managing_account', input.managing_account);
        requireActingAccount(scope, 'consuming_account', input.consuming_account);
        const problems = ipProblems(input, now(), await deps.ips.exchangeSubnets());
        if (problems.length) throw new ValidationError(problems);
        return { status: 201, body: await deps.ips.create(input) };
      },
    },
    update('ips_update'),
    update('ips_partial_update'),
  ];
}
