import { asRead, editObjects, editPolicy, shiftDay } from './connection-faults';
import type { Fault } from './faults';
import type { Item, ProxiedRequest, ProxiedResponse } from './messages';
import { isItem, jsonResponse, pathnameOf, readJson, splitPath } from './messages';

/**
 * Faults in virtual circuits, each seen by a full run of the checks that order them
 * (`checks/circuits.ts` and the `checks/circuit-*.ts` beside it): services ordered against the rules or shown to whom they are hidden from,
 * change requests taken from the wrong side, member joining rules answered as if provisioned or
 * contradicting themselves, and configs of cloud and multipoint services the rules forbid.
 */

const SERVICES = /\/network-services$/;
const SERVICE = /\/network-services\/[^/]+$/;
const UNDER_SERVICES = /\/network-services(?:\/[^/]+)?$/;
const SERVICE_POLICY = /\/network-services\/[^/]+\/cancellation-policy$/;
const CHANGE_REQUEST = /\/network-services\/[^/]+\/change-request$/;
const RULES = /\/member-joining-rules$/;
const RULE = /\/member-joining-rules\/[^/]+$/;
const CONFIGS = /\/network-service-configs$/;
const UNDER_CONFIGS = /\/network-service-configs(?:\/[^/]+)?$/;

const on = (pattern: RegExp, req: ProxiedRequest, method: string) =>
  req.method === method && pattern.test(pathnameOf(req));

const only = (...checks: string[]) => ({ only: checks });

/** The JSON object a request sent, or an empty one. */
const sent = (req: ProxiedRequest): Item => {
  const body = readJson(req);
  return isItem(body) ? body : {};
};

/** Whether a 400 names `name` among its properties. */
function names(res: ProxiedResponse, name: string): boolean {
  const body = readJson(res);
  return (
    res.status === 400 &&
    isItem(body) &&
    Array.isArray(body.properties) &&
    body.properties.some((property) => isItem(property) && property.name === name)
  );
}

/** The order a refused POST sent, answered 201 as if created with `id`. */
const createdAnyway = (req: ProxiedRequest, id: string, extra: Item = {}) =>
  jsonResponse(201, { ...sent(req), id, ...extra });

/** Fresh faults with empty memories; use one set per proxy. */
export function createCircuitFaults(): Fault[] {
  let lastService: ProxiedResponse | undefined;
  return [
    {
      id: 'circuit-to-itself-accepted',
      description: 'a p2p_vc circuit whose B side is its own consuming account is answered 201 as ordered',
      full: only('NS-003'),
      response(res, req) {
        const order = sent(req);
        if (!on(SERVICES, req, 'POST') || res.status !== 400 || order.type !== 'p2p_vc') return res;
        if (order.joining_member_account !== order.consuming_account) return res;
        return createdAnyway(req, 'ns-circuit-to-itself', { state: 'requested' });
      },
    },
    {
      id: 'cloud-key-not-checked',
      description: 'a cloud_vc service with a key its provider does not take is answered 201 as ordered',
      full: only('NS-004'),
      response: (res, req) =>
        on(SERVICES, req, 'POST') && names(res, 'cloud_key')
          ? createdAnyway(req, 'ns-any-cloud-key', { state: 'requested', diversity: 1, provider_ref: null })
          : res,
    },
    {
      id: 'service-patch-not-applied',
      description: 'a PATCH of a network service answers 202 with the service as it was, changing nothing',
      full: only('NS-002'),
      request: (req) => (on(SERVICE, req, 'PATCH') ? asRead(req) : req),
      response: (res, req) =>
        on(SERVICE, req, 'PATCH') && res.status === 200 ? { ...res, status: 202 } : res,
    },
    {
      id: 'service-policy-day-in-the-past',
      description:
        'without decommission_at, the policy of a network service names a first possible day a month ago',
      full: only('NS-002'),
      response: editPolicy(
        (policy, req) =>
          splitPath(req.path).query.has('decommission_at')
            ? undefined
            : { decommission_at: shiftDay(policy.decommission_at, -30) },
        SERVICE_POLICY,
      ),
    },
    {
      id: 'service-destroy-answers-204',
      description: 'cancelling a network service answers 204 without it instead of 202 with it',
      full: only('NS-002'),
      response: (res, req) =>
        on(SERVICE, req, 'DELETE') && res.status === 202
          ? { status: 204, headers: {}, body: Buffer.alloc(0) }
          : res,
    },
    {
      id: 'circuit-b-side-sees-references',
      description:
        "the B side of a circuit sees the owner's external_ref and purchase_order where they were hidden",
      full: only('NS-005'),
      response: (res, req) =>
        req.method === 'GET' && UNDER_SERVICES.test(pathnameOf(req))
          ? editObjects(res, (item) =>
              item.type === 'p2p_vc' && item.billing_account === ''
                ? { ...item, external_ref: 'leaked-ref', purchase_order: 'LEAKED-PO' }
                : undefined,
            )
          : res,
    },
    {
      id: 'public-service-shows-references',
      description:
        "a public multipoint service shows other accounts its owner's external_ref and purchase_order",
      full: only('NS-006'),
      response: (res, req) =>
        req.method === 'GET' && UNDER_SERVICES.test(pathnameOf(req))
          ? editObjects(res, (item) =>
              item.public === true && item.billing_account === ''
                ? { ...item, external_ref: 'leaked-ref', purchase_order: 'LEAKED-PO' }
                : undefined,
            )
          : res,
    },
    {
      id: 'private-service-shown-to-others',
      description:
        'a network service the caller cannot see (or that does not exist) reads as the last service served',
      full: only('MJR-003'),
      reset: () => {
        lastService = undefined;
      },
      response(res, req) {
        if (!on(SERVICE, req, 'GET')) return res;
        if (res.status === 200) lastService = res;
        return res.status === 404 && lastService ? lastService : res;
      },
    },
    {
      id: 'rule-capacities-inverted-accepted',
      description: 'a member joining rule with capacity_min above capacity_max is answered 201 as created',
      full: only('MJR-002'),
      response(res, req) {
        const rule = sent(req);
        if (!on(RULES, req, 'POST') || res.status !== 400) return res;
        if (typeof rule.capacity_min !== 'number' || typeof rule.capacity_max !== 'number') return res;
        return rule.capacity_min > rule.capacity_max ? createdAnyway(req, 'mjr-inverted') : res;
      },
    },
    {
      id: 'rule-change-answers-202',
      description: 'PATCH and PUT of a member joining rule answer 202, as if provisioned, instead of 200',
      full: only('MJR-002'),
      response: (res, req) =>
        (on(RULE, req, 'PATCH') || on(RULE, req, 'PUT')) && res.status === 200
          ? { ...res, status: 202 }
          : res,
    },
    {
      id: 'rule-destroy-answers-202',
      description: 'DELETE of a member joining rule answers 202 instead of 200',
      full: only('MJR-002', 'MJR-003'),
      response: (res, req) => (on(RULE, req, 'DELETE') && res.status === 200 ? { ...res, status: 202 } : res),
    },
    {
      id: 'change-request-from-a-side-accepted',
      description: "a change request from a circuit's A side, which the server refuses, is answered 202",
      full: only('CR-001'),
      response: (res, req) =>
        on(CHANGE_REQUEST, req, 'POST') && res.status === 403 ? jsonResponse(202, sent(req)) : res,
    },
    {
      id: 'change-request-leaves-circuit-in-production',
      description: 'a circuit with an open change request reads as production, not production_change_pending',
      full: only('CR-002'),
      response: (res, req) =>
        req.method === 'GET' && UNDER_SERVICES.test(pathnameOf(req))
          ? editObjects(res, (item) =>
              item.state === 'production_change_pending' ? { ...item, state: 'production' } : undefined,
            )
          : res,
    },
    {
      id: 'cloud-handover-beyond-diversity-accepted',
      description: "a cloud_vc config on a handover above the service's diversity is answered 201 as ordered",
      full: only('NSC-010'),
      response: (res, req) =>
        on(CONFIGS, req, 'POST') && sent(req).type === 'cloud_vc' && names(res, 'handover')
          ? createdAnyway(req, 'nsc-beyond-diversity', { state: 'requested' })
          : res,
    },
    {
      id: 'p2mp-role-forgotten',
      description: 'p2mp_vc configs are answered as leaves, whatever role they were ordered with',
      full: only('NSC-011'),
      response: (res, req) =>
        UNDER_CONFIGS.test(pathnameOf(req))
          ? editObjects(res, (item) =>
              item.type === 'p2mp_vc' && item.role === 'root' ? { ...item, role: 'leaf' } : undefined,
            )
          : res,
    },
    {
      id: 'private-service-joined-without-rule',
      description:
        'a config on a multipoint service, which the server refuses to an account no rule admits, is answered 201',
      full: only('NSC-012'),
      response: (res, req) =>
        on(CONFIGS, req, 'POST') && sent(req).type === 'mp2mp_vc' && [400, 403].includes(res.status)
          ? createdAnyway(req, 'nsc-joined-anyway', { state: 'requested' })
          : res,
    },
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const CIRCUIT_FAULTS: readonly Fault[] = createCircuitFaults();
