import { ENDED_STATES } from '../../domain/states';
import { portReservations } from '../../db/port-reservations-collection';
import type { ConnectionRepository } from '../../db/repositories/connection-repository';
import type {
  NewReservation,
  PortReservationRepository,
  ReservationChange,
} from '../../db/repositories/port-reservation-repository';
import { portReservationScope } from '../../db/scope';
import type { Scope } from '../../domain/authority';
import { accessToOwned, canSee, requireChange } from '../../domain/authority';
import { demarcProblems } from '../../domain/connections';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
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

/** A port reservation is seen by whoever sees its connection. */
export const PORT_RESERVATION_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: portReservations,
    list: 'port_reservations_list',
    read: 'port_reservations_read',
    scope: (visibility) => (_value, params) => portReservationScope(params.bind(visibility.accounts)),
  },
];

/**
 * Port reservations: a customer adds a port to a bundle in production by reserving one, and gives
 * one back by cancelling its reservation (the last one takes the connection along).
 * Who may change or see a reservation follows its connection.
 */
function portReservationOperations(deps: {
  connections: ConnectionRepository;
  reservations: PortReservationRepository;
  validators: RequestValidators;
  writes: WriteContext;
  document: OpenApiDocument;
  clock?: () => Date;
}): FamilyOperations {
  const { validators, writes } = deps;
  const ABSENT = writableDefaults<NewReservation>(deps.document, 'port_reservations_create');
  const CHANGE_ABSENT = writableDefaults<ReservationChange>(deps.document, 'port_reservations_update');
  const policies = cancellationPolicies({
    terms: (id) => deps.reservations.cancellationTerms(id),
    what: 'port-reservations',
    earliest: (day) => `the port can be given back on ${day} at the earliest`,
    clock: deps.clock,
  });
  /** The policy of a reservation's connection: the last port takes the connection along. */
  const connectionPolicies = cancellationPolicies({
    terms: (id) => deps.connections.cancellationTerms(id),
    what: 'connections',
    earliest: (day) =>
      `this is the last port of its connection, which goes with it: on ${day} at the earliest`,
    clock: deps.clock,
  });

  /** The reservation and its connection, if the caller may see them (and change them, when `change`). */
  async function load(id: string, scope: Scope, need: 'change' | 'read') {
    const reservation = await deps.reservations.findById(id);
    const connection = reservation && (await deps.connections.findById(reservation.connection));
    const access = connection ? accessToOwned(connection, scope) : 'none';
    if (!reservation || !connection || !canSee(access))
      throw new NotFoundError(`no port-reservations with id ${id}`);
    if (need === 'change') requireChange(access, `port-reservations with id ${id}`);
    return { reservation, connection };
  }

  /** A subscriber-side demarc names one of the connection's (`demarcProblems`). */
  function checkDemarc(value: string | null, demarcs: readonly string[]) {
    const problems = demarcProblems(value, demarcs);
    if (problems.length) throw new ValidationError(problems);
  }

  function update(
    operationId: 'port_reservations_update' | 'port_reservations_partial_update',
  ): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const { reservation, connection } = await load(params.id, scope, 'change');
        const next =
          operationId === 'port_reservations_update'
            ? replacement(body, CHANGE_ABSENT)
            : merged(merged(CHANGE_ABSENT, reservation), body);
        validators.body('port_reservations_update', next);
        if (ENDED_STATES.includes(reservation.state))
          throw new UnableToFulfillError(
            'state',
            `the reservation is ${reservation.state}; it cannot change any more`,
          );
        checkDemarc(next.subscriber_side_demarc, connection.subscriber_side_demarcs);
        return { status: 202, body: await deps.reservations.change(params.id, next) };
      },
    };
  }

  return {
    handlers: [
      {
        operationId: 'port_reservations_create',
        authenticated: true,
        async handle({ body, caller }) {
          const scope = await writes.scope(caller);
          const input = replacement(body, ABSENT);
          const connection = await deps.connections.findById(input.connection);
          const access = connection ? accessToOwned(connection, scope) : 'none';
          if (!connection || access !== 'change')
            throw new ValidationError([
              {
                name: 'connection',
                reason:
                  access === 'none'
                    ? `no connection with id ${input.connection}`
                    : 'you may see this connection but not change it; its managing account can',
              },
            ]);
          checkDemarc(input.subscriber_side_demarc, connection.subscriber_side_demarcs);
          if (connection.mode === 'standalone')
            throw new UnableToFulfillError(
              'connection',
              'a standalone connection has exactly one port; change its mode to a LAG first',
            );
          if (connection.state !== 'production')
            throw new UnableToFulfillError(
              'connection',
              `ports are added to a connection in production; this one is ${connection.state}`,
            );
          const offering = await deps.connections.offering(connection.product_offering);
          const limit = offering?.maximum_port_quantity ?? null;
          if (limit !== null && connection.port_quantity >= limit)
            throw new UnableToFulfillError(
              'connection',
              `the offering allows at most ${limit} port(s) per connection`,
            );
          const reservation = await deps.reservations.reserve(input, offering?.physical_port_speed ?? 0);
          return { status: 201, body: reservation };
        },
      },
      update('port_reservations_update'),
      update('port_reservations_partial_update'),
    ],
    cancellation: cancellationOperations({
      destroy: 'port_reservations_destroy',
      policyRead: 'port_reservation_cancellation_policy_read',
      writes,
      policies,
      allow: load,
      cancel: (id, policy, body) =>
        deps.reservations.end(id, policy, (connection) =>
          connectionPolicies.forCancellation(connection, body),
        ),
    }),
    loa: loaOperations({
      download: 'port_reservations_loa_download',
      upload: 'port_reservations_loa_upload',
      writes,
      load: async (id, scope, need) => {
        const found = await load(id, scope, need);
        return { id: found.reservation.id, state: found.reservation.state, ...found };
      },
      what: 'reservation',
      takesLoa: (state) => !ENDED_STATES.includes(state),
      uploaded: (id) => deps.reservations.loa(id),
      issue: ({ reservation, connection }) =>
        renderLoa(`Letter of authorisation: port reservation ${reservation.id}`, [
          `Connection ${connection.name} (${connection.id}) at ${connection.pop}.`,
          `Exchange-side demarc: ${reservation.exchange_side_demarc ?? 'not yet allocated'}.`,
          `Subscriber-side demarc: ${reservation.subscriber_side_demarc ?? 'not given'}.`,
          'The holder of this letter is authorised to order the cross-connect to this port.',
        ]),
      store: (id, document) => deps.reservations.storeLoa(id, document),
    }),
  };
}

/** Port reservations: stateful, changed by whoever may change their connection. */
export const portReservationsFamily: ResourceFamily = {
  name: FAMILIES.port_reservation.collection,
  collections: () => PORT_RESERVATION_COLLECTIONS,
  asynchronous: true,
  operations: ({ db, validators, writes, document, clock }) =>
    portReservationOperations({
      connections: db.connections,
      reservations: db.portReservations,
      validators,
      writes,
      document,
      clock,
    }),
};
