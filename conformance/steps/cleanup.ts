import type { CheckContext } from '../runner';
import { readWhole } from './whole-lists';

/**
 * Removing what the ledger lists, through the public API.
 */

/**
 * Removes everything the ledger still lists, newest first; a second pass retries what was in use.
 * What the checks share stays unless `shared` is set (at the end of a run, and by `cleanup`).
 */
export async function cleanUp(t: CheckContext, shared = false): Promise<void> {
  for (let pass = 0; pass < 2; pass += 1) {
    for (const entry of t.suite.ledger.outstanding(shared)) {
      const ids = entry.id ? [entry.id] : [];
      if (!entry.id && entry.find) {
        // Cleaning up judges nothing: whatever the list answers, what it holds is removed.
        const found = await readWhole(t, entry.find.list, { query: entry.find.query, role: entry.role });
        ids.push(...found.items.map((item) => String(item.id)));
      }
      let done = true;
      for (const id of ids) {
        const response = await t.send({
          method: t.suite.operation(entry.destroy).method,
          path: t.path(entry.destroy, { id }),
          token: await t.token(entry.role),
        });
        if (![200, 202, 404].includes(response.status)) done = false;
      }
      if (done) t.suite.ledger.removed(entry.seq);
    }
  }
}
