import type { Fault } from './faults';
import type { Forward, Item, ProxiedRequest, ProxiedResponse } from './messages';
import {
  editQuery,
  getHeader,
  isItem,
  jsonResponse,
  pathnameOf,
  problemResponse,
  readJson,
  splitPath,
  withHeaders,
  withJson,
} from './messages';

/**
 * Faults in connections and port reservations: their cancellation policies, letters of
 * authorisation and references to each other (seen by a read run), and their changes, uploads and
 * cancellations (seen by a full run of the checks that make them). They are kept apart from the
 * general faults of `faults.ts`, which act on any collection, because they need an upstream that
 * has connections.
 */

/** One connection or port reservation. */
const RESOURCE = /\/(?:connections|port-reservations)\/[^/]+$/;
const POLICY = /\/(?:connections|port-reservations)\/[^/]+\/cancellation-policy$/;
const LOA = /\/(?:connections|port-reservations)\/[^/]+\/loa$/;
const UNDER = /\/(?:connections|port-reservations)(?:\/|$)/;

const on = (pattern: RegExp, req: ProxiedRequest, method?: string) =>
  (method === undefined || req.method === method) && pattern.test(pathnameOf(req));
const isChange = (req: ProxiedRequest) => ['PUT', 'PATCH'].includes(req.method) && on(RESOURCE, req);
const isSuccess = (res: ProxiedResponse) => res.status >= 200 && res.status < 300;

/** The same path read with GET, without the body the request carried. */
export function asRead(req: ProxiedRequest, path = req.path): ProxiedRequest {
  const read = withHeaders(req, { 'content-type': undefined, 'content-length': undefined });
  return { ...read, method: 'GET', path, body: Buffer.alloc(0) };
}

/** The path of the resource a request below it (`…/loa`) is about. */
const parentOf = (req: ProxiedRequest) => splitPath(req.path).pathname.replace(/\/[^/]+\/?$/, '');

/** The resource as it is now, answered 202 (or `status`) as if a change had been made to it. */
export async function acceptedAsIs(
  forward: Forward,
  read: ProxiedRequest,
  otherwise: ProxiedResponse,
  status = 202,
): Promise<ProxiedResponse> {
  const resource = await forward(read);
  return resource.status === 200 ? { ...resource, status } : otherwise;
}

/** Applies `edit` to every object of a JSON success answer (the body or its items), any method. */
export function editObjects(res: ProxiedResponse, edit: (item: Item) => Item | undefined): ProxiedResponse {
  if (!isSuccess(res)) return res;
  const body = readJson(res);
  let changed = false;
  const apply = (value: unknown) => {
    const edited = isItem(value) ? edit(value) : undefined;
    if (edited === undefined) return value;
    changed = true;
    return edited;
  };
  const result = Array.isArray(body) ? body.map(apply) : apply(body);
  return changed ? withJson(res, result) : res;
}

export function shiftDay(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** Whether `text` is a real calendar day written YYYY-MM-DD. */
function isDay(text: string): boolean {
  const date = new Date(`${text}T00:00:00Z`);
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(date.getTime()) && shiftDay(text, 0) === text;
}

export interface Policy {
  decommission_at: string;
  charged_until: string;
}

/** Rewrites the policies answered with 200 (of connections and port reservations, or of `policies`). */
export function editPolicy(
  edit: (policy: Policy, req: ProxiedRequest) => Partial<Policy> | undefined,
  policies: RegExp = POLICY,
): Fault['response'] {
  return (res, req) => {
    if (!on(policies, req, 'GET') || res.status !== 200) return res;
    const body = readJson(res);
    if (!isItem(body) || typeof body.decommission_at !== 'string' || typeof body.charged_until !== 'string')
      return res;
    const edited = edit({ decommission_at: body.decommission_at, charged_until: body.charged_until }, req);
    return edited ? withJson(res, { ...body, ...edited }) : res;
  };
}

/** Faults a read run shows: policies, letters and references. */
function readFaults(): Fault[] {
  let lastLetter: ProxiedResponse | undefined;
  return [
    {
      id: 'policy-charged-before-decommission',
      description: 'cancellation policies end the charges the day before the decommission day',
      breaks: 'should',
      response: editPolicy((policy) => ({ charged_until: shiftDay(policy.decommission_at, -1) })),
    },
    {
      id: 'policy-date-times',
      description: 'cancellation policies give date-times where the document has dates',
      response: editPolicy((policy) => ({
        decommission_at: `${policy.decommission_at}T00:00:00Z`,
        charged_until: `${policy.charged_until}T23:59:59Z`,
      })),
    },
    {
      id: 'policy-day-in-the-past',
      description: 'without decommission_at, the policy names a first possible day a month ago',
      response: editPolicy((policy, req) =>
        splitPath(req.path).query.has('decommission_at')
          ? undefined
          : { decommission_at: shiftDay(policy.decommission_at, -30) },
      ),
    },
    {
      id: 'policy-malformed-day-accepted',
      description: 'a policy asked for a day that is no day answers as if no day had been asked for',
      request: (req) =>
        on(POLICY, req, 'GET')
          ? editQuery(req, (query) => {
              const day = query.get('decommission_at');
              if (day !== null && !isDay(day)) query.delete('decommission_at');
            })
          : req,
    },
    {
      id: 'policy-day-ignored',
      description:
        'the decommission_at of a policy request is ignored: the answer is always the first possible day',
      request: (req) =>
        on(POLICY, req, 'GET') ? editQuery(req, (query) => query.delete('decommission_at')) : req,
    },
    {
      id: 'loa-as-json',
      description: 'an LOA download answers JSON with a link instead of the PDF',
      response: (res, req) =>
        on(LOA, req, 'GET') && res.status === 200
          ? jsonResponse(200, { loa: `https://loa.example.net${pathnameOf(req)}.pdf` })
          : res,
    },
    {
      id: 'loa-mislabelled',
      description: 'LOA downloads are labelled application/octet-stream instead of application/pdf',
      response: (res, req) =>
        on(LOA, req, 'GET') && res.status === 200
          ? withHeaders(res, { 'content-type': 'application/octet-stream' })
          : res,
    },
    {
      id: 'loa-of-others-readable',
      description:
        'the LOA of a resource the caller cannot see (or that does not exist) is the last LOA served',
      reset: () => {
        lastLetter = undefined;
      },
      response(res, req) {
        if (!on(LOA, req, 'GET')) return res;
        if (res.status === 200) lastLetter = res;
        return res.status === 404 && lastLetter ? lastLetter : res;
      },
    },
    {
      id: 'reservation-filter-leaks',
      description: 'port reservations filtered by connection include a reservation of another connection',
      async response(res, req, forward) {
        if (req.method !== 'GET' || !/\/port-reservations$/.test(pathnameOf(req)) || !isSuccess(res))
          return res;
        const asked = splitPath(req.path).query.get('connection');
        const items = readJson(res);
        if (asked === null || !Array.isArray(items)) return res;
        const everything = readJson(
          await forward(
            editQuery(req, (query) =>
              ['connection', 'page_limit', 'page_offset', 'page_token'].forEach((name) => query.delete(name)),
            ),
          ),
        );
        const stranger: unknown = Array.isArray(everything)
          ? (everything as unknown[]).find((item) => isItem(item) && item.connection !== asked)
          : undefined;
        return stranger ? withJson(res, [...(items as unknown[]), stranger]) : res;
      },
    },
    {
      id: 'connection-lists-unknown-reservation',
      description: 'connections list a port reservation that does not exist besides their own',
      response: (res, req) =>
        req.method === 'GET' && /\/connections(?:\/[^/]+)?$/.test(pathnameOf(req))
          ? editObjects(res, (item) =>
              Array.isArray(item.port_reservations) && item.port_reservations.length
                ? {
                    ...item,
                    port_reservations: [
                      ...(item.port_reservations as unknown[]),
                      'conformance-ghost-reservation',
                    ],
                  }
                : undefined,
            )
          : res,
    },
  ];
}

const CHANGES = { only: ['CONN-001', 'PRES-002'] };
const CANCELLATION = { only: ['CONN-002'] };
const UPLOADS = { only: ['LOA-connections_loa_upload', 'LOA-port_reservations_loa_upload'] };

/** Faults a full run shows: changes, cancellations and uploads. */
function writeFaults(): Fault[] {
  const deleted = new Set<string>();
  return [
    {
      id: 'change-not-applied',
      description: 'PATCH and PUT answer 202 with the change made, but nothing is changed',
      full: CHANGES,
      request: (req) => (isChange(req) ? asRead(req) : req),
      response(res, req) {
        const sent = readJson(req);
        const resource = readJson(res);
        if (!isChange(req) || res.status !== 200 || !isItem(sent) || !isItem(resource)) return res;
        return withJson({ ...res, status: 202 }, { ...resource, ...sent });
      },
    },
    {
      id: 'change-accepts-invalid',
      description: 'a PATCH or PUT the server refuses with 400 is answered 202 with the resource unchanged',
      full: CHANGES,
      response: (res, req, forward) =>
        isChange(req) && res.status === 400 ? acceptedAsIs(forward, asRead(req), res) : res,
    },
    {
      id: 'destroy-answers-200',
      description: 'cancelling a connection or port reservation answers 200 instead of 202',
      full: CANCELLATION,
      response: (res, req) =>
        req.method === 'DELETE' && on(RESOURCE, req) && res.status === 202 ? { ...res, status: 200 } : res,
    },
    {
      id: 'destroy-loses-decommission-day',
      description: 'connections and port reservations being decommissioned show no decommission_at',
      full: CANCELLATION,
      response: (res, req) =>
        on(UNDER, req)
          ? editObjects(res, (item) =>
              ['decommission_requested', 'decommissioned'].includes(String(item.state)) &&
              typeof item.decommission_at === 'string'
                ? { ...item, decommission_at: null }
                : undefined,
            )
          : res,
    },
    {
      id: 'destroy-ignores-requested-day',
      description:
        'the decommission_at a DELETE asks for is ignored: the resource goes on the first possible day',
      full: CANCELLATION,
      request: (req) =>
        req.method === 'DELETE' && on(RESOURCE, req) && req.body.length
          ? {
              ...withHeaders(req, { 'content-type': undefined, 'content-length': undefined }),
              body: Buffer.alloc(0),
            }
          : req,
    },
    {
      id: 'destroyed-not-found',
      description: 'a connection or port reservation answers 404 once its cancellation was asked for',
      full: CANCELLATION,
      reset: () => deleted.clear(),
      request: (req) =>
        req.method === 'GET' && deleted.has(pathnameOf(req))
          ? problemResponse(404, 'not-found', 'No such resource.')
          : req,
      response(res, req) {
        if (req.method === 'DELETE' && on(RESOURCE, req) && isSuccess(res)) deleted.add(pathnameOf(req));
        return res;
      },
    },
    {
      id: 'loa-upload-accepts-anything',
      description: 'an LOA upload the server refuses (not a PDF) is answered 202 with the resource',
      full: UPLOADS,
      response: (res, req, forward) =>
        on(LOA, req, 'POST') && res.status === 400
          ? acceptedAsIs(forward, asRead(req, parentOf(req)), res)
          : res,
    },
    {
      id: 'loa-upload-octet-stream-refused',
      description:
        'an LOA sent as application/octet-stream is refused with 415, though the document allows it',
      full: UPLOADS,
      request: (req) =>
        on(LOA, req, 'POST') && /^application\/octet-stream/i.test(getHeader(req, 'content-type') ?? '')
          ? problemResponse(415, 'unsupported-media-type', 'Send the LOA as application/pdf.')
          : req,
    },
  ];
}

/** Fresh faults with empty memories; use one set per proxy. */
export function createConnectionFaults(): Fault[] {
  return [...readFaults(), ...writeFaults()];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const CONNECTION_FAULTS: readonly Fault[] = createConnectionFaults();
