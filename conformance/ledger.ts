import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { Role } from './suite';

/**
 * The resources a mutating run creates, written down before each is created and again once it
 * exists, so a run that crashed can still be cleaned up (`cleanup --ledger FILE`). One JSON object
 * a line; later lines about the same entry supersede earlier ones.
 */
export interface LedgerEntry {
  seq: number;
  state: 'intended' | 'created' | 'removed';
  /** The operation that removes it. */
  destroy: string;
  role: Role;
  /** A marker the resource carries (external_ref or name), to find it when its id never arrived. */
  marker: string;
  /** The list operation and query that find it by its marker. */
  find?: { list: string; query: string };
  id?: string;
  /**
   * Set on what the suite provisions for the checks to share (connections, configs, …): the checks
   * leave it alone and the run gives it back at its end.
   */
  shared?: true;
}

export class Ledger {
  private seq = 0;
  private readonly entries = new Map<number, LedgerEntry>();
  /** While set, what is written down is shared by the checks (see `LedgerEntry.shared`). */
  sharing = false;

  constructor(readonly file?: string) {
    if (file && existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const entry = JSON.parse(line) as LedgerEntry;
        this.entries.set(entry.seq, entry);
        this.seq = Math.max(this.seq, entry.seq);
      }
    }
  }

  private write(entry: LedgerEntry): void {
    this.entries.set(entry.seq, entry);
    if (this.file) appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
  }

  intend(entry: Omit<LedgerEntry, 'seq' | 'state'>): number {
    this.seq += 1;
    this.write({ ...entry, ...(this.sharing ? { shared: true } : {}), seq: this.seq, state: 'intended' });
    return this.seq;
  }

  created(seq: number, id: string): void {
    this.write({ ...this.entries.get(seq)!, state: 'created', id });
  }

  removed(seq: number): void {
    this.write({ ...this.entries.get(seq)!, state: 'removed' });
  }

  /**
   * What is still there (or may be), newest first: the order to remove it in. What the checks share
   * is left out unless `shared` is set.
   */
  outstanding(shared = false): LedgerEntry[] {
    return [...this.entries.values()]
      .filter((e) => e.state !== 'removed' && (shared || !e.shared))
      .sort((a, b) => b.seq - a.seq);
  }
}
