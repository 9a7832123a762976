import { setTimeout as sleep } from 'node:timers/promises';
import type { Sequelize } from 'sequelize';
import { newId } from '../../domain/ids';
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
} from '../contract';
import { DriverError } from '../contract';
import { planChanges } from '../intent';
import type { LabFault, LabStore } from './store';
import { createLabStore } from './store';

export interface LabDriverOptions {
  /** Delay before every device operation, unless the device sets its own (default 0). */
  latencyMs?: number;
  /** The lab's time: when traffic starts and stops, and when counters are read (default: now). */
  clock?: () => Date;
}

/**
 * The lab driver: an exchange fabric simulated in the database, so that everything above the
 * driver runs for real. Devices answer after a configurable latency and fail where a fault was
 * injected (`store.injectFault`).
 */
export class LabDriver implements DeviceDriver {
  readonly kind = 'lab';
  readonly capabilities = {
    lags: true,
    lacp: true,
    optics: true,
    rollback: true,
    services: true,
    counters: true,
    bgpSessions: true,
  };
  readonly store: LabStore;

  constructor(
    sequelize: Sequelize,
    private readonly options: LabDriverOptions = {},
  ) {
    this.store = createLabStore(sequelize, options.clock);
  }

  /** Waits the device's latency, then fails if a fault was injected for this call (of `names`). */
  private async reach(
    device: string,
    operation: LabFault['operation'],
    names?: readonly string[],
  ): Promise<{ opticsLow: boolean }> {
    const { latencyMs, faultPending } = await this.store.approach(device, operation);
    const latency = latencyMs ?? this.options.latencyMs ?? 0;
    if (latency > 0) await sleep(latency);
    const fault = faultPending ? await this.store.takeFault(device, operation, names) : undefined;
    if (!fault) return { opticsLow: false };
    if (fault.code === 'optics-low') return { opticsLow: true };
    throw new DriverError(fault.code, `${device}: ${fault.message}`);
  }

  async load(intent: DeviceIntent): Promise<Candidate> {
    await this.reach(intent.device, 'load');
    const snapshot = await this.store.snapshot(intent.device);
    const changes = planChanges(snapshot, intent);
    const candidate = { id: newId('cand'), device: intent.device, changes };
    await this.store.saveCandidate({ ...candidate, baseVersion: snapshot.version });
    return candidate;
  }

  async diff(candidateId: string): Promise<ConfigChange[]> {
    const candidate = await this.store.candidate(candidateId);
    if (!candidate)
      throw new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`);
    return candidate.changes;
  }

  async commit(candidateId: string, key: string): Promise<CommitResult> {
    // A candidate committed before is gone; its key alone answers, without asking the device.
    const candidate = await this.store.candidate(candidateId);
    if (candidate) await this.reach(candidate.device, 'commit');
    return this.store.commit(candidateId, key, newId('commit'));
  }

  async rollback(device: string, commitId: string): Promise<void> {
    await this.reach(device, 'rollback');
    await this.store.rollback(device, commitId);
  }

  async readInterfaces(device: string, names?: readonly string[]): Promise<InterfaceState[]> {
    await this.reach(device, 'readInterfaces', names);
    return this.store.readInterfaces(device, names);
  }

  async readLags(device: string, names?: readonly string[]): Promise<LagConfig[]> {
    await this.reach(device, 'readLags', names);
    return this.store.readLags(device, names);
  }

  async readServices(device: string, names?: readonly string[]): Promise<ServiceAttachment[]> {
    await this.reach(device, 'readServices', names);
    return this.store.readServices(device, names);
  }

  async readBgpSessions(device: string, names?: readonly string[]): Promise<BgpSession[]> {
    await this.reach(device, 'readBgpSessions', names);
    return this.store.readBgpSessions(device, names);
  }

  async readOptics(device: string, names: readonly string[]): Promise<OpticsReading[]> {
    const { opticsLow } = await this.reach(device, 'readOptics', names);
    return this.store.readOptics(device, names, opticsLow);
  }

  async readCounters(device: string, names: readonly string[]): Promise<CounterReading[]> {
    await this.reach(device, 'readCounters', names);
    return this.store.readCounters(device, names);
  }
}
