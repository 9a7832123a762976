import { networkFeatureConfigs } from '../../db/network-feature-configs-collection';
import { requireOrderAccountsActedFor } from '../../domain/order-accounts';
import type {
  NetworkFeatureConfig,
  NetworkFeatureConfigRepository,
} from '../../db/repositories/network-feature-config-repository';
import { CONFIG_GOING } from '../../db/repositories/network-service-config-repository';
import { ownedScope } from '../../db/scope';
import type { Scope } from '../../domain/authority';
import { accessToOwned, canSee, requireChange } from '../../domain/authority';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import type { RouteServerConfigOrder } from '../../domain/network-feature-configs';
import { routeServerConfigProblems } from '../../domain/network-feature-configs';
import { cancellationPolicies } from '../cancellation';
import type { OpenApiDocument } from '../../spec';
import type { CollectionEntry } from '../collections';
import type { FamilyOperations, ResourceFamily } from '../families';
import { writableDefaults } from '../families';
import type { OperationDefinition } from '../operations';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { merged, replacement } from '../writes';
import { typedChange } from './typed-changes';
import { FAMILIES } from '../../domain/families';

/** Route-server sessions belong to whoever manages or consumes them. */
export const NETWORK_FEATURE_CONFIG_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: networkFeatureConfigs,
    list: 'network_feature_configs_list',
    read: 'network_feature_configs_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
];

/** What a session keeps whatever a change says: the route server and the config it runs over. */
const FIXED = ['type', 'network_feature', 'network_service_config', 'billing_account'] as const;

/**
 * Route-server sessions (network feature configs of type route_server): ordered for a network
 * service config by its managing side, configured on the route server by their workflow once the
 * config is on the device, changed and decommissioned like every stateful resource. A config of a
 * service with a required route server goes live only once it has a session with it.
 */
function networkFeatureConfigOperations(deps: {
  featureConfigs: NetworkFeatureConfigRepository;
  validators: RequestValidators;
  writes: WriteContext;
  document: OpenApiDocument;
  clock?: () => Date;
}): FamilyOperations {
  const { validators, writes } = deps;
  // A session ordered without a password has none (null), whatever default the document names.
  const ABSENT: RouteServerConfigOrder = {
    ...writableDefaults<RouteServerConfigOrder>(deps.document, 'network_feature_configs_create'),
    password: null,
  };
  const policies = cancellationPolicies({
    terms: (id) => deps.featureConfigs.cancellationTerms(id),
    what: 'network-feature-configs',
    earliest: (day) => `the session can be decommissioned on ${day} at the earliest`,
    clock: deps.clock,
  });

  async function load(id: string, scope: Scope): Promise<NetworkFeatureConfig> {
    const found = await deps.featureConfigs.findById(id);
    const access = found ? accessToOwned(found, scope) : 'none';
    if (!found || !canSee(access)) throw new NotFoundError(`no network-feature-configs with id ${id}`);
    requireChange(access, `network-feature-configs with id ${id}`);
    return found;
  }

  async function check(
    scope: Scope,
    order: RouteServerConfigOrder,
    concerned?: (property: string) => boolean,
  ) {
    requireOrderAccountsActedFor(scope, order);
    const facts = await deps.featureConfigs.orderFacts(order, scope.accounts);
    const problems = routeServerConfigProblems(order, facts, concerned);
    if (problems.length) throw new ValidationError(problems);
  }

  function update(
    operationId: 'network_feature_configs_update' | 'network_feature_configs_partial_update',
  ): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      validatesBody: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const current = await load(params.id, scope);
        // A partial update may leave the type out; it is the stored one.
        const given = typedChange(validators, operationId, body, current.type);
        const changedFixed = FIXED.filter(
          (name) => given[name] !== undefined && given[name] !== current[name],
        );
        if (changedFixed.length)
          throw new ValidationError(
            changedFixed.map((name) => ({ name, reason: 'stays as ordered; order a new session instead' })),
          );
        const kept = Object.fromEntries(FIXED.map((name) => [name, current[name]]));
        const next =
          operationId === 'network_feature_configs_update'
            ? { ...replacement(body, ABSENT), ...kept }
            : { ...merged(merged(ABSENT, current), body), ...kept };
        if (CONFIG_GOING.includes(current.state))
          throw new UnableToFulfillError(
            'state',
            `the session is ${current.state}; it cannot change any more`,
          );
        const touched = new Set(
          (Object.keys(next) as Array<keyof RouteServerConfigOrder>).filter(
            (name) => JSON.stringify(next[name]) !== JSON.stringify(current[name]),
          ),
        );
        await check(scope, next, (property) => touched.has(property as keyof RouteServerConfigOrder));
        const featureConfig = await deps.featureConfigs.change(params.id, next);
        return { status: 202, body: featureConfig };
      },
    };
  }

  return {
    handlers: [
      {
        operationId: 'network_feature_configs_create',
        authenticated: true,
        async handle({ body, caller }) {
          const scope = await writes.scope(caller);
          const order = replacement(body, ABSENT);
          await check(scope, order);
          const featureConfig = await deps.featureConfigs.create(order);
          return { status: 201, body: featureConfig };
        },
      },
      update('network_feature_configs_update'),
      update('network_feature_configs_partial_update'),
      {
        operationId: 'network_feature_configs_destroy',
        authenticated: true,
        async handle({ params, caller }) {
          const scope = await writes.scope(caller);
          await load(params.id, scope);
          const policy = await policies.forCancellation(params.id, undefined);
          const featureConfig = await deps.featureConfigs.requestCancellation(params.id, policy);
          return { status: 202, body: featureConfig };
        },
      },
    ],
  };
}

/** Route-server sessions: owned, stateful, cancelled at once (no cancellation policy of their own). */
export const networkFeatureConfigsFamily: ResourceFamily = {
  name: FAMILIES.network_feature_config.collection,
  collections: () => NETWORK_FEATURE_CONFIG_COLLECTIONS,
  asynchronous: true,
  operations: ({ db, validators, writes, document, clock }) =>
    networkFeatureConfigOperations({
      featureConfigs: db.networkFeatureConfigs,
      validators,
      writes,
      document,
      clock,
    }),
};
