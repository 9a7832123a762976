import type { HttpResponse } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import { wholeCollection, wholeList } from './collections';
import { propertyNames } from './statuses';

/**
 * Connections and port reservations as a customer sees them without changing anything: when each
 * could be cancelled and what that would cost (the cancellation policy), its letter of
 * authorisation, and how reservations and their connections refer to each other.
 */

type Item = Record<string, unknown>;

/** A kind of resource as checks that read it back see it. */
export interface Readable {
  /** What reports call one of them. */
  noun: string;
  read: string;
}

/** A kind of resource that is cancelled under a cancellation policy. */
export interface Cancellable extends Readable {
  destroy: string;
  policy: string;
}

/** The operations on one kind of resource that is ordered, changed and cancelled. */
export interface Subject extends Cancellable {
  list: string;
  update: string;
  patch: string;
  loaDownload: string;
  loaUpload: string;
}

export const CONNECTIONS: Subject = {
  noun: 'connection',
  list: 'connections_list',
  read: 'connections_read',
  update: 'connections_update',
  patch: 'connections_partial_update',
  destroy: 'connections_destroy',
  policy: 'connections_cancellation_policy_read',
  loaDownload: 'connections_loa_download',
  loaUpload: 'connections_loa_upload',
};

export const PORT_RESERVATIONS: Subject = {
  noun: 'port reservation',
  list: 'port_reservations_list',
  read: 'port_reservations_read',
  update: 'port_reservations_update',
  patch: 'port_reservations_partial_update',
  destroy: 'port_reservations_destroy',
  policy: 'port_reservation_cancellation_policy_read',
  loaDownload: 'port_reservations_loa_download',
  loaUpload: 'port_reservations_loa_upload',
};

/** States of a resource whose cancellation was asked for and is under way or done. */
export const ENDING: readonly string[] = ['decommission_requested', 'decommissioned', 'cancelled'];
/** States in which a resource has a decommission day. */
export const DECOMMISSIONING: readonly string[] = ['decommission_requested', 'decommissioned'];
/** States of a resource that is going or gone. */
export const GOING: readonly string[] = [...ENDING, 'archived'];

/** A calendar day as IX-API writes dates (YYYY-MM-DD, UTC). */
export const dayOf = (date: Date): string => date.toISOString().slice(0, 10);
export const today = (): string => dayOf(new Date());

/** Whether `value` is a real calendar day written YYYY-MM-DD. */
export function isDay(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && dayOf(date) === value;
}

export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return dayOf(date);
}

/** Whether an error answer carries the IX-API problem type `name`. */
export function hasProblemType(response: HttpResponse, name: string): boolean {
  const type = (response.body as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' && type.endsWith(`/${name}.html`);
}

export const problemTypeOf = (response: HttpResponse): string =>
  JSON.stringify((response.body as { type?: unknown } | undefined)?.type);

/** Holds a refusal to the 400 validation-error the document asks for, naming `names`. */
export function validationRefusal(
  t: CheckContext,
  response: HttpResponse,
  names: readonly string[],
  what: string,
): void {
  if (!t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) return;
  t.must(
    hasProblemType(response, 'validation-error'),
    `${what} was refused as ${problemTypeOf(response)}, not validation-error`,
  );
  const named = propertyNames(response.body);
  const unnamed = names.filter((name) => !named.includes(name));
  t.must(
    unnamed.length === 0,
    `the 400 for ${what} does not name ${unnamed.join(', ')} (it names ${named.join(', ') || 'nothing'})`,
  );
}

export interface Policy {
  decommission_at: string;
  charged_until: string;
}

/** The cancellation policy of a resource (for a day, or the first possible one), or a finding. */
export async function policyOf(
  t: CheckContext,
  operationId: string,
  id: string,
  day?: string,
): Promise<Policy | undefined> {
  const response = await t.call(operationId, {
    id,
    query: day === undefined ? undefined : `decommission_at=${day}`,
  });
  const asked = day === undefined ? 'without a day' : `for ${day}`;
  if (!t.must(response.status === 200, `the policy of ${id} ${asked} answered ${response.status}, not 200`))
    return undefined;
  const body = response.body as Partial<Policy> | undefined;
  // The contract already reports dates that are not dates; nothing more can be compared then.
  return isDay(body?.decommission_at) && isDay(body?.charged_until)
    ? { decommission_at: body.decommission_at, charged_until: body.charged_until }
    : undefined;
}

/** Accept header of a client that wants the letter, and a problem if there is none. */
export const PDF_ACCEPT = { accept: 'application/pdf, application/problem+json, application/json' };

export function downloadLoa(
  t: CheckContext,
  operationId: string,
  id: string,
  role: 'primary' | 'secondary' = 'primary',
): Promise<HttpResponse> {
  return t.call(operationId, { id, role, headers: PDF_ACCEPT });
}

const PDF_MAGIC = Buffer.from('%PDF-');

export const isPdf = (bytes: Buffer): boolean =>
  bytes.length > PDF_MAGIC.length && bytes.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC);

/** Holds a downloaded letter to the document: 200, labelled application/pdf, and a PDF. */
export function holdLoa(t: CheckContext, response: HttpResponse, id: string): boolean {
  if (!t.must(response.status === 200, `the LOA of ${id} answered ${response.status}, not 200`)) return false;
  const type = response.headers['content-type'];
  const labelled = t.must(
    /^application\/pdf\s*(;|$)/i.test(type ?? ''),
    `the LOA of ${id} is labelled ${type ?? '(no content type)'}, not application/pdf`,
  );
  const pdf = t.must(
    isPdf(response.bytes),
    `the LOA of ${id} is not a PDF: it starts ${JSON.stringify(response.bytes.subarray(0, 16).toString('latin1'))}`,
  );
  if (pdf)
    t.should(
      response.bytes.subarray(-1024).includes('%%EOF'),
      `the LOA of ${id} does not end with %%EOF; it looks cut short`,
    );
  return labelled && pdf;
}

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

/**
 * Holds the cancellation policy of one resource to the document: the first possible day not in
 * the past and charged at least until then; asked for that day the same answer; asked for a later
 * day an answer for that day, charging no less.
 */
export async function holdPolicy(t: CheckContext, operationId: string, id: string): Promise<void> {
  // The exchange's calendar may run a time zone ahead of or behind UTC.
  const earliestBelievable = addDays(today(), -1);
  const first = await policyOf(t, operationId, id);
  if (!first) return;
  t.must(
    first.decommission_at >= earliestBelievable,
    `${id}: the first possible decommission day ${first.decommission_at} lies in the past`,
  );
  t.should(
    first.charged_until >= first.decommission_at,
    `${id}: charged until ${first.charged_until}, before the decommission day ${first.decommission_at}`,
  );
  const same = await policyOf(t, operationId, id, first.decommission_at);
  if (same)
    t.must(
      same.decommission_at === first.decommission_at && same.charged_until === first.charged_until,
      `${id}: asked for the first possible day ${first.decommission_at} it answers ${JSON.stringify(same)}, not ${JSON.stringify(first)} as without a day`,
    );
  const later = addDays(first.decommission_at, 45);
  const then = await policyOf(t, operationId, id, later);
  if (!then) return;
  if (
    t.must(
      then.decommission_at >= later,
      `${id}: asked for ${later} it answers decommission_at ${then.decommission_at}, before the day asked for`,
    )
  )
    t.should(
      then.decommission_at === later,
      `${id}: asked for ${later} it answers decommission_at ${then.decommission_at}`,
    );
  t.should(
    then.charged_until >= first.charged_until,
    `${id}: going on ${later} is charged until ${then.charged_until}, going on ${first.decommission_at} until ${first.charged_until}; leaving later costs less`,
  );
}

/** A policy asked for a day that is no day is a 400 validation-error naming decommission_at. */
export async function refuseMalformedDays(t: CheckContext, operationId: string, id: string): Promise<void> {
  for (const bad of ['conformance-not-a-day', '2027-02-30']) {
    const response = await t.call(operationId, { id, query: `decommission_at=${bad}` });
    validationRefusal(t, response, ['decommission_at'], `the policy of ${id} for decommission_at=${bad}`);
  }
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
