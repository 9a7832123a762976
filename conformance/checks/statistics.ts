import type { HttpResponse } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import type { Item } from '../steps/items';
import { isItem, show } from '../steps/items';
import { hasProblemType, problemTypeOf, propertyNames } from '../steps/problems';
import { wholeList } from '../steps/whole-lists';

/**
 * Traffic statistics of a connection the primary account has: read-only, so they run in every
 * profile.
 */

const READ = 'connections_statistics_read';

/** A connection the primary account manages or consumes, one in production and all its own first. */
async function ownConnection(t: CheckContext): Promise<{ id: string; whollyOwn: boolean }> {
  const primary =
    (await t.session()).accountId ?? t.inconclusive('the primary token does not name its account');
  const whollyOwn = (c: Item) => c.managing_account === primary && c.consuming_account === primary;
  const own = (await wholeList(t, 'connections_list'))
    .filter((c) => c.managing_account === primary || c.consuming_account === primary)
    .sort(
      (a, b) =>
        Number(a.state !== 'production') - Number(b.state !== 'production') ||
        Number(!whollyOwn(a)) - Number(!whollyOwn(b)) ||
        String(a.id).localeCompare(String(b.id)),
    );
  const connection =
    own[0] ?? t.inconclusive('the primary account has no connection', 'a connection of the primary account');
  return { id: String(connection.id), whollyOwn: whollyOwn(connection) };
}

/**
 * Holds every aggregate of a statistics answer to its own window: accuracy a share in [0, 1] and
 * a start before its end. Answers the keys it holds.
 */
function holdAggregates(t: CheckContext, response: HttpResponse, what: string): string[] {
  if (!t.must(response.status === 200, `${what} answered ${response.status}, not 200`)) return [];
  const aggregates = isItem(response.body) ? response.body.aggregates : undefined;
  if (!t.must(isItem(aggregates), `${what} has no aggregates: ${response.text.slice(0, 120)}`)) return [];
  const keys = Object.keys(aggregates as Item);
  t.must(keys.length > 0, `${what} has no aggregate at all`);
  for (const [key, aggregate] of Object.entries(aggregates as Item)) {
    if (!t.must(isItem(aggregate), `aggregate ${key} of ${what} is ${show(aggregate)}`)) continue;
    const { accuracy, start, end } = aggregate as Item;
    t.must(
      typeof accuracy === 'number' && accuracy >= 0 && accuracy <= 1,
      `aggregate ${key} of ${what} has the accuracy ${show(accuracy)}, not a share between 0 and 1`,
    );
    const from = typeof start === 'string' ? Date.parse(start) : NaN;
    const to = typeof end === 'string' ? Date.parse(end) : NaN;
    t.must(
      from < to,
      `aggregate ${key} of ${what} runs from ${show(start)} to ${show(end)}, not from a start to a later end`,
    );
  }
  return keys;
}

/** A 400 validation-error naming one of `names`. */
function refusedWindow(t: CheckContext, response: HttpResponse, names: readonly string[], what: string) {
  if (!t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) return;
  t.must(
    hasProblemType(response, 'validation-error'),
    `${what} was refused as ${problemTypeOf(response)}, not validation-error`,
  );
  const named = propertyNames(response.body);
  t.must(
    names.some((name) => named.includes(name)),
    `the 400 for ${what} names ${named.join(', ') || 'nothing'}, not ${names.join(' or ')}`,
  );
}

const STATISTICS_CHECK: CheckDefinition = {
  id: 'STAT-001',
  title:
    "GET /connections/{id}/statistics of the primary account's connection holds its windows to themselves, and refuses windows that are not",
  clause:
    'Statistics: 200 with aggregates keyed by window, each with accuracy in [0, 1] and a start before its end; with start and end (RFC 3339) a single aggregate under custom; only one of them, a malformed date-time or an end before the start is a 400 validation-error naming the parameter; another account asking is answered 404.',
  operations: [READ],
  requires: [READ, 'connections_list'],
  safety: 'read',
  async run(t) {
    const { id, whollyOwn } = await ownConnection(t);
    const sliding = holdAggregates(t, await t.call(READ, { id }), `the statistics of connection ${id}`);
    t.must(!sliding.includes('custom'), `without start and end the statistics of ${id} hold a custom window`);
    const end = new Date(Date.now() - 60_000);
    const start = new Date(end.getTime() - 24 * 3600_000);
    const window = (from: string, to: string) =>
      `start=${encodeURIComponent(from)}&end=${encodeURIComponent(to)}`;
    const custom = holdAggregates(
      t,
      await t.call(READ, { id, query: window(start.toISOString(), end.toISOString()) }),
      `the statistics of connection ${id} from ${start.toISOString()} to ${end.toISOString()}`,
    );
    if (custom.length)
      t.must(
        custom.length === 1 && custom[0] === 'custom',
        `the statistics of ${id} for a window of its own are keyed ${custom.join(', ')}, not custom alone`,
      );
    const bad: Array<[string, readonly string[], string]> = [
      [`start=${encodeURIComponent(start.toISOString())}`, ['start', 'end'], 'a start without an end'],
      [window('yesterday', end.toISOString()), ['start'], 'a malformed start'],
      [window(end.toISOString(), start.toISOString()), ['start', 'end'], 'an end before the start'],
    ];
    for (const [query, names, what] of bad)
      refusedWindow(t, await t.call(READ, { id, query }), names, `the statistics of ${id} with ${what}`);
    // Another account might be the one consuming it; a connection wholly the primary's is no other's.
    if (whollyOwn && t.suite.hasCredentials('secondary')) {
      const foreign = await t.call(READ, { id, role: 'secondary' });
      t.must(
        foreign.status === 404,
        `another account asking for the statistics of connection ${id} got ${foreign.status}, not 404`,
      );
    }
  },
};

/** Checks of traffic statistics; they only read. */
export const STATISTICS_CHECKS: CheckDefinition[] = [STATISTICS_CHECK];
