import type { QueryInterface, Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import * as initial from './migrations/0001-initial';
import * as catalogue from './migrations/0002-catalogue';
import * as access from './migrations/0003-access';
import * as labFabric from './migrations/0004-lab-fabric';
import * as connections from './migrations/0005-connections';
import * as portReservations from './migrations/0006-port-reservations';
import * as macs from './migrations/0007-macs';
import * as sparePorts from './migrations/0008-spare-ports';
import * as networkServiceConfigs from './migrations/0009-network-service-configs';
import * as labServices from './migrations/0011-lab-services';
import * as trafficSamples from './migrations/0010-traffic-samples';
import * as labBgpSessions from './migrations/0012-lab-bgp-sessions';
import * as networkFeatureConfigs from './migrations/0013-network-feature-configs';
import * as virtualCircuits from './migrations/0014-virtual-circuits';
import * as labCloud from './migrations/0015-lab-cloud';
import * as outboxClaims from './migrations/0016-outbox-claims';
import * as requestGuards from './migrations/0017-request-guards';
import * as eventTypes from './migrations/0018-event-types';
import * as eventRetention from './migrations/0019-event-retention';
import * as outboxTraceContext from './migrations/0020-outbox-trace-context';
import * as opticsReadings from './migrations/0021-optics-readings';
import * as collectionVersions from './migrations/0022-collection-versions';
import * as writtenOrder from './migrations/0023-written-order';
import * as sampleHolders from './migrations/0024-sample-holders';
import * as accountNameKeys from './migrations/0025-account-name-keys';
import * as loginRevocations from './migrations/0026-login-revocations';
import * as eventResources from './migrations/0027-event-resources';
import * as apiKeyLastUse from './migrations/0028-api-key-last-use';
import * as outboxClaimHolders from './migrations/0029-outbox-claim-holders';
import * as quotaTurns from './migrations/0030-quota-turns';

interface Migration {
  up(params: { context: QueryInterface }): Promise<void>;
  down(params: { context: QueryInterface }): Promise<void>;
}

/** Every migration, in order. Listed explicitly so the same code runs from TypeScript and from dist/. */
const MIGRATIONS: ReadonlyArray<[string, Migration]> = [
  ['0001-initial', initial],
  ['0002-catalogue', catalogue],
  ['0003-access', access],
  ['0004-lab-fabric', labFabric],
  ['0005-connections', connections],
  ['0006-port-reservations', portReservations],
  ['0007-macs', macs],
  ['0008-spare-ports', sparePorts],
  ['0009-network-service-configs', networkServiceConfigs],
  ['0010-traffic-samples', trafficSamples],
  ['0011-lab-services', labServices],
  ['0012-lab-bgp-sessions', labBgpSessions],
  ['0013-network-feature-configs', networkFeatureConfigs],
  ['0014-virtual-circuits', virtualCircuits],
  ['0015-lab-cloud', labCloud],
  ['0016-outbox-claims', outboxClaims],
  ['0017-request-guards', requestGuards],
  ['0018-event-types', eventTypes],
  ['0019-event-retention', eventRetention],
  ['0020-outbox-trace-context', outboxTraceContext],
  ['0021-optics-readings', opticsReadings],
  ['0022-collection-versions', collectionVersions],
  ['0023-written-order', writtenOrder],
  ['0024-sample-holders', sampleHolders],
  ['0025-account-name-keys', accountNameKeys],
  ['0026-login-revocations', loginRevocations],
  ['0027-event-resources', eventResources],
  ['0028-api-key-last-use', apiKeyLastUse],
  ['0029-outbox-claim-holders', outboxClaimHolders],
  ['0030-quota-turns', quotaTurns],
];

export function createMigrator(sequelize: Sequelize, log: (message: string) => void = () => {}) {
  return new Umzug<QueryInterface>({
    migrations: MIGRATIONS.map(([name, migration]) => ({
      name,
      up: ({ context }) => migration.up({ context }),
      down: ({ context }) => migration.down({ context }),
    })),
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: {
      info: (event: Record<string, unknown>) => {
        if (event.event === 'migrated') log(`migrated ${String(event.name)}`);
      },
      warn: (event: Record<string, unknown>) => log(`migration warning: ${JSON.stringify(event)}`),
      error: (event: Record<string, unknown>) => log(`migration error: ${JSON.stringify(event)}`),
      debug: () => {},
    },
  });
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(sequelize: Sequelize, log?: (message: string) => void): Promise<string[]> {
  const applied = await createMigrator(sequelize, log).up();
  return applied.map((m) => m.name);
}
