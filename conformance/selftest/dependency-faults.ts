import { acceptedAsIs, asRead, editObjects } from './connection-faults';
import type { Fault } from './faults';
import type { Item, ProxiedRequest, ProxiedResponse } from './messages';
import { isItem, pathnameOf, problemResponse, readJson, scalar, splitPath, withJson } from './messages';

/**
 * Faults in destroying what others depend on (`checks/dependencies.ts`, `DEP-*`), in the
 * properties every 400 carries (`ERR-004`, `ERR-005`) and in cloud configs left without a
 * cloud_vlan (`NSC-013`), each seen by a full run of the checks named: a connection refused while
 * its configs are already going, ids left behind in the resources that named what was deleted, a
 * role assignment deleted while in use, configs left live under a service that goes, refusals that
 * do not say which property to change, and a cloud_vlan required after all.
 */

const CONNECTION = /\/connections\/[^/]+$/;
const CONFIGS = /\/network-service-configs$/;
const CONFIG = /\/network-service-configs\/[^/]+$/;
const UNDER_CONFIGS = /\/network-service-configs(?:\/[^/]+)?$/;
const MAC = /\/macs\/[^/]+$/;
const SERVICE = /\/network-services\/[^/]+$/;
const ROLE_ASSIGNMENT = /\/role-assignments\/[^/]+$/;
/** Resources that name role assignments in their role_assignments. */
const NAMING_ASSIGNMENTS = /\/(?:connections|network-service-configs|network-feature-configs)(?:\/[^/]+)?$/;

/** States in which a config no longer holds what it carried. */
const ENDED = ['decommissioned', 'cancelled', 'archived'];
/** States of a config that is going or gone. */
const GOING = ['decommission_requested', ...ENDED];

const on = (pattern: RegExp, req: ProxiedRequest, method: string) =>
  req.method === method && pattern.test(pathnameOf(req));

const only = (...checks: string[]) => ({ only: checks });

const lastSegment = (req: ProxiedRequest): string => {
  const segment = pathnameOf(req).split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** The JSON object a request sent, or an empty one. */
const sent = (req: ProxiedRequest): Item => {
  const body = readJson(req);
  return isItem(body) ? body : {};
};

/**
 * A server that leaves the id of what was deleted in the `property` of the resources that named it:
 * once a DELETE of `deleted` answers 200, each resource answered through `naming` shows again the
 * ids of it that it showed before.
 */
function danglingIds(
  id: string,
  description: string,
  checks: readonly string[],
  deleted: RegExp,
  naming: RegExp,
  property: string,
): Fault {
  const seen = new Map<string, Set<string>>();
  const gone = new Set<string>();
  return {
    id,
    description,
    full: { only: checks },
    reset: () => {
      seen.clear();
      gone.clear();
    },
    response(res, req) {
      if (on(deleted, req, 'DELETE') && res.status === 200) {
        gone.add(lastSegment(req));
        return res;
      }
      if (!naming.test(pathnameOf(req))) return res;
      return editObjects(res, (item) => {
        const key = scalar(item.id);
        const listed = item[property];
        if (key === undefined || !Array.isArray(listed)) return undefined;
        const shown = listed.map(String);
        const known = seen.get(key) ?? new Set<string>();
        shown.forEach((value) => known.add(value));
        seen.set(key, known);
        const kept = [...known].filter((value) => gone.has(value) && !shown.includes(value));
        return kept.length ? { ...item, [property]: [...shown, ...kept] } : undefined;
      });
    },
  };
}

/** The path of the collection `/network-service-configs` below the base path `req` has. */
const configsOf = (req: ProxiedRequest, connection: string) =>
  `${splitPath(req.path).pathname.replace(/\/connections\/[^/]+\/?$/, '/network-service-configs')}?connection=${encodeURIComponent(connection)}`;

/** Fresh faults with empty memories; use one set per proxy. */
export function createDependencyFaults(): Fault[] {
  return [
    {
      id: 'connection-refused-while-configs-go',
      description:
        'a DELETE of a connection is refused while any config on it is not yet gone, even one already going',
      full: only('DEP-001'),
      // The DELETE is held back until the configs on the connection are known.
      request: (req) => (on(CONNECTION, req, 'DELETE') ? asRead(req) : req),
      async response(res, req, forward): Promise<ProxiedResponse> {
        if (!on(CONNECTION, req, 'DELETE')) return res;
        if (res.status === 200) {
          const listed = readJson(await forward(asRead(req, configsOf(req, lastSegment(req)))));
          const carried = (Array.isArray(listed) ? listed : []).filter(
            (config) => isItem(config) && !ENDED.includes(String(config.state)),
          ) as Item[];
          if (carried.length) {
            const ids = carried.map((config) => String(config.id));
            return problemResponse(
              400,
              'unable-to-fulfill',
              `the connection cannot go while it carries ${ids.join(', ')}; decommission those first`,
              {
                properties: [{ name: 'id', reason: `the connection carries ${ids.join(', ')}` }],
                conflicts: ids.map((config) => ({
                  resource_type: 'connections',
                  resource_id: lastSegment(req),
                  resource_property: null,
                  remote_resource_type: 'network-service-configs',
                  remote_resource_id: config,
                })),
              },
            );
          }
        }
        return forward(req);
      },
    },
    danglingIds(
      'mac-kept-by-going-config',
      'a MAC deleted once its configs are going stays named in their macs',
      ['DEP-002'],
      MAC,
      UNDER_CONFIGS,
      'macs',
    ),
    danglingIds(
      'role-assignment-kept-by-going-resource',
      'a role assignment deleted once the resources naming it are going stays named in their role_assignments',
      ['DEP-003'],
      ROLE_ASSIGNMENT,
      NAMING_ASSIGNMENTS,
      'role_assignments',
    ),
    {
      id: 'role-assignment-in-use-deleted',
      description:
        'a DELETE of a role assignment the server refuses (a live resource names it) is answered 200 with the assignment',
      full: only('DEP-003'),
      response: (res, req, forward) =>
        on(ROLE_ASSIGNMENT, req, 'DELETE') && res.status === 400
          ? acceptedAsIs(forward, asRead(req), res, 200)
          : res,
    },
    {
      id: 'service-configs-left-live',
      description:
        'the configs of a network service that goes stay in production, without a decommission day',
      full: only('DEP-004'),
      response: (res, req) =>
        req.method === 'GET' && UNDER_CONFIGS.test(pathnameOf(req))
          ? editObjects(res, (item) => {
              if (!GOING.includes(String(item.state))) return undefined;
              const { decommission_at: _day, charged_until: _charged, ...rest } = item;
              return { ...rest, state: 'production' };
            })
          : res,
    },
    (() => {
      const going = new Set<string>();
      return {
        id: 'service-still-waits-for-configs',
        description: 'a network service that goes still says in its status that it waits for configs',
        full: only('DEP-004'),
        breaks: 'should',
        reset: () => going.clear(),
        response(res, req) {
          if (on(SERVICE, req, 'DELETE') && res.status === 202) going.add(pathnameOf(req));
          if (!on(SERVICE, req, 'GET') || !going.has(pathnameOf(req))) return res;
          return editObjects(res, (item) =>
            ENDED.includes(String(item.state))
              ? undefined
              : {
                  ...item,
                  status: [
                    ...(Array.isArray(item.status) ? (item.status as unknown[]) : []),
                    {
                      severity: 5,
                      tag: 'waiting_for_configs',
                      message:
                        'The service goes into production once handover 1 has a network service config in production.',
                      attrs: {},
                      timestamp: new Date().toISOString(),
                    },
                  ],
                },
          );
        },
      } satisfies Fault;
    })(),
    {
      id: 'unable-to-fulfill-without-properties',
      description: '400 unable-to-fulfill answers carry their conflicts but no properties',
      full: only('ERR-004', 'ERR-005'),
      response(res) {
        const body = readJson(res);
        if (res.status !== 400 || !isItem(body) || !('properties' in body)) return res;
        if (typeof body.type !== 'string' || !body.type.endsWith('/unable-to-fulfill.html')) return res;
        const { properties: _properties, ...rest } = body;
        return withJson(res, rest);
      },
    },
    {
      id: 'cloud-vlan-required',
      description: 'a cloud_vc config sent without cloud_vlan is refused with a 400 naming it',
      full: only('NSC-013'),
      request(req) {
        const body = sent(req);
        if (!(on(CONFIGS, req, 'POST') || on(CONFIG, req, 'PUT')) || body.type !== 'cloud_vc') return req;
        if ('cloud_vlan' in body) return req;
        return problemResponse(400, 'validation-error', 'cloud_vlan: This field is required.', {
          properties: [{ name: 'cloud_vlan', reason: 'This field is required.' }],
        });
      },
    },
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const DEPENDENCY_FAULTS: readonly Fault[] = createDependencyFaults();
