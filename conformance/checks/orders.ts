import type { CheckContext, CheckDefinition } from '../runner';
import { cancel, change, foreignAttempt, refusedChange } from '../steps/changes';
import { cleanUp } from '../steps/cleanup';
import { orderConnection, ORDERING } from '../steps/connection-orders';
import type { Item } from '../steps/items';
import { current, idOf, isItem, newMarker, show } from '../steps/items';
import { downloadLoa, holdLoa, letter } from '../steps/letters-of-authorisation';
import { hasProblemType, problemTypeOf, validationRefusal } from '../steps/problems';
import type { Subject } from '../steps/subjects';
import { CONNECTIONS, PORT_RESERVATIONS } from '../steps/subjects';
import { waitFor } from '../steps/waiting';

/**
 * Checks that order connections of the suite's own (profile `full`), change them, add ports to
 * them, send their letters of authorisation and cancel them, as a customer does. Every order is
 * written into the ledger before it is placed and cancelled at the end.
 */

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
