import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Activities } from '../../../activities';
import { moveIdempotently } from '../../../activities/failures';
import type { LifecycleEvent, State } from '../../../domain/states';
import { transition } from '../../../domain/states';
import type { StatusEntry } from '../../../domain/status';

export type ActivityName = keyof Activities;
type Input<N extends ActivityName> = Parameters<Activities[N]>[0];
type Output<N extends ActivityName> = Awaited<ReturnType<Activities[N]>>;
/** How a fake activity answers: `attempt` counts Temporal's tries of this one call (1 first). */
export type Handler<N extends ActivityName> = (
  input: Input<N>,
  attempt: number,
) => Output<N> | Promise<Output<N>>;

/** Every activity the worker registers; the compiler refuses a list that misses or invents one. */
const ACTIVITY_NAMES: Record<ActivityName, true> = {
  connectionPlacement: true,
  connectionAgenda: true,
  configureConnection: true,
  deconfigureConnection: true,
  releaseConnectionPorts: true,
  checkConnectionOptics: true,
  moveConnection: true,
  recordConnectionStatus: true,
  networkServiceAgenda: true,
  moveNetworkService: true,
  recordNetworkServiceStatus: true,
  orderCloudCircuit: true,
  connectCloudHandovers: true,
  changeCloudBandwidth: true,
  releaseCloudCircuit: true,
  networkServiceConfigAgenda: true,
  configureNetworkServiceConfig: true,
  deconfigureNetworkServiceConfig: true,
  verifyNetworkServiceConfig: true,
  moveNetworkServiceConfig: true,
  recordNetworkServiceConfigStatus: true,
  networkFeatureConfigAgenda: true,
  configureNetworkFeatureConfig: true,
  deconfigureNetworkFeatureConfig: true,
  verifyNetworkFeatureConfig: true,
  moveNetworkFeatureConfig: true,
  recordNetworkFeatureConfigStatus: true,
  sampleTraffic: true,
  superviseDevices: true,
  reconcileDevices: true,
  checkAccountOnboarding: true,
  recordAccountStatus: true,
  completeAccountOnboarding: true,
};

export interface Call {
  name: ActivityName;
  input: Record<string, unknown>;
  attempt: number;
}

/**
 * Plain functions under the worker's activity names: each call is recorded, and answered as the
 * test scripted it. An activity no test scripted fails for good, so a workflow calling something
 * unexpected shows.
 */
export class FakeActivities {
  readonly calls: Call[] = [];
  private readonly handlers = new Map<ActivityName, (input: any, attempt: number) => unknown>();

  on<N extends ActivityName>(name: N, handler: Handler<N>): this {
    this.handlers.set(name, handler as (input: any, attempt: number) => unknown);
    return this;
  }

  /** The calls of `name` (every attempt), oldest first. */
  callsOf(name: ActivityName): Call[] {
    return this.calls.filter((call) => call.name === name);
  }

  /** The names called, in order, leaving out `ignored` (reads, typically). */
  names(ignored: ActivityName[] = []): ActivityName[] {
    return this.calls.map((call) => call.name).filter((name) => !ignored.includes(name));
  }

  activities(): Record<ActivityName, (input: Record<string, unknown>) => Promise<unknown>> {
    const fakes = {} as Record<ActivityName, (input: Record<string, unknown>) => Promise<unknown>>;
    for (const name of Object.keys(ACTIVITY_NAMES) as ActivityName[])
      fakes[name] = async (input) => {
        const attempt = Context.current().info.attempt;
        this.calls.push({ name, input: structuredClone(input), attempt });
        const handler = this.handlers.get(name);
        if (!handler) throw ApplicationFailure.nonRetryable(`${name} is not scripted`, 'NotScripted');
        return await handler(input, attempt);
      };
    return fakes;
  }
}

/** A stored resource's agenda: what every stateful resource's agenda has. */
export interface StoredState {
  state: State;
  cancelRequested: boolean;
  billed: boolean;
  decommissionAt: string | null;
}

/** A lifecycle move the fake store carried out. */
export interface Move {
  event: LifecycleEvent;
  from: State;
  to: State;
  status: StatusEntry[];
}

/**
 * The stored resource behind a workflow, in memory: the agenda the workflow reads (the test changes
 * it as the API would), and moves along the project's transition table, idempotent and refusing
 * what the table does not allow as the real move activities do.
 */
export class FakeResource<A extends StoredState> {
  agenda: A | null;
  readonly moves: Move[] = [];
  /** The status entries recorded without a move (waiting notes). */
  readonly notes: StatusEntry[][] = [];

  constructor(initial: A) {
    this.agenda = { ...initial };
  }

  get state(): State | undefined {
    return this.agenda?.state;
  }

  /** What the API changes of the stored resource. */
  set(change: Partial<A>): void {
    if (!this.agenda) throw new Error('the resource is gone');
    Object.assign(this.agenda, change);
  }

  read(): A | null {
    return this.agenda ? structuredClone(this.agenda) : null;
  }

  async move(event: LifecycleEvent, status: StatusEntry[]): Promise<State> {
    return moveIdempotently('resource', this.agenda?.state, event, () => {
      const agenda = this.agenda!;
      const from = agenda.state;
      agenda.state = transition(from, event);
      if (agenda.state === 'production') agenda.billed = true;
      this.moves.push({ event, from, to: agenda.state, status });
      return Promise.resolve(agenda.state);
    });
  }

  record(status: StatusEntry[]): void {
    this.notes.push(status);
  }

  /** The events of the moves carried out, in order. */
  events(): LifecycleEvent[] {
    return this.moves.map((move) => move.event);
  }

  /** The tags of the status entries of the moves carried out, in order (moves without status left out). */
  tags(): string[] {
    return this.moves.flatMap((move) => move.status.map((entry) => entry.tag));
  }

  /** The last move's status entry, which the resource shows. */
  lastStatus(): StatusEntry | undefined {
    return this.moves.at(-1)?.status.at(-1);
  }
}

/** A failure retrying cannot fix, as activities report a driver's refusal. */
export const refusal = (message: string, type = 'DriverError:invalid-config') =>
  ApplicationFailure.nonRetryable(message, type);
