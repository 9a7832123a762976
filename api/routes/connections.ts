import { connections } from '../../db/connections-collection';
import type { ConnectionRepository, NewConnection } from '../../db/repositories/connection-repository';
import { ownedScope } from '../../db/scope';
import { requireActingAccount } from '../../domain/authority';
import { connectionOrderProblems } from '../../domain/connections';
import { ValidationError } from '../../domain/errors';
import type { CollectionEntry } from '../collections';
import type { OperationDefinition } from '../operations';
import type { WriteContext } from '../writes';
import { deliverAll, replacement } from '../writes';

/** Connections belong to whoever manages or consumes them. */
export const CONNECTION_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: connections,
    list: 'connections_list',
    read: 'connections_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
];

/** What an order leaves out. */
const ABSENT: NewConnection = {
  managing_account: '',
  consuming_account: '',
  billing_account: '',
  role_assignments: [],
  product_offering: '',
  mode: 'standalone',
  lacp_timeout: null,
  port_quantity: 1,
  subscriber_side_demarcs: [],
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
  connecting_party: null,
};

/**
 * Ordering a connection: the accounts must be ones the caller acts for, the order must fit its
 * offering, and ports must be free. The answer is the stored connection, `requested`, with its
 * ports reserved; provisioning goes on in its workflow.
 */
export function connectionOperations(deps: {
  connections: ConnectionRepository;
  writes: WriteContext;
}): OperationDefinition[] {
  return [
    {
      operationId: 'connections_create',
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await deps.writes.scope(caller);
        const input = replacement(body, ABSENT);
        for (const property of ['managing_account', 'consuming_account', 'billing_account'] as const)
          requireActingAccount(scope, property, input[property]);
        const offering = await deps.connections.offering(input.product_offering);
        if (!offering)
          throw new ValidationError([
            {
              name: 'product_offering',
              reason: `no product offering with id ${input.product_offering} (see GET /product-offerings?type=connection)`,
            },
          ]);
        const facts = await deps.connections.orderFacts(input, scope.accounts);
        const unknown = input.role_assignments.flatMap((id, index) =>
          facts.roles.has(id)
            ? []
            : [{ name: `role_assignments.${index}`, reason: `no role assignment ${id} of your contacts` }],
        );
        if (unknown.length) throw new ValidationError(unknown);
        const problems = connectionOrderProblems(input, offering, {
          assignedRoles: [...facts.roles.values()],
          billingAccountCanPay: facts.billingAccountCanPay,
          maxLagMembers: facts.maxLagMembers,
        });
        if (problems.length) throw new ValidationError(problems);
        const { connection, start } = await deps.connections.create(input, offering);
        await deliverAll(deps.writes.starter, [start]);
        return { status: 201, body: connection };
      },
    },
  ];
}
