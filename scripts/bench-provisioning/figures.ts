import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import type { Order } from './place-orders';

export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '–');

/**
 * The activities one provisioning scheduled until its connection reached production, from its
 * workflow history: the ones scheduled after it went live (the workflow lives on) do not count.
 */
export async function activitiesUntilProduction(
  client: Client,
  order: Order,
  observedEpochMs: number,
): Promise<{ count: number; types: string[]; inHistory: number }> {
  const history = await client.workflow.getHandle(provisioningWorkflowId(order.id!)).fetchHistory();
  // The database's time of the change to production separates the two exactly; the moment it was
  // seen serves when that time is implausible.
  const changed = order.productionEpochMs;
  const cutoff =
    changed !== undefined && changed <= observedEpochMs + 1000 && changed >= observedEpochMs - 600_000
      ? changed
      : observedEpochMs;
  const scheduled = (history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes);
  const before = scheduled.filter((event) => tsToMs(event.eventTime) <= cutoff);
  return {
    count: before.length,
    types: before.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? '?'),
    inHistory: scheduled.length,
  };
}

export function tally(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(', ');
}

/** What the worker's metrics say of the run: connections timed to production and their mean time. */
export async function workerFigures(port: number): Promise<string> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const value = (series: string) =>
      Number(new RegExp(`^${series}\\{type="connection"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    const count = value('ixapi_provisioning_duration_seconds_count');
    const sum = value('ixapi_provisioning_duration_seconds_sum');
    return `${count} connections timed to production, ${((sum / count) * 1000).toFixed(0)} ms on average (ixapi_provisioning_duration_seconds)`;
  } catch (error) {
    return `not read (${error instanceof Error ? error.message : String(error)})`;
  }
}
