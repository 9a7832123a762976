import type { CommitResult } from '../contract';
import type { OvsFabric } from './fabric';
import { ProgramError } from './program';
import { EXTERNAL_IDS } from './topology';
import type { CommitRecord, DeviceState, Layout } from './records';
import { COMMIT_PREFIX, IDS, KEY_PREFIX, mapOf } from './records';

/** The commit made under `key` on `layout`'s bridge, as its commit answered. */
export function committed(layout: Layout, key: string): CommitResult | undefined {
  const commitId = layout.ids.get(KEY_PREFIX + key);
  const raw = commitId && layout.ids.get(COMMIT_PREFIX + commitId);
  if (!commitId || !raw) return undefined;
  const record = JSON.parse(raw) as CommitRecord;
  return { commitId, device: record.device, changes: record.changes };
}

/** The commit under `key` on any device of the fabric, for a candidate this process forgot. */
export async function committedAnywhere(fabric: OvsFabric, key: string): Promise<CommitResult | undefined> {
  const [bridges] = await fabric.transact([
    { op: 'select', table: 'Bridge', where: [], columns: ['external_ids'] },
  ]);
  for (const row of bridges.rows ?? []) {
    const ids = mapOf(row.external_ids);
    const device = ids.get(EXTERNAL_IDS.device);
    if (device === undefined) continue;
    const done = committed({ device, bridge: '', ids, ports: [], interfaces: new Map(), trunk: null }, key);
    if (done) return done;
  }
  return undefined;
}

/** The bridge's keys of the oldest commits and their keys, that one more commit pushes out. */
export function forgotten(layout: Layout, keepCommits: number | undefined): string[] {
  const commits = [...layout.ids]
    .filter(([key]) => key.startsWith(COMMIT_PREFIX))
    .map(([key, value]) => ({ key, record: JSON.parse(value) as CommitRecord }))
    .sort((x, y) => (x.record.at < y.record.at ? -1 : x.record.at > y.record.at ? 1 : 0));
  const excess = commits.length + 1 - (keepCommits ?? 1000);
  return commits.slice(0, Math.max(0, excess)).flatMap(({ key, record }) => [key, KEY_PREFIX + record.key]);
}

/**
 * Takes the device's next version, in one OVSDB transaction that fails unless the device is
 * still at `current`'s: of two processes committing on one state, one wins. Says whether it did.
 */
export async function claim(fabric: OvsFabric, current: DeviceState): Promise<boolean> {
  const bridge = [['name', '==', current.layout.bridge]];
  const version = (value: number) => ['map', [[IDS.version, String(value)]]];
  try {
    await fabric.transact([
      {
        op: 'wait',
        table: 'Bridge',
        timeout: 0,
        where: [...bridge, ['external_ids', 'includes', version(current.version)]],
        columns: ['name'],
        until: '==',
        rows: [{ name: current.layout.bridge }],
      },
      {
        op: 'mutate',
        table: 'Bridge',
        where: bridge,
        mutations: [
          ['external_ids', 'delete', ['set', [IDS.version]]],
          ['external_ids', 'insert', version(current.version + 1)],
        ],
      },
    ]);
    return true;
  } catch (error) {
    if (error instanceof ProgramError && /timed out/.test(error.message)) return false;
    throw error;
  }
}
