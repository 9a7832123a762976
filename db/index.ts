import type { Sequelize } from 'sequelize';
import type { DatabaseOptions } from './connection';
import { createSequelize } from './connection';
import { defineModels } from './models';
import { createAccountRepository } from './repositories/account-repository';
import { createConnectionRepository } from './repositories/connection-repository';
import { createPortReservationRepository } from './repositories/port-reservation-repository';
import { createDeviceHoldingsRepository } from './repositories/device-holdings-repository';
import { createFabricCatalogueRepository } from './repositories/fabric-catalogue-repository';
import { createContactRepository } from './repositories/contact-repository';
import { createCredentialRepository } from './repositories/credential-repository';
import { createEventRepository } from './repositories/event-repository';
import { createIdempotencyRepository } from './repositories/idempotency-repository';
import { createIpRepository } from './repositories/ip-repository';
import type { DeclaredStore } from './declared-store';
import { createDeclaredStore } from './declared-store';
import type { DeclaredFamily } from '../domain/declared-family';
import { MAC_FAMILY } from '../domain/macs';
import { createMemberExportRepository } from './repositories/member-export-repository';
import { createMemberJoiningRuleRepository } from './repositories/member-joining-rule-repository';
import { createNetworkFeatureConfigRepository } from './repositories/network-feature-config-repository';
import { createNetworkServiceConfigRepository } from './repositories/network-service-config-repository';
import { createNetworkServiceRepository } from './repositories/network-service-repository';
import { createOutboxRepository } from './repositories/outbox-repository';
import { createPortAllocation } from './allocation/ports';
import { createQuotaGuard } from './repositories/quota-guard';
import { createTrafficRepository } from './repositories/traffic-repository';
import { createOperatorQueue } from './repositories/operator-queue';
import type { Quotas } from '../domain/quotas';
import { NO_QUOTAS } from '../domain/quotas';

export interface Database {
  sequelize: Sequelize;
  accounts: ReturnType<typeof createAccountRepository>;
  connections: ReturnType<typeof createConnectionRepository>;
  portReservations: ReturnType<typeof createPortReservationRepository>;
  contacts: ReturnType<typeof createContactRepository>;
  credentials: ReturnType<typeof createCredentialRepository>;
  events: ReturnType<typeof createEventRepository>;
  idempotencyKeys: ReturnType<typeof createIdempotencyRepository>;
  ips: ReturnType<typeof createIpRepository>;
  macs: DeclaredStore;
  /** The store of a declared family (domain/declared-family.ts), one per family. */
  declared(family: DeclaredFamily): DeclaredStore;
  networkServices: ReturnType<typeof createNetworkServiceRepository>;
  memberJoiningRules: ReturnType<typeof createMemberJoiningRuleRepository>;
  /** What the IX-F member export shows: exchange LANs, route servers, listed members. */
  memberExport: ReturnType<typeof createMemberExportRepository>;
  networkServiceConfigs: ReturnType<typeof createNetworkServiceConfigRepository>;
  networkFeatureConfigs: ReturnType<typeof createNetworkFeatureConfigRepository>;
  outbox: ReturnType<typeof createOutboxRepository>;
  portAllocation: ReturnType<typeof createPortAllocation>;
  traffic: ReturnType<typeof createTrafficRepository>;
  /** What waits on the exchange's operators. */
  operatorQueue: ReturnType<typeof createOperatorQueue>;
  /** What the database says the devices hold (for reconciling devices with it). */
  deviceHoldings: ReturnType<typeof createDeviceHoldingsRepository>;
  /** What the ovs fabric is built from: the catalogue's ports and route servers. */
  fabricCatalogue: ReturnType<typeof createFabricCatalogueRepository>;
  /** Answers when the database takes a trivial query; throws otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects (lazily) and wires the repositories over one Sequelize instance. `quotas` are the limits
 * per account tree that every order is held to (QUOTA_* settings); tools that write on the
 * exchange's behalf (seeding, migrations) may leave them out, and nothing is limited then.
 */
export function openDatabase(
  options: DatabaseOptions & {
    apiSecretHashKey: Uint8Array;
    quotas?: Quotas;
    /** The clock that decides days (billing starts, decommission days); the system's by default. */
    clock?: () => Date;
  },
): Database {
  const clock = options.clock ?? (() => new Date());
  const sequelize = createSequelize(options);
  const models = defineModels(sequelize);
  const events = createEventRepository({ models });
  const outbox = createOutboxRepository({ models });
  const portAllocation = createPortAllocation(sequelize);
  const quotas = createQuotaGuard({ sequelize, quotas: options.quotas ?? NO_QUOTAS });
  const declaredStores = new Map<DeclaredFamily, DeclaredStore>();
  const declared = (family: DeclaredFamily) => {
    let store = declaredStores.get(family);
    if (!store) {
      store = createDeclaredStore({ sequelize, events, quotas, family });
      declaredStores.set(family, store);
    }
    return store;
  };
  const networkFeatureConfigs = createNetworkFeatureConfigRepository({
    sequelize,
    events,
    outbox,
    quotas,
    clock,
  });
  const connections = createConnectionRepository({
    sequelize,
    events,
    outbox,
    portAllocation,
    quotas,
    clock,
  });
  const networkServiceConfigs = createNetworkServiceConfigRepository({
    sequelize,
    events,
    outbox,
    quotas,
    clock,
    cascade: (configId, policy, transaction) =>
      networkFeatureConfigs.cascadeFrom(configId, policy, transaction),
    releaseConnection: connections.releaseWhenLeft,
  });
  return {
    sequelize,
    accounts: createAccountRepository({ sequelize, models, events, outbox, quotas }),
    contacts: createContactRepository({ sequelize, models, events, outbox, quotas }),
    credentials: createCredentialRepository({ models, hashKey: options.apiSecretHashKey }),
    events,
    idempotencyKeys: createIdempotencyRepository(sequelize),
    ips: createIpRepository({ sequelize, events, quotas }),
    macs: declared(MAC_FAMILY),
    declared,
    memberJoiningRules: createMemberJoiningRuleRepository({ sequelize, events, outbox, quotas }),
    memberExport: createMemberExportRepository({ sequelize }),
    networkServices: createNetworkServiceRepository({
      sequelize,
      events,
      outbox,
      quotas,
      clock,
      cascade: (serviceId, policy, transaction) =>
        networkServiceConfigs.cascadeFromService(serviceId, policy, transaction),
    }),
    networkServiceConfigs,
    networkFeatureConfigs,
    outbox,
    portAllocation,
    connections,
    portReservations: createPortReservationRepository({
      sequelize,
      events,
      outbox,
      portAllocation,
      quotas,
      cancelConnection: connections.cancelWithin,
    }),
    traffic: createTrafficRepository({ sequelize }),
    operatorQueue: createOperatorQueue({ sequelize }),
    deviceHoldings: createDeviceHoldingsRepository({ sequelize }),
    fabricCatalogue: createFabricCatalogueRepository({ sequelize }),
    async ping() {
      await sequelize.query('SELECT 1');
    },
    async close() {
      await sequelize.close();
    },
  };
}
