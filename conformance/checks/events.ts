import { isDeepStrictEqual } from 'node:util';
import type { CheckDefinition } from '../runner';
import { announced } from '../steps/extensions';
import { isItem } from '../steps/items';
import { wholeCollection, wholeList } from '../steps/whole-lists';

/**
 * The filter of the event log by resource, an extension IX-API does not define (nor the log): the
 * check applies only to a server that announces it in `GET /extensions` under this name.
 */
export const EVENTS_RESOURCE_EXTENSION = 'events-resource-filter';

type Item = Record<string, unknown>;

/** The resource an event is about, as its payload names it: its `id`, or the id of the resource it holds. */
function resourceOf(event: Item): string | undefined {
  const payload = isItem(event.payload) ? event.payload : {};
  if (typeof payload.id === 'string') return payload.id;
  const held = Object.values(payload).find((value) => isItem(value) && typeof value.id === 'string');
  return held ? String((held as Item).id) : undefined;
}

const serialsOf = (events: readonly Item[]) => events.map((event) => Number(event.serial));

export const EVENT_CHECKS: CheckDefinition[] = [
  {
    id: 'EXT-002',
    title: "GET /events?resource= lists one resource's events, and only to those who read them",
    clause: `Extensions (where GET /extensions announces ${EVENTS_RESOURCE_EXTENSION}): resource=<id> keeps exactly the events of the log about the resource with that id (holding it, or naming it as their id), combines with type and serial_gt as a conjunction, and never shows what the caller does not read without it: an unrelated account reads no event about the primary account.`,
    operations: ['events_list', 'api_extensions_list'],
    safety: 'read',
    async run(t) {
      await announced(t, EVENTS_RESOURCE_EXTENSION);
      const log = await wholeCollection(t, 'events_list');
      const named = log.filter((event) => resourceOf(event) !== undefined);
      if (!named.length)
        t.inconclusive('no event of the log names a resource', 'an event of the primary account');
      // The resource with the most events, so that the combinations keep some and leave some out.
      const counts = new Map<string, number>();
      for (const event of named) counts.set(resourceOf(event)!, (counts.get(resourceOf(event)!) ?? 0) + 1);
      const resource = [...counts].sort(([, a], [, b]) => b - a)[0][0];
      const about = log.filter((event) => resourceOf(event) === resource);
      // Events appended since the log was read are left out of every comparison.
      const newest = Math.max(...serialsOf(log));
      const read = async (query: string) =>
        (
          await wholeList(t, 'events_list', { query: `resource=${encodeURIComponent(resource)}${query}` })
        ).filter((event) => Number(event.serial) <= newest);
      const found = await read('');
      const foreign = found.filter((event) => resourceOf(event) !== resource);
      t.must(
        !foreign.length,
        `resource=${resource} kept events about other resources (serials ${serialsOf(foreign).slice(0, 5).join(', ')})`,
      );
      t.must(
        isDeepStrictEqual(serialsOf(found), serialsOf(about)),
        `resource=${resource} gave the events ${serialsOf(found).slice(0, 10).join(', ')}; the log has ${serialsOf(about).slice(0, 10).join(', ')} about it`,
      );
      const type = String(about[0].type);
      const typed = await read(`&type=${encodeURIComponent(type)}`);
      t.must(
        isDeepStrictEqual(serialsOf(typed), serialsOf(about.filter((event) => event.type === type))),
        `resource=${resource}&type=${type} gave ${typed.length} events; ${about.filter((event) => event.type === type).length} of the log match both`,
      );
      const since = Number(about[0].serial);
      const later = await read(`&serial_gt=${since}`);
      t.must(
        isDeepStrictEqual(serialsOf(later), serialsOf(about.slice(1))),
        `resource=${resource}&serial_gt=${since} gave ${later.length} events; ${about.length - 1} of the log match both`,
      );
      if (!t.suite.hasCredentials('secondary')) {
        t.note(
          'no credentials for a second account were given: what an unrelated account reads is not judged',
        );
        return;
      }
      const account =
        (await t.session()).accountId ?? t.inconclusive('the access token names no account (no sub claim)');
      const leaked = await wholeList(t, 'events_list', {
        query: `resource=${encodeURIComponent(account)}`,
        role: 'secondary',
      });
      t.must(
        !leaked.length,
        `resource=${account} shows an unrelated account ${leaked.length} events about the primary account`,
      );
    },
  },
];
