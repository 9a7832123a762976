import type { TrafficRepository, TrafficSubjectFacts } from '../../db/repositories/traffic-repository';
import type { Scope } from '../../domain/authority';
import { accessToOwned, canSee } from '../../domain/authority';
import { NotFoundError } from '../../domain/errors';
import type { AggregateStatistics, TrafficSubjectType } from '../../domain/statistics';
import { customAggregate, requestedWindow, slidingAggregates, windowStart } from '../../domain/statistics';
import type { OperationContext, OperationDefinition } from '../operations';
import type { WriteContext } from '../writes';

/** Light levels the collector read longer ago than this many sampling intervals are not shown. */
const OPTICS_FRESH_INTERVALS = 3;

/**
 * Traffic statistics of the subjects the registry's families name (ports, connections, service
 * configs), aggregated from the collector's samples. They are shown to whoever may read the
 * subject; to anybody else it does not exist.
 */
export function statisticsOperations(deps: {
  traffic: TrafficRepository;
  /** The collector's sampling interval, which says how many samples a window should hold. */
  intervalSeconds: number;
  writes: WriteContext;
  subjects: readonly TrafficSubjectType[];
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

  /** The sliding windows, or the one window `start` and `end` name. */
  async function aggregatesOf(
    subjectType: TrafficSubjectType,
    id: string,
    query: OperationContext['query'],
  ): Promise<Record<string, AggregateStatistics>> {
    const custom = requestedWindow({ start: query.start, end: query.end });
    const now = clock();
    const { intervalSeconds } = deps;
    if (custom) {
      const samples = await traffic.samplesOf(subjectType, id, custom.start, custom.end);
      return customAggregate(samples, { ...custom, now, intervalSeconds });
    }
    const samples = await traffic.samplesOf(subjectType, id, windowStart('P1Y', now), now);
    return slidingAggregates(samples, { now, intervalSeconds });
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
      await visible(subjectType, params.id, await writes.scope(caller));
      const aggregates = await aggregatesOf(subjectType, params.id, query);
      // A port also shows the light levels of its optics.
      const optics = subjectType === 'port' ? await lightLevels(params.id) : {};
      return { status: 200, body: { aggregates, ...optics } };
    },
  }));
}
