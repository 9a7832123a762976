import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type {
  BgpSession,
  CommitResult,
  CounterReading,
  DeviceDriver,
  DeviceIntent,
  InterfaceState,
  LagConfig,
  ServiceAttachment,
} from '../../drivers/contract';
import { DriverError } from '../../drivers/contract';
import { COUNTER_NAMES } from '../../domain/statistics';
import { session } from '../support/device-intents';

/** What the parts of the device driver contract share: the cases they build and how they expect refusals. */

/** What the contract tests need of a driver under test. */
export interface DriverUnderTest {
  driver: DeviceDriver;
  device: string;
  /** At least four interfaces of one speed, in no LAG, that the tests may change freely. */
  interfaces: string[];
  /**
   * A route server whose sessions named `contract-…` the tests may change freely; a driver with
   * `bgpSessions` must name one.
   */
  routeServer?: string;
}

export const key = () => `contract-${randomBytes(6).toString('hex')}`;

export type Tags = Pick<ServiceAttachment, 'vlanType' | 'outerVlan' | 'innerVlan'>;
export const untagged: Tags = { vlanType: 'port', outerVlan: null, innerVlan: null };
export const dot1q = (tag: number): Tags => ({ vlanType: 'dot1q', outerVlan: tag, innerVlan: null });
export const qinq = (outer: number, inner: number): Tags => ({
  vlanType: 'qinq',
  outerVlan: outer,
  innerVlan: inner,
});

export const service = (
  name: string,
  parent: string,
  tags: Tags,
  extra: Partial<ServiceAttachment> = {},
): ServiceAttachment => ({
  name,
  description: '',
  parent,
  ...tags,
  macs: [],
  macFilter: false,
  rateLimit: null,
  segment: 'contract-segment',
  isolated: false,
  ...extra,
});

// Addresses outside the peering LANs of the demo catalogue (benchmarking and documentation ranges),
// so that the tests' sessions never take a member's address on a route server in use.
export const PEER_V4 = '198.18.0.1';
export const PEER_V4_OTHER = '198.18.0.2';
export const PEER_V6 = '2001:db8:ffff::1';
export const PEER_V6_OTHER = '2001:db8:ffff::2';

export { session };

export const byName = <T extends { name: string }>(items: T[]): T[] =>
  [...items].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
/** The counters a reading carries, as the domain names them. */
export const COUNTERS = COUNTER_NAMES;

/** The counters of a reading alone, to compare readings of different instants. */
export const countersOf = (reading: CounterReading) => COUNTERS.map((name) => reading[name]);

export async function expectDriverError(
  action: Promise<unknown>,
  code: DriverError['code'],
): Promise<DriverError> {
  try {
    await action;
  } catch (error) {
    assert.ok(error instanceof DriverError, `expected a DriverError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected a ${code} DriverError`);
}

/**
 * The driver under test and its interfaces, as the contract's before hook finds them, and the helpers
 * that act on it: what the contract's parts (driver-contract-*.ts) run their tests against.
 */
export interface ContractScope {
  readonly driver: DeviceDriver;
  readonly device: string;
  readonly a: string;
  readonly b: string;
  readonly c: string;
  readonly d: string;
  readonly routeServer: string | undefined;
  readonly apply: (intent: Omit<DeviceIntent, 'device'>) => Promise<CommitResult>;
  readonly read: (names: string[]) => Promise<InterfaceState[]>;
  readonly readServices: (names?: string[]) => Promise<ServiceAttachment[]>;
  readonly lagMode: () => Pick<LagConfig, 'mode' | 'lacpTimeout'>;
  readonly servicesSupported: () => Promise<boolean>;
  readonly sessionsHost: () => Promise<string | undefined>;
  readonly applyOn: (host: string, intent: Omit<DeviceIntent, 'device'>) => Promise<CommitResult>;
  readonly readSessions: (host: string, names?: string[]) => Promise<BgpSession[]>;
  readonly ourSessions: (host: string) => Promise<BgpSession[]>;
  readonly bundleParent: () => Promise<string>;
}
