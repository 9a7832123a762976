import type { TrafficRepository, TrafficSubjectFacts } from '../../db/repositories/traffic-repository';
import type { Scope } from '../../domain/authority';
import { accessToOwned, canSee } from '../../domain/authority';
import { NotFoundError } from '../../domain/errors';
import type {
  AggregateStatistics,
  CounterSample,
  StatisticsSubjectType,
  TrafficSubjectType,
} from '../../domain/statistics';
import { customAggregate, requestedWindow, slidingAggregates, windowStart } from '../../domain/statistics';
import type { OperationContext, OperationDefinition } from '../operations';
import type { WriteContext } from '../writes';

/** Light levels the collector read longer ago than this many sampling intervals are not shown. */
const OPTICS_FRESH_INTERVALS = 3;

/**
 * Traffic statistics of the subjects the registry's families name (ports, connections, service
 * configs, network services), aggregated from the collector's samples. They are shown to whoever
 * may read the subject; to anybody else it does not exist. A network service is not sampled
 * itself: its statistics add up the traffic of the caller's configs of it (whatever the driver,
 * the collector samples each config on the interface that carries it).
 */
export function statisticsOperations(deps: {
  traffic: TrafficRepository;
  /** The collector's sampling interval, which says how many samples a window should hold. */
  intervalSeconds: number;
  writes: WriteContext;
  subjects: readonly StatisticsSubjectType[];
  clock?: () => Date;
}): OperationDefinition[] {
  const { traffic, writes } = deps;
  const clock = deps.clock ?? (() => new Date());

  /** The subject, if the caller may read it. */
  async function visible(
    subjectType: TrafficSubjectType,
    id: string,
    scope: Scope,
  ): Promise<TrafficSubjectFacts> {
    const subject = await traffic.findSubject(subjectType, id);
    if (!subject || !canSee(accessToOwned(subject, scope)))
      throw new NotFoundError(`no ${subjectType}s with id ${id}`);
    return subject;
  }

  /**
   * The sampled subjects whose traffic makes up what the caller sees of the subject: the subject
   * itself, or the caller's configs of a network service (none: the service carries nothing of
   * the caller's). One the caller may not read is not found.
   */
  async function sampledSubjects(
    subjectType: StatisticsSubjectType,
    id: string,
    scope: Scope,
  ): Promise<Array<{ subjectType: TrafficSubjectType; id: string }>> {
    if (subjectType !== 'network_service') {
      await visible(subjectType, id, scope);
      return [{ subjectType, id }];
    }
    const configs = await traffic.configsOfService(id, scope.accounts);
    if (!configs) throw new NotFoundError(`no network_services with id ${id}`);
    return configs.map((config) => ({ subjectType: 'network_service_config', id: config }));
  }

  /**
   * The samples of each subject from `from` to `to` taken while an account of the caller's held
   * it (a port's earlier holders' traffic is theirs), the subjects read side by side.
   */
  function samplesOfEach(
    subjects: ReadonlyArray<{ subjectType: TrafficSubjectType; id: string }>,
    from: Date,
    to: Date,
    scope: Scope,
  ): Promise<CounterSample[][]> {
    return Promise.all(
      subjects.map((subject) => traffic.samplesOf(subject.subjectType, subject.id, from, to, scope.accounts)),
    );
  }

  /** The sliding windows, or the one window `start` and `end` name, of the subjects' traffic added up. */
  async function aggregatesOf(
    subjects: ReadonlyArray<{ subjectType: TrafficSubjectType; id: string }>,
    custom: { start: Date; end: Date } | undefined,
    scope: Scope,
  ): Promise<Record<string, AggregateStatistics>> {
    const now = clock();
    const { intervalSeconds } = deps;
    if (custom) {
      const series = await samplesOfEach(subjects, custom.start, custom.end, scope);
      return customAggregate(series, { ...custom, now, intervalSeconds });
    }
    const series = await samplesOfEach(subjects, windowStart('P1Y', now), now, scope);
    return slidingAggregates(series, { now, intervalSeconds });
  }

  /**
   * Transmit and receive power of the port's optics, one channel each, as the collector last read
   * them; none when they were not read lately (a driver without optics, a device not answering).
   */
  async function lightLevels(port: string) {
    const since = new Date(clock().getTime() - OPTICS_FRESH_INTERVALS * deps.intervalSeconds * 1000);
    const reading = await traffic.opticsOf(port, since);
    return reading ? { light_levels_tx: [reading.txDbm], light_levels_rx: [reading.rxDbm] } : {};
  }

  return deps.subjects.map((subjectType) => ({
    operationId: `${subjectType}s_statistics_read`,
    authenticated: true,
    async handle({ params, query, caller }: OperationContext) {
      const scope = await writes.scope(caller);
      const subjects = await sampledSubjects(subjectType, params.id, scope);
      const custom = requestedWindow({ start: query.start, end: query.end });
      const aggregates = await aggregatesOf(subjects, custom, scope);
      // A port also shows the light levels of its optics.
      const optics = subjectType === 'port' ? await lightLevels(params.id) : {};
      return { status: 200, body: { aggregates, ...optics } };
    },
  }));
}
