import type { AccountRepository } from '../db/repositories/account-repository';
import type { ConnectionRepository } from '../db/repositories/connection-repository';
import type { DeviceHoldingsRepository } from '../db/repositories/device-holdings-repository';
import type { NetworkFeatureConfigRepository } from '../db/repositories/network-feature-config-repository';
import type { NetworkServiceConfigRepository } from '../db/repositories/network-service-config-repository';
import type { NetworkServiceRepository } from '../db/repositories/network-service-repository';
import type { TrafficRepository } from '../db/repositories/traffic-repository';
import { gapsAsStatus, onboardingGaps } from '../domain/onboarding';
import type { StatusEntry } from '../domain/status';
import { connectionActivities } from './connections';
import { deviceSupervisionActivities } from './device-supervision';
import type { ProductionTimer } from './device-work';
import { untimed } from './device-work';
import { translated } from './failures';
import { networkFeatureConfigActivities } from './network-feature-configs';
import { networkServiceConfigActivities } from './network-service-configs';
import { networkServiceActivities } from './network-services';
import type { CloudProvider } from '../drivers/cloud/contract';
import type { DeviceDriver } from '../drivers/contract';
import type { Supervised } from '../drivers/supervision';
import { trafficActivities } from './traffic';

export interface ActivityDependencies {
  accounts: AccountRepository;
  connections: ConnectionRepository;
  networkServices: NetworkServiceRepository;
  networkServiceConfigs: NetworkServiceConfigRepository;
  networkFeatureConfigs: NetworkFeatureConfigRepository;
  traffic: TrafficRepository;
  /** What the database says the devices hold. */
  deviceHoldings: DeviceHoldingsRepository;
  /** The driver of the exchange's devices. */
  driver: DeviceDriver;
  /** The parts of the data plane the worker brings back when they die (none for the lab). */
  supervised?: readonly Supervised[];
  /** The cloud providers that deliver cloud services with the exchange. */
  cloudProvider: CloudProvider;
  clock: () => Date;
  /** How long the exchange's own cross-connects take (the lab completes them then). */
  crossConnectDelayMs: number;
  /** Times each resource's way to production (the worker's metrics); none by default. */
  timeProduction?: ProductionTimer;
}

/**
 * Every activity of the worker, built over injected repositories and a clock. Workflows type their
 * stubs from this factory's return type; tests pass their own dependencies to the same factory.
 */
export function createActivities({
  accounts,
  connections,
  networkServices,
  networkServiceConfigs,
  networkFeatureConfigs,
  traffic,
  deviceHoldings,
  driver,
  supervised = [],
  cloudProvider,
  clock,
  crossConnectDelayMs,
  timeProduction = untimed,
}: ActivityDependencies) {
  return {
    ...connectionActivities({ connections, driver, crossConnectDelayMs, timeProduction }),
    ...networkServiceActivities({ services: networkServices, cloud: cloudProvider, timeProduction }),
    ...networkServiceConfigActivities({ configs: networkServiceConfigs, driver, timeProduction }),
    ...networkFeatureConfigActivities({ featureConfigs: networkFeatureConfigs, driver, timeProduction }),
    ...trafficActivities({ traffic, driver, clock }),
    ...deviceSupervisionActivities({
      supervised,
      holdings: deviceHoldings,
      connections,
      networkServiceConfigs,
      networkFeatureConfigs,
      driver,
      clock,
    }),
    /**
     * What is still missing before the account may go to production, as `status` entries; null
     * when the account was deleted meanwhile.
     */
    async checkAccountOnboarding({ accountId }: { accountId: string }): Promise<StatusEntry[] | null> {
      return translated(async () => {
        const facts = await accounts.onboardingFacts(accountId);
        if (!facts) return null;
        return gapsAsStatus(onboardingGaps(facts), clock().toISOString());
      });
    },

    async recordAccountStatus({
      accountId,
      status,
    }: {
      accountId: string;
      status: StatusEntry[];
    }): Promise<void> {
      await translated(() => accounts.recordStatus(accountId, status));
    },

    /** Moves the account to production; idempotent when the account is already there. */
    async completeAccountOnboarding({ accountId }: { accountId: string }): Promise<string> {
      return translated(async () => {
        const account = await accounts.findById(accountId);
        if (!account) return 'deleted';
        if (account.state === 'production') return account.state;
        return timeProduction(
          'account',
          accountId,
          'go_live',
          async () => (await accounts.applyLifecycleEvent(accountId, 'go_live', [])).state,
        );
      });
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
