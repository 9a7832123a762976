import { networkServices, serviceScopeSql } from '../../db/network-services-collection';
import { requireOrderAccountsActedFor } from '../../domain/order-accounts';
import { ownedScope } from '../../db/scope';
import type { NetworkServiceRepository } from '../../db/repositories/network-service-repository';
import type { Scope } from '../../domain/authority';
import { actsFor } from '../../domain/authority';
import {
  NotFoundError,
  PermissionDeniedError,
  UnableToFulfillError,
  ValidationError,
} from '../../domain/errors';
import type { ChangeRequest, ServiceOrder, ServiceParties, ServiceSide } from '../../domain/network-services';
import {
  ABSENT_SERVICE,
  changeRequestProblems,
  isOrderableServiceType,
  ORDERABLE_SERVICE_TYPES,
  requireServiceOwner,
  SERVICE_GOING,
  serviceOrderProblems,
  shapedOrder,
  sideOfService,
} from '../../domain/network-services';
import { redact } from '../../domain/redaction';
import type { OpenApiDocument } from '../../spec';
import { cancellationPolicies } from '../cancellation';
import type { CollectionEntry } from '../collections';
import type { FamilyOperations, ResourceFamily } from '../families';
import { cancellationOperations } from '../lifecycle-operations';
import type { OperationDefinition } from '../operations';
import { redactionPlansByType } from '../redaction-plans';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { merged, replacement } from '../writes';
import { typedChange } from './typed-changes';
import { FAMILIES } from '../../domain/families';

/** What others see of a multipoint service they may join: enough to find it and order a config. */
const MEMBER_VIEW = [
  'id',
  'type',
  'state',
  'display_name',
  'product_offering',
  'managing_account',
  'consuming_account',
  'billing_account',
  'public',
  'member_joining_rules',
  'network_features',
  'nsc_required_contact_roles',
  'nsc_product_offerings',
];

const SCHEMA_OF: Record<string, string> = {
  exchange_lan: 'ExchangeLanNetworkService',
  p2p_vc: 'P2PNetworkService',
  mp2mp_vc: 'MP2MPNetworkService',
  p2mp_vc: 'P2MPNetworkService',
  cloud_vc: 'CloudNetworkService',
};

/**
 * Network services: every caller sees the exchange LANs and the public multipoint services; the
 * owners of a service (the exchange of its LANs) see it whole, everybody else without what only
 * its owners' business is: a LAN and a circuit without their sensitive properties, a multipoint
 * service in the form its members need.
 */
export function networkServiceCollections(document: OpenApiDocument): readonly CollectionEntry[] {
  const plans = redactionPlansByType(document, SCHEMA_OF);
  return [
    {
      collection: networkServices,
      list: 'network_services_list',
      read: 'network_services_read',
      scope: (visibility) => (_value, params) => serviceScopeSql(params.bind(visibility.accounts)),
      present: (item, visibility) => {
        const type = item.type as string;
        if (
          actsFor(visibility, item.managing_account as string) ||
          actsFor(visibility, item.consuming_account as string)
        )
          return item;
        const plan = plans[type];
        // An exchange LAN is everybody's to join; only the exchange's own references are hidden.
        if (type === 'exchange_lan' || type === 'p2p_vc' || type === 'cloud_vc') return redact(item, plan);
        const hidden = redact(item, {
          ...plan,
          only: MEMBER_VIEW,
          sensitive: [...plan.sensitive, 'member_joining_rules'],
          zero: { ...plan.zero, billing_account: '', member_joining_rules: [] },
        });
        return hidden;
      },
      // Only the owners see a service whole (the exchange its LANs).
      fullView: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
    },
  ];
}

/**
 * Network services customers order (point-to-point, multipoint and cloud) and the change requests
 * of circuits. The managing side orders, changes and cancels; the workflow builds the service on
 * the fabric (and at the cloud provider) and takes it to production once its ends are there.
 */
function networkServiceOperations(deps: {
  services: NetworkServiceRepository;
  validators: RequestValidators;
  writes: WriteContext;
  clock?: () => Date;
}): FamilyOperations {
  const { services, validators, writes } = deps;
  const now = () => (deps.clock ?? (() => new Date()))();
  const policies = cancellationPolicies({
    terms: (id) => services.cancellationTerms(id),
    what: 'network-services',
    earliest: (day) => `the service can be decommissioned on ${day} at the earliest`,
    clock: deps.clock,
  });

  /** The service and the caller's side of it; one the caller may not see is not found. */
  async function load(id: string, scope: Scope): Promise<{ parties: ServiceParties; side: ServiceSide }> {
    const parties = await services.parties(id);
    let side = parties ? sideOfService(parties, scope) : 'none';
    if (parties && side === 'none') {
      // A private multipoint service is seen by the members its rules allow.
      const visible = await services.findById(id);
      if (visible) side = sideOfService(parties, scope, await services.allowedMember(id, scope.accounts));
    }
    if (!parties || side === 'none') throw new NotFoundError(`no network-services with id ${id}`);
    return { parties, side };
  }

  async function check(
    scope: Scope,
    order: ServiceOrder,
    currentId?: string,
    concerned?: (p: string) => boolean,
  ) {
    requireOrderAccountsActedFor(scope, order);
    const facts = await services.orderFacts(order, now(), scope);
    const current = currentId ? await services.current(currentId) : undefined;
    const problems = serviceOrderProblems(order, facts, current, concerned);
    if (problems.length) throw new ValidationError(problems);
  }

  function update(
    operationId: 'network_services_update' | 'network_services_partial_update',
  ): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      validatesBody: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const { parties, side } = await load(params.id, scope);
        requireServiceOwner(parties, side);
        const given = typedChange(validators, operationId, body, parties.type);
        if (given.type !== undefined && given.type !== parties.type)
          throw new ValidationError([
            { name: 'type', reason: `the service is ${parties.type}; it stays so` },
          ]);
        if (SERVICE_GOING.includes(parties.state))
          throw new UnableToFulfillError(
            'state',
            `the service is ${parties.state}; it cannot change any more`,
          );
        const current = (await services.current(params.id))!;
        const base = { ...ABSENT_SERVICE, type: current.order.type };
        const next = shapedOrder(
          operationId === 'network_services_update'
            ? { ...replacement(body, base), type: current.order.type }
            : merged(merged(base, current.order), body),
        );
        const touched = new Set(
          (Object.keys(next) as Array<keyof ServiceOrder>).filter(
            (name) => JSON.stringify(next[name]) !== JSON.stringify(current.order[name]),
          ),
        );
        await check(scope, next, params.id, (property) => touched.has(property as keyof ServiceOrder));
        const service = await services.change(params.id, next);
        return { status: 202, body: service };
      },
    };
  }

  const changeRequestBody = (request: ChangeRequest) => ({ ...request });

  return {
    handlers: [
      {
        operationId: 'network_services_create',
        authenticated: true,
        async handle({ body, caller }) {
          const scope = await writes.scope(caller);
          const given = (body ?? {}) as Record<string, unknown>;
          if (!isOrderableServiceType(given.type))
            throw new ValidationError([
              {
                name: 'type',
                reason: `services of type ${ORDERABLE_SERVICE_TYPES.join(', ')} can be ordered; exchange LANs are the exchange's`,
              },
            ]);
          const order = shapedOrder({ ...replacement(body, ABSENT_SERVICE), type: given.type });
          await check(scope, order);
          const service = await services.create(order);
          return { status: 201, body: service };
        },
      },
      update('network_services_update'),
      update('network_services_partial_update'),
      {
        operationId: 'network_service_change_request_read',
        authenticated: true,
        async handle({ params, caller }) {
          const scope = await writes.scope(caller);
          const { parties, side } = await load(params.id, scope);
          const request =
            parties.type === 'p2p_vc' && side !== 'member'
              ? await services.changeRequest(params.id)
              : undefined;
          if (!request)
            throw new NotFoundError(`network-services with id ${params.id} has no open change request`);
          return { status: 200, body: changeRequestBody(request) };
        },
      },
      {
        operationId: 'network_service_change_request_create',
        authenticated: true,
        async handle({ params, body, caller }) {
          const scope = await writes.scope(caller);
          const { parties, side } = await load(params.id, scope);
          if (parties.type !== 'p2p_vc')
            throw new UnableToFulfillError(
              'id',
              `change requests are for p2p_vc circuits; ${params.id} is ${parties.type}`,
            );
          if (side !== 'joining')
            throw new PermissionDeniedError(
              'change requests come from the B side (the joining member); the owner changes the service directly',
            );
          const given = (body ?? {}) as Record<string, unknown>;
          const request: ChangeRequest = {
            product_offering: given.product_offering as string,
            capacity: (given.capacity as number | null | undefined) ?? null,
          };
          const current = (await services.current(params.id))!;
          const problems = changeRequestProblems(
            request,
            current,
            await services.findOffering(request.product_offering),
          );
          if (problems.length) throw new ValidationError(problems);
          const opened = await services.openChangeRequest(params.id, request);
          return { status: 202, body: changeRequestBody(opened) };
        },
      },
      {
        operationId: 'network_service_change_request_destroy',
        authenticated: true,
        async handle({ params, caller }) {
          const scope = await writes.scope(caller);
          const { parties, side } = await load(params.id, scope);
          if (parties.type !== 'p2p_vc' || side === 'member')
            throw new NotFoundError(`network-services with id ${params.id} has no open change request`);
          if (side === 'consumer')
            throw new PermissionDeniedError(
              'the managing account rejects a change request, or the B side withdraws it',
            );
          const closed = await services.closeChangeRequest(
            params.id,
            side === 'joining' ? 'withdrawn' : 'rejected',
          );
          if (!closed)
            throw new NotFoundError(`network-services with id ${params.id} has no open change request`);
          return { status: 202, body: changeRequestBody(closed) };
        },
      },
    ],
    cancellation: cancellationOperations({
      destroy: 'network_services_destroy',
      policyRead: 'network_service_cancellation_policy_read',
      writes,
      policies,
      async allow(id, scope, need) {
        const { parties, side } = await load(id, scope);
        if (need === 'change') requireServiceOwner(parties, side);
        else if (parties.type === 'exchange_lan' || (side !== 'owner' && side !== 'consumer'))
          throw new NotFoundError(`no cancellation policy for network-services with id ${id}`);
      },
      cancel: (id, policy) => services.requestCancellation(id, policy),
    }),
  };
}

/**
 * Network services: the exchange's LANs (catalogue) and the circuits customers order, stateful,
 * changed by their managing side only, with the change requests of circuits.
 */
export const networkServicesFamily: ResourceFamily = {
  name: FAMILIES.network_service.collection,
  collections: networkServiceCollections,
  asynchronous: true,
  // The traffic of the caller's configs of the service, added up.
  statistics: ['network_service'],
  operations: ({ db, validators, writes, clock }) =>
    networkServiceOperations({ services: db.networkServices, validators, writes, clock }),
};
