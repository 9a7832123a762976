import { connections } from '../../db/connections-collection';
import { requireOrderAccountsActedFor } from '../../domain/order-accounts';
import type {
  Connection,
  ConnectionChange,
  ConnectionRepository,
  NewConnection,
} from '../../db/repositories/connection-repository';
import { ownedScope } from '../../db/scope';
import type { Scope } from '../../domain/authority';
import { accessToOwned, canSee, requireChange } from '../../domain/authority';
import { unknownAssignments } from '../../domain/contacts';
import { connectionOrderProblems, effectiveLacpTimeout } from '../../domain/connections';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import { GOING_STATES } from '../../domain/states';
import { cancellationPolicies } from '../cancellation';
import type { OpenApiDocument } from '../../spec';
import type { CollectionEntry } from '../collections';
import type { FamilyOperations, ResourceFamily } from '../families';
import { writableDefaults } from '../families';
import { renderLoa } from '../loa-document';
import { cancellationOperations, loaOperations } from '../lifecycle-operations';
import type { OperationDefinition } from '../operations';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { merged, replacement } from '../writes';
import { FAMILIES } from '../../domain/families';

/** Connections belong to whoever manages or consumes them. */
export const CONNECTION_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: connections,
    list: 'connections_list',
    read: 'connections_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
];

/**
 * Connection orders, changes and cancellations. The managing side orders, changes and cancels; the
 * consuming side sees. A change of the bundle (mode, LACP timeout) is carried out by the
 * connection's workflow (`production_change_pending`); the rest takes effect at once. A DELETE
 * decommissions a connection in production on the day its cancellation policy allows, cancels one
 * still being provisioned, and archives one that is gone.
 */
function connectionOperations(deps: {
  connections: ConnectionRepository;
  validators: RequestValidators;
  writes: WriteContext;
  document: OpenApiDocument;
  clock?: () => Date;
}): FamilyOperations {
  const { validators, writes } = deps;
  /** What an order leaves out. */
  const ABSENT = writableDefaults<NewConnection>(deps.document, 'connections_create');
  /** What a change leaves out (PUT replaces these; PATCH keeps what it does not name). */
  const CHANGE_ABSENT = writableDefaults<ConnectionChange>(deps.document, 'connections_update');
  const now = () => (deps.clock ?? (() => new Date()))();
  const policies = cancellationPolicies({
    terms: (id) => deps.connections.cancellationTerms(id),
    what: 'connections',
    earliest: (day) => `the connection can be decommissioned on ${day} at the earliest`,
    clock: deps.clock,
  });

  /** The connection, if the caller may see it (and change it, when `change`). */
  async function load(id: string, scope: Scope, need: 'change' | 'read'): Promise<Connection> {
    const connection = await deps.connections.findById(id);
    const access = connection ? accessToOwned(connection, scope) : 'none';
    if (!connection || !canSee(access)) throw new NotFoundError(`no connections with id ${id}`);
    if (need === 'change') requireChange(access, `connections with id ${id}`);
    return connection;
  }

  /** The rules an order or change must meet, by property. */
  async function checkOrder(
    scope: Scope,
    order: ConnectionChange & Pick<NewConnection, 'port_quantity' | 'subscriber_side_demarcs'>,
    /** For a change: whether a rule about this property concerns what the change touches. */
    concerned: (property: string) => boolean = () => true,
  ) {
    requireOrderAccountsActedFor(scope, order);
    const facts = await deps.connections.orderFacts(order, scope.accounts);
    const { offering } = facts;
    if (!offering)
      throw new ValidationError([
        {
          name: 'product_offering',
          reason: `no product offering with id ${order.product_offering} (see GET /product-offerings?type=connection)`,
        },
      ]);
    const unknown = concerned('role_assignments')
      ? unknownAssignments(order.role_assignments, new Set(facts.roles.keys()))
      : [];
    if (unknown.length) throw new ValidationError(unknown);
    const problems = connectionOrderProblems(order, offering, {
      now: now(),
      assignedRoles: [...facts.roles.values()],
      accounts: facts.accounts,
      maxLagMembers: facts.maxLagMembers,
    }).filter((problem) => concerned(problem.name.split('.')[0]));
    if (problems.length) throw new ValidationError(problems);
    return offering;
  }

  function update(operationId: 'connections_update' | 'connections_partial_update'): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const current = await load(params.id, scope, 'change');
        const next =
          operationId === 'connections_update'
            ? replacement(body, CHANGE_ABSENT)
            : merged(merged(CHANGE_ABSENT, current), body);
        validators.body('connections_update', next);
        if (GOING_STATES.includes(current.state))
          throw new UnableToFulfillError(
            'state',
            `the connection is ${current.state}; it cannot change any more`,
          );
        // Rules are checked for what the change touches: a connection ordered under rules since
        // tightened can still have its references changed.
        const touched = (Object.keys(next) as Array<keyof ConnectionChange>).filter(
          (name) => JSON.stringify(next[name]) !== JSON.stringify(current[name]),
        );
        const offeringChanged = touched.includes('product_offering');
        const offering = await checkOrder(
          scope,
          {
            ...next,
            port_quantity: current.port_quantity,
            subscriber_side_demarcs: current.subscriber_side_demarcs,
          },
          (property) =>
            offeringChanged ||
            touched.includes(property as keyof ConnectionChange) ||
            (property === 'port_quantity' && touched.includes('mode')) ||
            (property === 'lacp_timeout' && touched.includes('mode')),
        );
        if (next.product_offering !== current.product_offering) {
          const was = await deps.connections.offering(current.product_offering);
          if (
            was &&
            (offering.physical_port_speed !== was.physical_port_speed ||
              offering.handover_metro_area_network !== was.handover_metro_area_network)
          )
            throw new ValidationError([
              {
                name: 'product_offering',
                reason: `${offering.id} needs other ports (speed or metro area network differ); order a new connection instead`,
              },
            ]);
        }
        const bundleChanged =
          next.mode !== current.mode || effectiveLacpTimeout(next) !== effectiveLacpTimeout(current);
        if (bundleChanged && current.state !== 'production')
          throw new UnableToFulfillError(
            'mode',
            `the bundle (mode, lacp_timeout) changes in production only; the connection is ${current.state}`,
          );
        const connection = await deps.connections.change(params.id, next, bundleChanged);
        return { status: 202, body: connection };
      },
    };
  }

  return {
    handlers: [
      {
        operationId: 'connections_create',
        authenticated: true,
        async handle({ body, caller }) {
          const scope = await writes.scope(caller);
          const input = replacement(body, ABSENT);
          const offering = await checkOrder(scope, input);
          const connection = await deps.connections.create(input, offering);
          return { status: 201, body: connection };
        },
      },
      update('connections_update'),
      update('connections_partial_update'),
    ],
    cancellation: cancellationOperations({
      destroy: 'connections_destroy',
      policyRead: 'connections_cancellation_policy_read',
      writes,
      policies,
      allow: load,
      cancel: (id, policy) => deps.connections.requestCancellation(id, policy),
    }),
    loa: loaOperations({
      download: 'connections_loa_download',
      upload: 'connections_loa_upload',
      writes,
      load,
      what: 'connection',
      takesLoa: (state) => !GOING_STATES.includes(state),
      uploaded: (id) => deps.connections.loa(id),
      issue: (connection) =>
        renderLoa(`Letter of authorisation: connection ${connection.name}`, [
          `Connection ${connection.id} at ${connection.pop}, ${connection.port_quantity} port(s).`,
          `Ports: ${connection.ports.join(', ') || 'none allocated'}.`,
          `Subscriber-side demarcs: ${connection.subscriber_side_demarcs.join(', ') || 'none given'}.`,
          'The holder of this letter is authorised to order the cross-connects to these ports.',
        ]),
      store: (id, document) => deps.connections.storeLoa(id, document),
    }),
  };
}

/** Connections: owned, stateful (their workflow provisions, changes and decommissions them). */
export const connectionsFamily: ResourceFamily = {
  name: FAMILIES.connection.collection,
  collections: () => CONNECTION_COLLECTIONS,
  asynchronous: true,
  statistics: ['connection'],
  operations: ({ db, validators, writes, document, clock }) =>
    connectionOperations({ connections: db.connections, validators, writes, document, clock }),
};
