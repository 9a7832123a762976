import type { CheckContext } from '../runner';
import { readWhole } from './whole-lists';

/**
 * What GET /extensions announces.
 */

/**
 * Whether the server announces an extension named `name` in GET /extensions (read once per run);
 * ends the check as NOT_APPLICABLE when it does not, and INCONCLUSIVE when the list cannot be read.
 */
export async function announced(t: CheckContext, name: string): Promise<void> {
  let pending = t.suite.memo.get('extensions') as ReturnType<typeof readWhole> | undefined;
  if (!pending) {
    pending = readWhole(t, 'api_extensions_list', { role: null });
    t.suite.memo.set('extensions', pending);
    pending.catch(() => t.suite.memo.delete('extensions'));
  }
  const { items, problems } = await pending;
  if (!items.length && problems.length)
    t.inconclusive(
      `GET /extensions could not be read (${problems[0]}), so whether the server takes ${name} is unknown`,
    );
  problems.forEach((problem) => t.must(false, problem));
  const names = items.map((entry) => entry.name);
  if (!names.includes(name))
    t.notApplicable(
      `GET /extensions announces no extension named ${name} (it lists ${names.map(String).join(', ') || 'none'})`,
    );
}
