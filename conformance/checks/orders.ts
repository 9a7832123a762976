import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { CheckContext, CheckDefinition } from '../runner';
import type { Role } from '../suite';
import { wholeList } from './collections';
import type { Cancellable, Readable, Subject } from './connections';
import {
  addDays,
  CONNECTIONS,
  DECOMMISSIONING,
  downloadLoa,
  ENDING,
  GOING,
  hasProblemType,
  holdLoa,
  policyOf,
  PORT_RESERVATIONS,
  problemTypeOf,
  today,
  validationRefusal,
} from './connections';
import { cleanUp, waitFor } from './lifecycle';
import { propertyNames } from './statuses';

/**
 * Checks that order connections of the suite's own (profile `full`), change them, add ports to
 * them, send their letters of authorisation and cancel them, as a customer does. Every order is
 * written into the ledger before it is placed and cancelled at the end.
 */

export type Item = Record<string, unknown>;

/** What ordering a connection needs besides the operation under test. */
export const ORDERING = [
  'connections_create',
  'connections_read',
  'connections_destroy',
  'product_offerings_list',
  'role_assignments_list',
];

export const isItem = (value: unknown): value is Item =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The id a resource carries, as text; undefined when it carries none. */
export const idOf = (resource: unknown): string | undefined => {
  const id = isItem(resource) ? resource.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
};

export const newMarker = (): string => `conformance-${randomBytes(6).toString('hex')}`;

/** Whether an ISO 8601 period is zero or absent (no notice to give). */
const noPeriod = (period: unknown) =>
  period === null ||
  period === undefined ||
  (typeof period === 'string' && /^P(?:T?0+[YMWDHS])+$/.test(period));

/** Whether an offering can be ordered today, by its orderable window. */
export function orderableNow(offering: Item): boolean {
  const now = Date.now();
  const from = offering.orderable_not_before;
  const until = offering.orderable_not_after;
  return (
    (typeof from !== 'string' || Date.parse(from) <= now) &&
    (typeof until !== 'string' || Date.parse(until) >= now)
  );
}

/**
 * What picks, for a list of roles, role assignments of the account `role` acts as (the primary
 * one by default) that hold them (its own contacts' first); it answers undefined when a role has
 * no holder.
 */
export async function roleCover(
  t: CheckContext,
  role: Role = 'primary',
): Promise<(roles: readonly unknown[]) => string[] | undefined> {
  const account = (await t.session(role)).accountId;
  const assignments = await wholeList(t, 'role_assignments_list', { role });
  const contacts = t.suite.isDeclared('contacts_list') ? await wholeList(t, 'contacts_list', { role }) : [];
  const own = new Set(
    contacts.filter((contact) => contact.consuming_account === account).map((contact) => contact.id),
  );
  return (roles) => {
    const picked: string[] = [];
    for (const wanted of roles) {
      const holders = assignments.filter((assignment) => assignment.role === wanted);
      const holder = holders.find((assignment) => own.has(assignment.contact)) ?? holders[0];
      if (!holder) return undefined;
      picked.push(String(holder.id));
    }
    return picked;
  };
}

/** Which connection offerings a check may order from, and which it would rather have. */
export interface OfferingChoice {
  /** What the choice is for, to say why nothing could be ordered. */
  purpose: string;
  accept(offering: Item): boolean;
  /** Lower ranks first, before the usual preferences. */
  rank(offering: Item): number;
}

/**
 * An order the primary account may place: from the connection offering that is quickest and
 * cheapest to provision and to give back (the exchange does the cross-connect, the slowest port,
 * no notice period), with contacts of its own in every role the offering requires.
 */
async function orderBody(
  t: CheckContext,
  mode: 'standalone' | 'lag_lacp',
  marker: string,
  choice?: OfferingChoice,
  extraRoles: readonly string[] = [],
  role: Role = 'primary',
): Promise<Item> {
  if (t.suite.revision.name === 'older')
    t.notApplicable(
      'the server claims the older revision, whose connections are ordered through demarcs; the suite orders them by product offering',
    );
  const account =
    (await t.session(role)).accountId ?? t.inconclusive(`the ${role} token does not name its account`);
  const offerings = (await wholeList(t, 'product_offerings_list', { query: 'type=connection' })).filter(
    (offering) =>
      offering.type === 'connection' && orderableNow(offering) && (choice?.accept(offering) ?? true),
  );
  const cover = await roleCover(t, role);
  const usable = offerings.flatMap((offering) => {
    const roles = cover(
      Array.isArray(offering.required_contact_roles) ? offering.required_contact_roles : [],
    );
    return roles ? [{ offering, roles }] : [];
  });
  if (!usable.length)
    t.inconclusive(
      `no connection offering${choice ? ` ${choice.purpose}` : ''} is orderable whose required contact roles the ${role} account's role assignments cover`,
    );
  const rank = ({ offering }: (typeof usable)[number]) => [
    choice?.rank(offering) ?? 0,
    offering.cross_connect_initiator === 'exchange' ? 0 : 1,
    typeof offering.physical_port_speed === 'number' ? offering.physical_port_speed : Infinity,
    noPeriod(offering.contract_initial_notice_period) && noPeriod(offering.contract_renewal_notice_period)
      ? 0
      : 1,
  ];
  usable.sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    const differ = x.findIndex((value, i) => value !== y[i]);
    return differ < 0 ? String(a.offering.id).localeCompare(String(b.offering.id)) : x[differ] - y[differ];
  });
  const [{ offering, roles }] = usable;
  return {
    managing_account: account,
    consuming_account: account,
    billing_account: account,
    role_assignments: [...roles, ...extraRoles.filter((assignment) => !roles.includes(assignment))],
    product_offering: offering.id,
    mode,
    port_quantity: 1,
    subscriber_side_demarcs: ['Conformance demarc 1'],
    external_ref: marker,
  };
}

/**
 * Orders a connection of the suite's own, written into the ledger first, and gives its
 * provisioning a while to reach production (what follows is judged either way). An order the
 * exchange refuses as invalid leaves nothing to judge: the suite cannot know every exchange's rules.
 * `roleAssignments` are named besides those of the roles the offering requires.
 */
export async function orderConnection(
  t: CheckContext,
  mode: 'standalone' | 'lag_lacp' = 'standalone',
  options: {
    choice?: OfferingChoice;
    waitMs?: number;
    roleAssignments?: readonly string[];
    /** The account that orders (the primary one by default). */
    role?: Role;
  } = {},
): Promise<{ connection: Item; id: string; marker: string }> {
  const role = options.role ?? 'primary';
  const marker = newMarker();
  const body = await orderBody(t, mode, marker, options.choice, options.roleAssignments, role);
  const seq = t.suite.ledger.intend({
    destroy: 'connections_destroy',
    role,
    marker,
    find: { list: 'connections_list', query: `external_ref=${marker}` },
  });
  const response = await t.call('connections_create', { body, role });
  const connection = response.body;
  const id = idOf(connection);
  if (response.status === 201 && isItem(connection) && id !== undefined) {
    t.suite.ledger.created(seq, id);
    const waitMs = options.waitMs ?? t.suite.waits.provisioning;
    const live = waitMs
      ? await waitFor(t, 'connections_read', id, (read) => read.state === 'production', waitMs, role)
      : undefined;
    return { connection: live ?? connection, id, marker };
  }
  if (response.status === 400) {
    t.suite.ledger.removed(seq);
    t.inconclusive(
      `the exchange refused the suite's order of a ${mode} connection from ${String(body.product_offering)} (${response.text.slice(0, 200)}); nothing could be judged`,
    );
  }
  t.must(false, `ordering a connection answered ${response.status}, not 201: ${response.text.slice(0, 200)}`);
  return t.inconclusive('without the connection nothing else could be judged');
}

/** The read of a resource, or a finding and undefined. */
export async function current(t: CheckContext, subject: Readable, id: string): Promise<Item | undefined> {
  const response = await t.call(subject.read, { id });
  if (!t.must(response.status === 200, `reading ${subject.noun} ${id} answered ${response.status}`))
    return undefined;
  return response.body as Item;
}

/** A port reservation of a connection: the first it lists, once it lists one. */
async function reservationOf(t: CheckContext, connectionId: string): Promise<string> {
  const listing = await waitFor(
    t,
    'connections_read',
    connectionId,
    (body) => Array.isArray(body.port_reservations) && body.port_reservations.length > 0,
    t.suite.waits.provisioning,
  );
  const listed = listing?.port_reservations as unknown[] | undefined;
  return listed?.length
    ? String(listed[0])
    : t.inconclusive(
        `connection ${connectionId} lists no port reservation ${t.suite.waits.provisioning / 1000} s after its order`,
      );
}

export const show = (value: unknown): string => JSON.stringify(value) ?? 'nothing';

/**
 * Changes a resource and holds the answer to the document: 202 with the resource, and the values
 * sent show on reading it (at once or once the change is carried out).
 */
export async function change(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  body: Item,
  watched: readonly string[],
): Promise<void> {
  const method = t.suite.operation(operationId).method;
  const response = await t.call(operationId, { id, body });
  if (response.status === 400 && hasProblemType(response, 'unable-to-fulfill'))
    t.inconclusive(
      `the exchange does not take the ${method} of ${subject.noun} ${id} now: ${response.text.slice(0, 200)}`,
    );
  t.must(response.status === 202, `${method} of ${subject.noun} ${id} answered ${response.status}, not 202`);
  t.must(
    (response.body as Item | undefined)?.id === id,
    `the answer to the ${method} is not ${subject.noun} ${id}`,
  );
  const differs = (read: Item) => watched.filter((name) => !isDeepStrictEqual(read[name], body[name]));
  const shown = await waitFor(
    t,
    subject.read,
    id,
    (read) => differs(read).length === 0,
    t.suite.waits.settling,
  );
  if (shown) return;
  const read = (await current(t, subject, id)) ?? {};
  t.must(
    false,
    `${t.suite.waits.settling / 1000} s after the ${method} a read of ${subject.noun} ${id} shows ${differs(
      read,
    )
      .map((name) => `${name} ${show(read[name])} instead of ${show(body[name])}`)
      .join(', ')}`,
  );
}

/**
 * Another account's attempt on a resource of the suite's own, which it cannot see: a 404, and the
 * properties `watched` stay as they were. Safe on any server, since the resource is the suite's.
 */
export async function foreignAttempt(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  request: { body?: unknown; rawBody?: Buffer; headers?: Record<string, string> },
  watched: readonly string[],
): Promise<void> {
  if (!t.suite.hasCredentials('secondary')) return;
  const method = t.suite.operation(operationId).method;
  const before = await current(t, subject, id);
  const response = await t.call(operationId, { id, role: 'secondary', ...request });
  t.must(
    response.status === 404,
    `another account's ${method} of ${subject.noun} ${id}, which it cannot see, answered ${response.status}, not 404`,
  );
  const after = await current(t, subject, id);
  if (!before || !after) return;
  for (const name of watched)
    t.must(
      isDeepStrictEqual(after[name], before[name]),
      `another account's ${method} changed ${name} of ${subject.noun} ${id} from ${show(before[name])} to ${show(after[name])}`,
    );
}

/**
 * A PATCH without `type`, as clients send it: taken like one with it (202 with the resource of
 * `type`, `body[watched]` shown once carried out). Refused naming `type`, it is only a warning:
 * the document requires the property.
 */
export async function untypedChange(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  body: Item,
  type: string,
  watched: string,
): Promise<void> {
  const what = `a PATCH of ${subject.noun} ${id} without type`;
  const response = await t.call(operationId, { id, body });
  if (response.status === 400 && propertyNames(response.body).includes('type')) {
    t.should(
      false,
      `${what} was refused (${problemTypeOf(response)}); the document requires type, but clients leave it out`,
    );
    return;
  }
  const refused =
    response.status >= 400 ? ` (${problemTypeOf(response)}: ${response.text.slice(0, 160)})` : '';
  if (!t.must(response.status === 202, `${what} answered ${response.status}, not 202${refused}`)) return;
  t.must(
    isItem(response.body) && response.body.type === type,
    `the answer to a PATCH without type is of type ${show(isItem(response.body) ? response.body.type : undefined)}`,
  );
  const shown = await waitFor(
    t,
    subject.read,
    id,
    (read) => read[watched] === body[watched],
    t.suite.waits.settling,
  );
  t.must(shown, `${t.suite.waits.settling / 1000} s after ${what} it does not show`);
}

/** A change the schema forbids: a 400 validation-error naming `names`, and nothing changes. */
export async function refusedChange(
  t: CheckContext,
  subject: Readable,
  operationId: string,
  id: string,
  body: Item,
  names: readonly string[],
): Promise<void> {
  const method = t.suite.operation(operationId).method;
  const before = await current(t, subject, id);
  const response = await t.call(operationId, { id, body });
  const what = `${method} of ${subject.noun} ${id} with ${names
    .map((name) => (name in body ? `${name} ${show(body[name])}` : `no ${name}`))
    .join(', ')}`;
  validationRefusal(t, response, names, what);
  const after = await current(t, subject, id);
  if (!before || !after) return;
  for (const name of new Set([...Object.keys(body), ...names]))
    t.must(
      isDeepStrictEqual(after[name], before[name]),
      `the refused ${method} changed ${name} from ${show(before[name])} to ${show(after[name])}`,
    );
}

/**
 * Cancels a resource of the suite's own the way a customer does and holds each answer to the
 * document: a day before the first possible one is refused by the policy and changes nothing; a
 * DELETE without a day answers 202 with the resource, which then goes (decommission_requested
 * with the policy's day, or cancelled while it was being provisioned) and stays readable.
 */
export async function cancel(t: CheckContext, subject: Cancellable, id: string): Promise<void> {
  const before = await current(t, subject, id);
  if (!before) return;
  const live = before.state === 'production';
  const policy = t.suite.isDeclared(subject.policy) ? await policyOf(t, subject.policy, id) : undefined;
  const tooEarly = addDays(policy?.decommission_at ?? today(), -1);
  const refused = await t.call(subject.destroy, { id, body: { decommission_at: tooEarly } });
  const refusal = `DELETE of ${subject.noun} ${id} on ${tooEarly}, the day before the first possible one`;
  if (t.must(refused.status === 400, `${refusal} answered ${refused.status}, not 400`)) {
    const problem = refused.body as Item;
    if (hasProblemType(refused, 'cancellation-policy-error')) {
      t.must(
        typeof problem.decommission_at === 'string' && problem.decommission_at > tooEarly,
        `the cancellation-policy-error names ${show(problem.decommission_at)} as the first possible day, not a day after ${tooEarly}`,
      );
      if (policy)
        t.should(
          problem.decommission_at === policy.decommission_at,
          `the cancellation-policy-error names ${show(problem.decommission_at)}, the policy ${policy.decommission_at}`,
        );
    } else if (tooEarly < today() && hasProblemType(refused, 'validation-error')) {
      t.should(
        false,
        `a day in the past was refused as a validation-error; a cancellation-policy-error would say which day is possible`,
      );
    } else {
      t.must(false, `${refusal} was refused as ${problemTypeOf(refused)}, not cancellation-policy-error`);
    }
  }
  const still = await current(t, subject, id);
  t.must(
    !still || !GOING.includes(String(still.state)),
    `the refused DELETE cancelled ${subject.noun} ${id} anyway (it is ${String(still?.state)})`,
  );

  // Provisioning may move the state on meanwhile; only a cancellation would be the other's doing.
  await foreignAttempt(t, subject, subject.destroy, id, {}, ['decommission_at']);
  if (t.suite.hasCredentials('secondary')) {
    const untouched = await current(t, subject, id);
    t.must(
      !untouched || !GOING.includes(String(untouched.state)),
      `another account's DELETE cancelled ${subject.noun} ${id} (it is ${String(untouched?.state)})`,
    );
  }

  const deleted = await t.call(subject.destroy, { id });
  t.must(deleted.status === 202, `DELETE of ${subject.noun} ${id} answered ${deleted.status}, not 202`);
  const answer = isItem(deleted.body) ? deleted.body : undefined;
  t.must(answer?.id === id, `the answer to the DELETE is not ${subject.noun} ${id}`);
  if (answer && live)
    t.must(
      DECOMMISSIONING.includes(String(answer.state)),
      `a ${subject.noun} in production answered its DELETE as ${String(answer.state)}, not decommission_requested`,
    );
  if (answer && DECOMMISSIONING.includes(String(answer.state))) {
    t.must(
      typeof answer.decommission_at === 'string',
      `the answer to the DELETE is ${String(answer.state)} without a decommission_at`,
    );
    if (live && policy) {
      // The day may turn between the two requests; the policy asked afterwards settles it.
      const asked =
        answer.decommission_at === policy.decommission_at ? policy : await policyOf(t, subject.policy, id);
      const agreed = [policy, asked].some(
        (p) =>
          p?.decommission_at === answer.decommission_at &&
          (answer.charged_until === undefined ||
            answer.charged_until === null ||
            answer.charged_until === p?.charged_until),
      );
      t.must(
        agreed,
        `a DELETE without a day set decommission_at ${show(answer.decommission_at)} and charged_until ${show(answer.charged_until)}; the policy offered ${policy.decommission_at} and ${policy.charged_until}`,
      );
    }
  }
  const ended = await waitFor(
    t,
    subject.read,
    id,
    (read) => ENDING.includes(String(read.state)),
    t.suite.waits.settling * 2,
  );
  const after = await t.call(subject.read, { id });
  if (
    !t.must(
      after.status === 200,
      `after its DELETE ${subject.noun} ${id} answers ${after.status}; it stays readable until it is archived`,
    )
  )
    return;
  const state = String((after.body as Item).state);
  t.must(
    ended !== undefined,
    `${(t.suite.waits.settling * 2) / 1000} s after its DELETE ${subject.noun} ${id} is ${state}, not decommission_requested, decommissioned or cancelled`,
  );
  if (DECOMMISSIONING.includes(state))
    t.must(
      typeof (after.body as Item).decommission_at === 'string',
      `${subject.noun} ${id} is ${state} without a decommission_at`,
    );
}

/** A one-page PDF saying `text`, complete with its cross-reference table, as any reader expects. */
export function letter(text: string): Buffer {
  const line = text.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, '\\$&');
  const content = `BT /F1 11 Tf 72 760 Td (${line}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = pdf.length;
    pdf += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const table = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${table}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

/** Whether the letter downloaded is `sent`, within a few seconds (uploads are processed asynchronously). */
async function downloadedAs(t: CheckContext, subject: Subject, id: string, sent: Buffer): Promise<boolean> {
  const until = Date.now() + t.suite.waits.settling / 2;
  for (;;) {
    const response = await downloadLoa(t, subject.loaDownload, id);
    if (response.status === 200 && response.bytes.equals(sent)) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function loaUploadCheck(subject: Subject): CheckDefinition {
  const ofReservation = subject === PORT_RESERVATIONS;
  return {
    id: `LOA-${subject.loaUpload}`,
    title: `POST …/loa takes a PDF for a ${subject.noun} of the suite's own and refuses anything else`,
    clause:
      "Letters of authorisation: an upload that is not a PDF is a 400 problem and the LOA stays a PDF; a PDF sent as application/pdf or as application/octet-stream answers 202 with the resource. Whether a download then gives the uploaded letter or the exchange's own is not specified: when it is the exchange's own, whether uploads are kept is INCONCLUSIVE; when the first upload came back, the second must too.",
    operations: ofReservation
      ? [subject.loaUpload, subject.loaDownload]
      : [subject.loaUpload, subject.loaDownload, 'connections_create'],
    requires: [subject.loaUpload, subject.loaDownload, subject.read, ...ORDERING],
    safety: 'mutate',
    deadlineMs: 90_000,
    async run(t) {
      try {
        const order = await orderConnection(t);
        const id = ofReservation ? await reservationOf(t, order.id) : order.id;
        const upload = (body: Buffer, contentType: string) =>
          t.call(subject.loaUpload, { id, rawBody: body, headers: { 'content-type': contentType } });
        holdLoa(t, await downloadLoa(t, subject.loaDownload, id), id);

        const text = Buffer.from(`conformance ${order.marker}: this is not a PDF\n`);
        const refused = await upload(text, 'application/octet-stream');
        t.must(refused.status === 400, `an LOA that is not a PDF answered ${refused.status}, not 400`);
        t.should(
          refused.status !== 400 || hasProblemType(refused, 'validation-error'),
          `an LOA that is not a PDF was refused as ${problemTypeOf(refused)}, not validation-error`,
        );
        const kept = await downloadLoa(t, subject.loaDownload, id);
        if (holdLoa(t, kept, id))
          t.must(!kept.bytes.equals(text), 'the LOA refused as not a PDF is what is downloaded now');

        const letters = [
          { body: letter(`Conformance LOA ${order.marker} (1)`), type: 'application/pdf' },
          { body: letter(`Conformance LOA ${order.marker} (2)`), type: 'application/octet-stream' },
        ];
        const returned: boolean[] = [];
        for (const { body, type } of letters) {
          const accepted = await upload(body, type);
          t.must(
            accepted.status === 202,
            `a PDF sent as ${type} answered ${accepted.status}, not 202: ${accepted.text.slice(0, 200)}`,
          );
          t.must(
            (accepted.body as Item | undefined)?.id === id,
            `the answer to the upload sent as ${type} is not ${subject.noun} ${id}`,
          );
          returned.push(accepted.status === 202 && (await downloadedAs(t, subject, id, body)));
        }
        if (t.suite.hasCredentials('secondary')) {
          const foreign = letter(`Another account's LOA ${order.marker}`);
          const refusedForeign = await t.call(subject.loaUpload, {
            id,
            role: 'secondary',
            rawBody: foreign,
            headers: { 'content-type': 'application/pdf' },
          });
          t.must(
            refusedForeign.status === 404,
            `another account's LOA upload for ${subject.noun} ${id}, which it cannot see, answered ${refusedForeign.status}, not 404`,
          );
          const now = await downloadLoa(t, subject.loaDownload, id);
          t.must(!now.bytes.equals(foreign), `the LOA of ${id} is now the one another account sent`);
        }
        if (returned[0])
          t.must(
            returned[1],
            `the exchange gives back the letter uploaded as application/pdf but not the one uploaded as application/octet-stream`,
          );
        else if (!returned[1])
          t.inconclusive(
            `after each upload the download is the exchange's own letter; IX-API does not say whether uploads are given back, so whether they are kept cannot be judged`,
          );
      } finally {
        await cleanUp(t);
      }
    },
  };
}

/** Checks that order connections of their own; they cancel what they ordered. */
export const ORDER_CHECKS: CheckDefinition[] = [
  {
    id: 'CONN-001',
    title:
      "A connection of the suite's own changes with PATCH and PUT, and refuses bodies that break the schema",
    clause:
      "Connections: PATCH and PUT answer 202 with the connection, and the values sent show on reading it; a body that breaks the schema (a mode that does not exist, a number for a string, a required property left out of a PUT) is a 400 validation-error naming the property, and nothing changes; another account's PATCH is a 404 and changes nothing.",
    operations: ['connections_partial_update', 'connections_update', 'connections_create'],
    requires: ['connections_partial_update', 'connections_update', ...ORDERING],
    safety: 'mutate',
    deadlineMs: 90_000,
    async run(t) {
      try {
        const { id, marker } = await orderConnection(t);
        const patch = { external_ref: `${marker}-patched`, purchase_order: 'CONFORMANCE-PO-1' };
        await change(t, CONNECTIONS, CONNECTIONS.patch, id, patch, Object.keys(patch));
        await foreignAttempt(
          t,
          CONNECTIONS,
          CONNECTIONS.patch,
          id,
          { body: { purchase_order: 'CONFORMANCE-FOREIGN' } },
          ['purchase_order'],
        );
        await refusedChange(t, CONNECTIONS, CONNECTIONS.patch, id, { mode: 'conformance-no-such-mode' }, [
          'mode',
        ]);
        await refusedChange(t, CONNECTIONS, CONNECTIONS.patch, id, { purchase_order: 42 }, [
          'purchase_order',
        ]);
        const read = await current(t, CONNECTIONS, id);
        if (!read) return;
        const replacement: Item = {
          managing_account: read.managing_account,
          consuming_account: read.consuming_account,
          billing_account: read.billing_account,
          role_assignments: read.role_assignments,
          mode: read.mode,
          product_offering: read.product_offering,
          lacp_timeout: read.lacp_timeout ?? null,
          contract_ref: read.contract_ref ?? null,
          external_ref: `${marker}-replaced`,
          purchase_order: 'CONFORMANCE-PO-2',
        };
        await change(t, CONNECTIONS, CONNECTIONS.update, id, replacement, ['external_ref', 'purchase_order']);
        const { product_offering: _left, ...incomplete } = replacement;
        await refusedChange(
          t,
          CONNECTIONS,
          CONNECTIONS.update,
          id,
          { ...incomplete, external_ref: `${marker}-refused` },
          ['product_offering'],
        );
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'CONN-002',
    title: "A connection of the suite's own is cancelled on the day its policy allows, and stays readable",
    clause:
      "Connections: a DELETE asking for a day before the first possible one is a 400 cancellation-policy-error carrying decommission_at and charged_until, and changes nothing; another account's DELETE is a 404 and changes nothing; a DELETE without a day answers 202 with the connection, decommission_requested with the policy's decommission_at and charged_until when it was in production, and it goes on to decommission_requested, decommissioned or cancelled, readable all along (no 404).",
    operations: ['connections_destroy', 'connections_cancellation_policy_read', 'connections_create'],
    requires: ORDERING,
    safety: 'mutate',
    deadlineMs: 90_000,
    async run(t) {
      try {
        const { id } = await orderConnection(t);
        await cancel(t, CONNECTIONS, id);
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'PRES-002',
    title:
      "A port reservation of the suite's own changes with PATCH and PUT, and refuses bodies that break the schema",
    clause:
      "Port reservations: PATCH and PUT answer 202 with the reservation, and the values sent (cross_connect_id, external_ref, purchase_order) show on reading it; a body that breaks the schema (a number for a string, a string too long) is a 400 validation-error naming the property, and nothing changes; another account's PATCH is a 404 and changes nothing.",
    operations: ['port_reservations_partial_update', 'port_reservations_update', 'port_reservations_read'],
    requires: [
      'port_reservations_partial_update',
      'port_reservations_update',
      'port_reservations_read',
      ...ORDERING,
    ],
    safety: 'mutate',
    deadlineMs: 90_000,
    async run(t) {
      try {
        const { id: connection, marker } = await orderConnection(t);
        const id = await reservationOf(t, connection);
        const subject = PORT_RESERVATIONS;
        const patch = { cross_connect_id: 'CONFORMANCE-XC-1', external_ref: `${marker}-patched` };
        await change(t, subject, subject.patch, id, patch, Object.keys(patch));
        await foreignAttempt(
          t,
          subject,
          subject.patch,
          id,
          { body: { cross_connect_id: 'CONFORMANCE-FOREIGN' } },
          ['cross_connect_id'],
        );
        await refusedChange(t, subject, subject.patch, id, { cross_connect_id: 42 }, ['cross_connect_id']);
        await refusedChange(t, subject, subject.patch, id, { external_ref: 'x'.repeat(129) }, [
          'external_ref',
        ]);
        const read = await current(t, subject, id);
        if (!read) return;
        const replacement: Item = {
          subscriber_side_demarc: read.subscriber_side_demarc ?? null,
          connecting_party: read.connecting_party ?? null,
          contract_ref: read.contract_ref ?? null,
          cross_connect_id: 'CONFORMANCE-XC-2',
          external_ref: `${marker}-replaced`,
          purchase_order: 'CONFORMANCE-PO-3',
        };
        await change(t, subject, subject.update, id, replacement, [
          'cross_connect_id',
          'external_ref',
          'purchase_order',
        ]);
        await refusedChange(t, subject, subject.update, id, { ...replacement, cross_connect_id: 42 }, [
          'cross_connect_id',
        ]);
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'PRES-003',
    title: 'A port reservation for a connection that does not exist is a 400 naming connection',
    clause:
      'Port reservations: a new reservation is for a connection the caller can change; an unknown one is a 400 validation-error naming connection, and nothing is created.',
    operations: ['port_reservations_create'],
    requires: ['port_reservations_create', 'port_reservations_destroy'],
    safety: 'mutate',
    async run(t) {
      const marker = newMarker();
      const seq = t.suite.ledger.intend({
        destroy: 'port_reservations_destroy',
        role: 'primary',
        marker,
        find: t.suite.isDeclared('port_reservations_list')
          ? { list: 'port_reservations_list', query: `external_ref=${marker}` }
          : undefined,
      });
      const response = await t.call('port_reservations_create', {
        body: { connection: 'conformance-no-such-connection', external_ref: marker },
      });
      const created = idOf(response.body);
      if (response.status < 300 && created !== undefined) {
        t.suite.ledger.created(seq, created);
        await cleanUp(t);
      } else {
        t.suite.ledger.removed(seq);
      }
      validationRefusal(
        t,
        response,
        ['connection'],
        'a reservation for connection conformance-no-such-connection',
      );
    },
  },
  {
    id: 'PRES-004',
    title:
      "A port added to a bundle of the suite's own is listed by it, and is cancelled on the day its policy allows",
    clause:
      "Port reservations: POST answers 201 with a reservation of the connection, which the connection then lists; a DELETE asking for a day before the first possible one is a 400 cancellation-policy-error and changes nothing; another account's DELETE is a 404 and changes nothing; a DELETE without a day answers 202 with the reservation, decommission_requested with the policy's day when it was in production, and it goes on to decommission_requested, decommissioned or cancelled, readable all along.",
    operations: [
      'port_reservations_create',
      'port_reservations_destroy',
      'port_reservation_cancellation_policy_read',
    ],
    requires: [
      'port_reservations_create',
      'port_reservations_destroy',
      'port_reservations_read',
      ...ORDERING,
    ],
    safety: 'mutate',
    deadlineMs: 150_000,
    async run(t) {
      try {
        const { id: connection, connection: live } = await orderConnection(t, 'lag_lacp');
        if (live.state !== 'production')
          t.inconclusive(
            `the bundle ordered did not reach production within ${t.suite.waits.provisioning / 1000} s; ports are added to bundles in production`,
          );
        const marker = newMarker();
        const seq = t.suite.ledger.intend({
          destroy: 'port_reservations_destroy',
          role: 'primary',
          marker,
          find: t.suite.isDeclared('port_reservations_list')
            ? { list: 'port_reservations_list', query: `external_ref=${marker}` }
            : undefined,
        });
        const demarcs: unknown[] = Array.isArray(live.subscriber_side_demarcs)
          ? live.subscriber_side_demarcs
          : [];
        const response = await t.call('port_reservations_create', {
          body: {
            connection,
            external_ref: marker,
            ...(demarcs.length ? { subscriber_side_demarc: demarcs[0] } : {}),
          },
        });
        const reservation = isItem(response.body) ? response.body : undefined;
        const id = idOf(reservation);
        if (response.status !== 201 || !reservation || id === undefined) {
          t.suite.ledger.removed(seq);
          if (response.status === 400 && hasProblemType(response, 'unable-to-fulfill'))
            t.inconclusive(`the exchange adds no port to the bundle: ${response.text.slice(0, 200)}`);
          t.must(
            false,
            `adding a port to ${connection} answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
          );
          return;
        }
        t.suite.ledger.created(seq, id);
        t.must(
          reservation.connection === connection,
          `the reservation added to ${connection} names connection ${show(reservation.connection)}`,
        );
        const listing = await waitFor(
          t,
          'connections_read',
          connection,
          (read) => Array.isArray(read.port_reservations) && read.port_reservations.includes(id),
          t.suite.waits.settling,
        );
        t.must(
          listing,
          `${t.suite.waits.settling / 1000} s after it was added, connection ${connection} does not list reservation ${id}`,
        );
        const ready = await waitFor(
          t,
          'port_reservations_read',
          id,
          (read) => read.state === 'production',
          t.suite.waits.provisioning * 1.5,
        );
        if (!ready)
          t.inconclusive(
            `the port added did not reach production within ${(t.suite.waits.provisioning * 1.5) / 1000} s`,
          );
        await waitFor(
          t,
          'connections_read',
          connection,
          (read) => read.state === 'production',
          t.suite.waits.provisioning,
        );
        await cancel(t, PORT_RESERVATIONS, id);
      } finally {
        await cleanUp(t);
      }
    },
  },
  loaUploadCheck(CONNECTIONS),
  loaUploadCheck(PORT_RESERVATIONS),
];
