import { networkServiceConfigs } from '../../db/network-service-configs-collection';
import { requireOrderAccountsActedFor } from '../../domain/order-accounts';
import type {
  NetworkServiceConfig,
  NetworkServiceConfigRepository,
} from '../../db/repositories/network-service-config-repository';
import { CONFIG_GOING } from '../../db/repositories/network-service-config-repository';
import { ownedScope } from '../../db/scope';
import type { Scope } from '../../domain/authority';
import { accessToOwned, canSee, requireChange } from '../../domain/authority';
import { NotFoundError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import type { ConfigOrder } from '../../domain/network-service-configs';
import {
  absentConfigOrder,
  CONFIG_TYPES,
  configProblems,
  isConfigType,
  ownProperties,
} from '../../domain/network-service-configs';
import { cancellationPolicies } from '../cancellation';
import type { CollectionEntry } from '../collections';
import type { FamilyOperations, ResourceFamily } from '../families';
import { cancellationOperations } from '../lifecycle-operations';
import type { OperationDefinition } from '../operations';
import type { RequestValidators } from '../request-validation';
import type { WriteContext } from '../writes';
import { merged, replacement } from '../writes';
import { typedChange } from './typed-changes';
import { FAMILIES } from '../../domain/families';

/** Network service configs belong to whoever manages or consumes them. */
export const NETWORK_SERVICE_CONFIG_COLLECTIONS: readonly CollectionEntry[] = [
  {
    collection: networkServiceConfigs,
    list: 'network_service_configs_list',
    read: 'network_service_configs_read',
    scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
  },
];

/**
 * Network service configs: a customer's access to a network service over one of its connections,
 * an exchange LAN or a virtual circuit (an end of a point-to-point circuit, a member of a multipoint
 * service, a handover of a cloud service). The managing side orders, changes and cancels; the
 * consuming side sees. An order gets its VLAN (chosen by the exchange where the order leaves it
 * open) and, on an exchange LAN, an IPv4 and an IPv6 address at once; its workflow configures the
 * device and takes it to production.
 */
function networkServiceConfigOperations(deps: {
  configs: NetworkServiceConfigRepository;
  validators: RequestValidators;
  writes: WriteContext;
  /** How long released addresses rest before they are allocated again. */
  ipQuarantineSeconds: number;
  clock?: () => Date;
}): FamilyOperations {
  const { validators, writes } = deps;
  const now = () => (deps.clock ?? (() => new Date()))();
  const policies = cancellationPolicies({
    terms: (id) => deps.configs.cancellationTerms(id),
    what: 'network-service-configs',
    earliest: (day) => `the config can be decommissioned on ${day} at the earliest`,
    clock: deps.clock,
  });

  async function load(id: string, scope: Scope, need: 'change' | 'read'): Promise<NetworkServiceConfig> {
    const config = await deps.configs.findById(id);
    const access = config ? accessToOwned(config, scope) : 'none';
    if (!config || !canSee(access)) throw new NotFoundError(`no network-service-configs with id ${id}`);
    if (need === 'change') requireChange(access, `network-service-configs with id ${id}`);
    return config;
  }

  /** The rules an order (or a change, as it would leave the config) must meet, by property. */
  async function check(
    scope: Scope,
    order: ConfigOrder,
    except: string | null = null,
    concerned?: (property: string) => boolean,
  ): Promise<void> {
    requireOrderAccountsActedFor(scope, order);
    const facts = await deps.configs.orderFacts(order, scope.accounts, now(), except);
    const problems = configProblems(order, facts, concerned);
    if (problems.length) throw new ValidationError(problems);
  }

  function update(
    operationId: 'network_service_configs_update' | 'network_service_configs_partial_update',
  ): OperationDefinition {
    return {
      operationId,
      authenticated: true,
      validatesBody: true,
      async handle({ params, body, caller }) {
        const scope = await writes.scope(caller);
        const current = await load(params.id, scope, 'change');
        // A partial update may leave the type out; it is the stored one.
        const given = typedChange(validators, operationId, body, current.type);
        if (given.type !== undefined && given.type !== current.type)
          throw new ValidationError([{ name: 'type', reason: `the config is ${current.type}; it stays so` }]);
        if (given.network_service !== undefined && given.network_service !== current.network_service)
          throw new ValidationError([
            { name: 'network_service', reason: 'a config stays with its service; order a new one instead' },
          ]);
        const base = { ...absentConfigOrder(current.type), network_service: current.network_service };
        const was = merged(base, current);
        const next =
          operationId === 'network_service_configs_update'
            ? { ...replacement(body, base), network_service: current.network_service, type: current.type }
            : merged(was, body);
        const { network_service: _service, ...replacing } = ownProperties(next);
        validators.body('network_service_configs_update', replacing);
        if (CONFIG_GOING.includes(current.state))
          throw new UnableToFulfillError(
            'state',
            `the config is ${current.state}; it cannot change any more`,
          );
        if (next.connection !== current.connection)
          throw new ValidationError([
            { name: 'connection', reason: 'a config stays on its connection; order a new one instead' },
          ]);
        // Rules are checked for what the change touches, so a config ordered under rules since
        // tightened can still have its other properties changed.
        const touched = new Set<string>(
          (Object.keys(next) as Array<keyof ConfigOrder>).filter(
            (name) => JSON.stringify(next[name]) !== JSON.stringify(was[name]),
          ),
        );
        await check(scope, next, current.id, (property) => touched.has(property));
        const config = await deps.configs.change(params.id, next);
        return { status: 202, body: config };
      },
    };
  }

  return {
    handlers: [
      {
        operationId: 'network_service_configs_create',
        authenticated: true,
        async handle({ body, caller }) {
          const scope = await writes.scope(caller);
          // The schema has checked the type; each type leaves out what it does not carry.
          const type = (body as { type?: unknown } | undefined)?.type;
          if (!isConfigType(type))
            throw new ValidationError([
              { name: 'type', reason: `this exchange provisions configs of type ${CONFIG_TYPES.join(', ')}` },
            ]);
          const order = replacement(body, absentConfigOrder(type));
          await check(scope, order);
          const config = await deps.configs.create(order, {
            quarantineSeconds: deps.ipQuarantineSeconds,
          });
          return { status: 201, body: config };
        },
      },
      update('network_service_configs_update'),
      update('network_service_configs_partial_update'),
    ],
    cancellation: cancellationOperations({
      destroy: 'network_service_configs_destroy',
      policyRead: 'network_service_config_cancellation_policy_read',
      writes,
      policies,
      allow: load,
      cancel: (id, policy) => deps.configs.requestCancellation(id, policy),
    }),
  };
}

/**
 * Network service configs: owned, stateful; what a config carries depends on its type, so its
 * defaults are its type's (`absentConfigOrder`).
 */
export const networkServiceConfigsFamily: ResourceFamily = {
  name: FAMILIES.network_service_config.collection,
  collections: () => NETWORK_SERVICE_CONFIG_COLLECTIONS,
  asynchronous: true,
  statistics: ['network_service_config'],
  operations: ({ db, validators, writes, settings, clock }) =>
    networkServiceConfigOperations({
      configs: db.networkServiceConfigs,
      validators,
      writes,
      ipQuarantineSeconds: settings.ipQuarantineSeconds,
      clock,
    }),
};
