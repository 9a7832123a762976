import { QueryTypes } from 'sequelize';
import { request } from './http';
import type { AccountIdentity, World } from './matrix';
import { ACCOUNT_IDENTITIES } from './matrix';
import { stack } from './stack';

/** What one identity read of a resource: its body, or null for a 404. */
export type Seen = Record<string, unknown> | null;

/** The reads of one resource by every identity, after the event with `serial` was written. */
export interface Snapshot {
  serial: number;
  seen: Record<AccountIdentity, Seen>;
}

/** The newest event's serial. */
export async function lastSerial(): Promise<number> {
  const [row] = await stack().db.sequelize.query<{ serial: number | null }>(
    'SELECT MAX(serial) AS serial FROM events',
    { type: QueryTypes.SELECT },
  );
  return Number(row.serial ?? 0);
}

/**
 * Reads of resources by every identity of the matrix, each taken right after a write (or right
 * before a deletion), so that an event can be held to what its reader read of its resource at the
 * same moment. A resource is named by its path below the API (`network-services/ns-1`).
 */
export class ReadLog {
  private readonly snapshots = new Map<string, Snapshot[]>();

  constructor(private readonly world: World) {}

  /** Reads `path` as every identity now. */
  async observe(path: string): Promise<void> {
    const serial = await lastSerial();
    const reads = await Promise.all(
      ACCOUNT_IDENTITIES.map(async (identity) => {
        const response = await request('GET', `/${path}`, { token: this.world.tokens[identity] });
        if (response.status !== 200 && response.status !== 404)
          throw new Error(`GET /${path} as ${identity} answered ${response.status}: ${response.text}`);
        return [identity, response.status === 200 ? (response.body as Record<string, unknown>) : null];
      }),
    );
    const list = this.snapshots.get(path) ?? [];
    list.push({ serial, seen: Object.fromEntries(reads) as Record<AccountIdentity, Seen> });
    this.snapshots.set(path, list);
  }

  /** Every snapshot of `path`, oldest first. */
  of(path: string): Snapshot[] {
    return this.snapshots.get(path) ?? [];
  }

  /**
   * The snapshot that shows `path` as the event with `serial` left it: the first one taken after
   * it, or for a deletion the last one taken before it.
   */
  at(path: string, serial: number, deletion: boolean): Snapshot | undefined {
    const list = this.of(path);
    return deletion
      ? list.filter((snapshot) => snapshot.serial < serial).pop()
      : list.find((snapshot) => snapshot.serial >= serial);
  }
}
