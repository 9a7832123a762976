import type { CheckContext, CheckDefinition } from '../runner';
import { holdPolicy, refuseMalformedDays } from '../steps/cancellation-policies';
import { downloadLoa, holdLoa } from '../steps/letters-of-authorisation';
import type { Subject } from '../steps/subjects';
import { CONNECTIONS, GOING, PORT_RESERVATIONS } from '../steps/subjects';
import { wholeCollection, wholeList } from '../steps/whole-lists';

/**
 * Connections and port reservations as a customer sees them without changing anything: when each
 * could be cancelled and what that would cost (the cancellation policy), its letter of
 * authorisation, and how reservations and their connections refer to each other.
 */

type Item = Record<string, unknown>;

/** Resources of the primary account in production: the ones a policy and a letter exist for. */
async function liveItems(t: CheckContext, subject: Subject): Promise<Item[]> {
  const live = (await wholeCollection(t, subject.list)).filter((item) => item.state === 'production');
  if (!live.length)
    t.inconclusive(
      `the primary account has no ${subject.noun} in production to ask about`,
      `a ${subject.noun} of the primary account in production`,
    );
  return live;
}

/** A resource of the primary account that the secondary one does not see, if both are configured. */
async function hiddenFromSecondary(
  t: CheckContext,
  subject: Subject,
  items: readonly Item[],
): Promise<string | undefined> {
  if (!t.suite.hasCredentials('secondary')) return undefined;
  const seen = new Set((await wholeCollection(t, subject.list, 'secondary')).map((item) => String(item.id)));
  const hidden = items.find((item) => !seen.has(String(item.id)));
  return hidden === undefined ? undefined : String(hidden.id);
}

function policyCheck(subject: Subject): CheckDefinition {
  return {
    id: `POL-${subject.policy}`,
    title: `GET …/cancellation-policy of a ${subject.noun} says when it can go and until when it is charged`,
    clause:
      'Cancellation policy: without decommission_at the answer is the first possible decommission day, not in the past, and the last day charged, usually not before it; asked for that day it answers the same, asked for a later day it answers for that day, charging no less; a malformed day is a 400 validation-error naming decommission_at; the policy of a resource the caller cannot see is a 404.',
    operations: [subject.policy, subject.list],
    safety: 'read',
    async run(t) {
      const live = await liveItems(t, subject);
      for (const item of live.slice(0, 2)) await holdPolicy(t, subject.policy, String(item.id));
      await refuseMalformedDays(t, subject.policy, String(live[0].id));
      const hidden = await hiddenFromSecondary(t, subject, live);
      if (hidden !== undefined) {
        const seen = await t.call(subject.policy, { id: hidden, role: 'secondary' });
        t.must(
          seen.status === 404,
          `another account asking for the policy of ${hidden}, which it cannot see, got ${seen.status}, not 404`,
        );
      }
    },
  };
}

function loaDownloadCheck(subject: Subject): CheckDefinition {
  return {
    id: `LOA-${subject.loaDownload}`,
    title: `GET …/loa of a ${subject.noun} gives its letter of authorisation as a PDF`,
    clause:
      'Letters of authorisation: the LOA of a resource the caller can see answers 200 with a PDF document labelled application/pdf (a complete one, ending with %%EOF); the LOA of a resource the caller cannot see is a 404.',
    operations: [subject.loaDownload, subject.list],
    safety: 'read',
    async run(t) {
      const live = await liveItems(t, subject);
      for (const item of live.slice(0, 2)) {
        const id = String(item.id);
        holdLoa(t, await downloadLoa(t, subject.loaDownload, id), id);
      }
      const hidden = await hiddenFromSecondary(t, subject, live);
      if (hidden !== undefined) {
        const seen = await downloadLoa(t, subject.loaDownload, hidden, 'secondary');
        t.must(
          seen.status === 404,
          `another account downloading the LOA of ${hidden}, which it cannot see, got ${seen.status}, not 404`,
        );
      }
    },
  };
}

const idList = (ids: readonly string[]) => (ids.length ? [...ids].sort().join(', ') : 'none');

/** How connections and their port reservations refer to each other. */
const RESERVATION_LINKS: CheckDefinition = {
  id: 'PRES-001',
  title: "A connection's port reservations exist and name it, and connection=<id> lists exactly them",
  clause:
    "Port reservations: each id in a connection's port_reservations is a reservation the caller can read whose connection is that connection; a reservation that is not going or gone is listed by its connection, which the caller can read; the connection filter keeps exactly that connection's reservations.",
  operations: ['port_reservations_list', 'port_reservations_read', 'connections_list', 'connections_read'],
  safety: 'read',
  async run(t) {
    const connections = await wholeCollection(t, 'connections_list');
    const reservations = await wholeCollection(t, 'port_reservations_list');
    const byId = new Map(reservations.map((reservation) => [String(reservation.id), reservation]));
    const listing = connections.filter(
      (connection) => Array.isArray(connection.port_reservations) && connection.port_reservations.length,
    );
    if (!listing.length)
      t.inconclusive(
        'no connection of the primary account lists port reservations',
        'a port reservation of the primary account',
      );
    for (const connection of listing.slice(0, 5)) {
      const id = String(connection.id);
      for (const reservationId of (connection.port_reservations as unknown[]).map(String)) {
        let reservation = byId.get(reservationId);
        if (!reservation) {
          const read = await t.call('port_reservations_read', { id: reservationId });
          t.must(
            read.status === 200,
            `connection ${id} lists port reservation ${reservationId}, which answers ${read.status}`,
          );
          if (read.status === 200) reservation = read.body as Item;
        }
        if (reservation)
          t.must(
            reservation.connection === id,
            `port reservation ${reservationId}, listed by connection ${id}, names connection ${String(reservation.connection)}`,
          );
      }
      const filtered = (
        await wholeList(t, 'port_reservations_list', { query: `connection=${encodeURIComponent(id)}` })
      ).map((reservation) => String(reservation.id));
      const expected = reservations
        .filter((reservation) => reservation.connection === id)
        .map((reservation) => String(reservation.id));
      t.must(
        idList(filtered) === idList(expected),
        `connection=${id} lists ${idList(filtered)}; the reservations of that connection are ${idList(expected)}`,
      );
    }
    const known = new Map(connections.map((connection) => [String(connection.id), connection]));
    const unreadable = new Set<string>();
    for (const reservation of reservations) {
      if (GOING.includes(String(reservation.state))) continue;
      const connectionId = String(reservation.connection);
      let connection = known.get(connectionId);
      if (!connection && !unreadable.has(connectionId) && unreadable.size < 5) {
        const read = await t.call('connections_read', { id: connectionId });
        if (read.status === 200) connection = read.body as Item;
        else unreadable.add(connectionId);
      }
      if (unreadable.has(connectionId)) {
        t.must(
          false,
          `port reservation ${String(reservation.id)} names connection ${connectionId}, which the caller cannot read; a reservation is seen by whoever sees its connection`,
        );
      } else if (connection && Array.isArray(connection.port_reservations)) {
        t.must(
          connection.port_reservations.map(String).includes(String(reservation.id)),
          `port reservation ${String(reservation.id)} (${String(reservation.state)}) names connection ${connectionId}, which does not list it`,
        );
      }
    }
  },
};

/** Another account's change of what it cannot see. */
const FOREIGN_CHANGES: CheckDefinition = {
  id: 'ISO-008',
  title: "Another account cannot change the primary account's connections or port reservations",
  clause:
    'Authorisation: a change of a resource the caller cannot see answers 404 (a 403 would reveal that it exists); an empty PATCH changes nothing, even where it is wrongly let through.',
  operations: [
    'connections_partial_update',
    'connections_list',
    'port_reservations_partial_update',
    'port_reservations_list',
  ],
  requires: ['connections_partial_update', 'connections_list'],
  safety: 'read',
  async run(t) {
    if (!t.suite.hasCredentials('secondary'))
      t.notApplicable('no credentials for a second account were given');
    let tried = 0;
    for (const subject of [CONNECTIONS, PORT_RESERVATIONS]) {
      if (!t.suite.isDeclared(subject.list) || !t.suite.isDeclared(subject.patch)) continue;
      const hidden = await hiddenFromSecondary(t, subject, await wholeCollection(t, subject.list));
      if (hidden === undefined) continue;
      tried += 1;
      const patched = await t.call(subject.patch, { id: hidden, role: 'secondary', body: {} });
      t.must(
        patched.status === 404,
        `another account's PATCH of ${subject.noun} ${hidden}, which it cannot see, answered ${patched.status}, not 404`,
      );
    }
    if (!tried)
      t.inconclusive(
        'the primary account has no connection or reservation hidden from the other',
        'a connection of the primary account',
      );
  },
};

/** Read-only checks of connections and port reservations. */
export const CONNECTION_READ_CHECKS: CheckDefinition[] = [
  policyCheck(CONNECTIONS),
  policyCheck(PORT_RESERVATIONS),
  loaDownloadCheck(CONNECTIONS),
  loaDownloadCheck(PORT_RESERVATIONS),
  RESERVATION_LINKS,
  FOREIGN_CHANGES,
];
