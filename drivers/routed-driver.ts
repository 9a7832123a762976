import type {
  BgpSession,
  Candidate,
  CommitResult,
  ConfigChange,
  CounterReading,
  DeviceDriver,
  DeviceIntent,
  InterfaceState,
  LagConfig,
  OpticsReading,
  ServiceAttachment,
} from './contract';
import { DriverError } from './contract';

export interface RoutedDriverOptions {
  /** The driver of the switches: interfaces, LAGs, services, optics and counters. */
  switches: DeviceDriver;
  /** The driver of the route servers: BGP sessions. */
  routeServers: DeviceDriver;
  /** Whether a device is a route server (a network feature of the catalogue). */
  isRouteServer: (device: string) => Promise<boolean>;
}

/**
 * One driver over two: the switches' and the route servers'. Each call goes to the driver of the
 * device it names; a commit to the driver that loaded its candidate. The capabilities are the
 * switches', with BGP sessions as the route servers' driver has them.
 */
export class RoutedDriver implements DeviceDriver {
  readonly kind: string;
  readonly capabilities: DeviceDriver['capabilities'];
  /** Which driver loaded a candidate; load and commit run in one activity. */
  private readonly loadedBy = new Map<string, DeviceDriver>();

  constructor(private readonly options: RoutedDriverOptions) {
    this.kind = `${options.switches.kind}+${options.routeServers.kind}`;
    this.capabilities = {
      ...options.switches.capabilities,
      bgpSessions: options.routeServers.capabilities.bgpSessions,
    };
  }

  private async driverOf(device: string): Promise<DeviceDriver> {
    return (await this.options.isRouteServer(device)) ? this.options.routeServers : this.options.switches;
  }

  async load(intent: DeviceIntent): Promise<Candidate> {
    const driver = await this.driverOf(intent.device);
    const candidate = await driver.load(intent);
    this.loadedBy.set(candidate.id, driver);
    if (this.loadedBy.size > 1000) this.loadedBy.delete(this.loadedBy.keys().next().value!);
    return candidate;
  }

  diff(candidateId: string): Promise<ConfigChange[]> {
    const driver = this.loadedBy.get(candidateId);
    if (!driver)
      return Promise.reject(
        new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`),
      );
    return driver.diff(candidateId);
  }

  /** A candidate this process forgot may still have been committed: each driver looks up the key. */
  async commit(candidateId: string, key: string): Promise<CommitResult> {
    const driver = this.loadedBy.get(candidateId);
    if (driver) return driver.commit(candidateId, key);
    try {
      return await this.options.switches.commit(candidateId, key);
    } catch (error) {
      if (!(error instanceof DriverError && error.code === 'stale-candidate')) throw error;
      return this.options.routeServers.commit(candidateId, key);
    }
  }

  async rollback(device: string, commitId: string): Promise<void> {
    return (await this.driverOf(device)).rollback(device, commitId);
  }

  async readInterfaces(device: string, names?: readonly string[]): Promise<InterfaceState[]> {
    return (await this.driverOf(device)).readInterfaces(device, names);
  }

  async readLags(device: string, names?: readonly string[]): Promise<LagConfig[]> {
    return (await this.driverOf(device)).readLags(device, names);
  }

  async readOptics(device: string, names: readonly string[]): Promise<OpticsReading[]> {
    return (await this.driverOf(device)).readOptics(device, names);
  }

  async readServices(device: string, names?: readonly string[]): Promise<ServiceAttachment[]> {
    return (await this.driverOf(device)).readServices(device, names);
  }

  async readBgpSessions(device: string, names?: readonly string[]): Promise<BgpSession[]> {
    return (await this.driverOf(device)).readBgpSessions(device, names);
  }

  async readCounters(device: string, names: readonly string[]): Promise<CounterReading[]> {
    return (await this.driverOf(device)).readCounters(device, names);
  }
}
