import { editObjects } from './connection-faults';
import type { Fault } from './faults';
import type { ProxiedResponse } from './messages';
import { isItem, jsonResponse, pathnameOf, readJson, splitPath, withJson } from './messages';

/**
 * Faults in route-server sessions and in traffic statistics: a twin session accepted, a session
 * shown to another account, a config that does not name its sessions (each seen by a full run of
 * `NFC-001`); statistics that take a reversed window or claim more samples than expected (seen by
 * a read run).
 */

const SESSIONS = /\/network-feature-configs$/;
const SESSION = /\/network-feature-configs\/[^/]+$/;
const CONFIGS = /\/network-service-configs(?:\/[^/]+)?$/;
const STATISTICS = /\/(?:ports|connections|network-service-configs)\/[^/]+\/statistics$/;

const only = (...checks: string[]) => ({ only: checks });

/** Whether a statistics query names a window whose end comes before its start. */
function reversed(path: string): boolean {
  const query = splitPath(path).query;
  const start = Date.parse(query.get('start') ?? '');
  const end = Date.parse(query.get('end') ?? '');
  return end < start;
}

/** Fresh faults with empty memories; use one set per proxy. */
export function createSessionFaults(): Fault[] {
  let lastSession: ProxiedResponse | undefined;
  return [
    {
      id: 'session-twin-accepted',
      description: 'a route-server session the server refuses (a twin of another) is answered 201 as ordered',
      full: only('NFC-001'),
      response(res, req) {
        if (req.method !== 'POST' || !SESSIONS.test(pathnameOf(req)) || res.status !== 400) return res;
        const ordered = JSON.parse(req.body.toString('utf8') || '{}') as Record<string, unknown>;
        return jsonResponse(201, { ...ordered, id: 'nfc-twin', state: 'requested' });
      },
    },
    {
      id: 'session-readable-by-others',
      description:
        'a session the caller cannot see (or that does not exist) reads as the last session served',
      full: only('NFC-001'),
      reset: () => {
        lastSession = undefined;
      },
      response(res, req) {
        if (req.method !== 'GET' || !SESSION.test(pathnameOf(req))) return res;
        if (res.status === 200) lastSession = res;
        return res.status === 404 && lastSession ? lastSession : res;
      },
    },
    {
      id: 'config-sessions-unnamed',
      description: 'network service configs are answered without the sessions they have',
      full: only('NFC-001'),
      response: (res, req) =>
        req.method === 'GET' && CONFIGS.test(pathnameOf(req))
          ? editObjects(res, (item) =>
              Array.isArray(item.network_feature_configs) && item.network_feature_configs.length
                ? { ...item, network_feature_configs: [] }
                : undefined,
            )
          : res,
    },
    {
      id: 'statistics-reversed-window-accepted',
      description: 'statistics asked for a window that ends before it starts answer the sliding windows',
      async response(res, req, forward) {
        if (req.method !== 'GET' || !STATISTICS.test(pathnameOf(req)) || !reversed(req.path)) return res;
        return forward({ ...req, path: splitPath(req.path).pathname });
      },
    },
    {
      id: 'statistics-accuracy-over-one',
      description: 'statistics claim an accuracy of 1.5, more samples than were expected',
      response(res, req) {
        const body = readJson(res);
        if (req.method !== 'GET' || !STATISTICS.test(pathnameOf(req)) || res.status !== 200) return res;
        if (!isItem(body) || !isItem(body.aggregates)) return res;
        const aggregates = Object.fromEntries(
          Object.entries(body.aggregates).map(([key, value]) => [
            key,
            isItem(value) ? { ...value, accuracy: 1.5 } : value,
          ]),
        );
        return withJson(res, { ...body, aggregates });
      },
    },
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const SESSION_FAULTS: readonly Fault[] = createSessionFaults();
