import assert from 'node:assert/strict';
import fc from 'fast-check';
import type {
  BgpSession,
  DeviceIntent,
  InterfaceState,
  LagConfig,
  ServiceAttachment,
} from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import type { DeviceSnapshot } from '../../drivers/intent';
import { planChanges } from '../../drivers/intent';

/** Snapshots, intents and arbitraries of them for the tests of drivers/intent.ts. */

export const NAMES = ['et-0/0/0', 'et-0/0/1', 'et-0/0/2', 'et-0/0/3', 'et-0/0/4'];

export const port = (name: string, extra: Partial<InterfaceState> = {}): InterfaceState => ({
  name,
  description: '',
  enabled: false,
  speed: 100000,
  lag: null,
  operUp: false,
  ...extra,
});

export function snapshotOf(
  lags: LagConfig[] = [],
  services: ServiceAttachment[] = [],
  sessions: BgpSession[] = [],
): DeviceSnapshot {
  const interfaces = new Map(NAMES.map((name) => [name, port(name)]));
  for (const lag of lags)
    for (const member of lag.members) interfaces.set(member, port(member, { lag: lag.name }));
  return {
    interfaces,
    lags: new Map(lags.map((lag) => [lag.name, lag])),
    services: new Map(services.map((service) => [service.name, service])),
    bgpSessions: new Map(sessions.map((session) => [session.name, session])),
  };
}

/** A BGP session of a route server, passive unless `extra` says otherwise. */
export const session = (name: string, peerAddress: string, extra: Partial<BgpSession> = {}): BgpSession => ({
  name,
  peerAsn: 64496,
  peerAddress,
  passive: true,
  password: null,
  asSet: null,
  maxPrefix: null,
  insertIxpAsn: false,
  flags: [],
  ...extra,
});

export const service = (
  name: string,
  parent: string,
  tags: Pick<ServiceAttachment, 'vlanType' | 'outerVlan' | 'innerVlan'>,
  extra: Partial<ServiceAttachment> = {},
): ServiceAttachment => ({
  name,
  description: '',
  parent,
  ...tags,
  macs: [],
  macFilter: false,
  rateLimit: null,
  segment: 'ns-test',
  isolated: false,
  ...extra,
});
export const untagged = { vlanType: 'port', outerVlan: null, innerVlan: null } as const;
export const dot1q = (tag: number) => ({ vlanType: 'dot1q', outerVlan: tag, innerVlan: null }) as const;
export const qinq = (outer: number, inner: number) =>
  ({ vlanType: 'qinq', outerVlan: outer, innerVlan: inner }) as const;

export const comparable = (snapshot: DeviceSnapshot) => ({
  interfaces: [...snapshot.interfaces.values()].sort((x, y) => x.name.localeCompare(y.name)),
  lags: [...snapshot.lags.values()]
    .map((lag) => ({ ...lag, members: [...lag.members].sort() }))
    .sort((x, y) => x.name.localeCompare(y.name)),
  services: [...snapshot.services.values()].sort((x, y) => x.name.localeCompare(y.name)),
  bgpSessions: [...snapshot.bgpSessions.values()].sort((x, y) => x.name.localeCompare(y.name)),
});

const lagArbitrary = fc.record({
  name: fc.constantFrom('ae0', 'ae1', 'ae2'),
  description: fc.constantFrom('', 'peering'),
  mode: fc.constantFrom('lacp' as const, 'static' as const),
  members: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
});

export const intentArbitrary: fc.Arbitrary<DeviceIntent> = fc.record({
  device: fc.constant('dev-1'),
  interfaces: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...NAMES),
      description: fc.constantFrom('', 'cust-1'),
      enabled: fc.boolean(),
    }),
    { selector: (i) => i.name, maxLength: 4 },
  ),
  lags: fc.uniqueArray(
    lagArbitrary.map((lag): LagConfig => ({ ...lag, lacpTimeout: lag.mode === 'lacp' ? 'slow' : null })),
    { selector: (lag) => lag.name, maxLength: 2 },
  ),
  removeLags: fc.uniqueArray(fc.constantFrom('ae0', 'ae1', 'ae2'), { maxLength: 2 }),
});

/** Plans an intent, or says the device would refuse it. */
export function plan(snapshot: DeviceSnapshot, intent: DeviceIntent) {
  try {
    return planChanges(snapshot, intent);
  } catch (error) {
    assert.ok(error instanceof DriverError && error.code === 'invalid-config', String(error));
    return undefined;
  }
}

/** The refusal planning an intent meets, or undefined where it is accepted. */
export function refusalOf(snapshot: DeviceSnapshot, intent: DeviceIntent): DriverError | undefined {
  try {
    planChanges(snapshot, intent);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof DriverError && error.code === 'invalid-config', String(error));
    return error;
  }
}
