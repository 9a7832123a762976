import { acceptedAsIs, asRead, editObjects, editPolicy, shiftDay } from './connection-faults';
import type { Fault } from './faults';
import type { ProxiedRequest, ProxiedResponse } from './messages';
import { isItem, pathnameOf, readJson, splitPath, withJson } from './messages';

/**
 * Faults in network service configs, their addresses and MACs, each seen by a full run of the
 * checks that order exchange-LAN access (`checks/configs.ts`): what a config says of its addresses
 * and VLAN, its changes, cancellation and archiving, and who may see it.
 */

const CONFIG = /\/network-service-configs\/[^/]+$/;
const UNDER_CONFIGS = /\/network-service-configs(?:\/[^/]+)?$/;
const CONFIG_POLICY = /\/network-service-configs\/[^/]+\/cancellation-policy$/;
const IPS = /\/ips(?:\/[^/]+)?$/;
const IP = /\/ips\/[^/]+$/;
const MAC = /\/macs\/[^/]+$/;

const on = (pattern: RegExp, req: ProxiedRequest, method: string) =>
  req.method === method && pattern.test(pathnameOf(req));

/** Addresses no exchange LAN of the documentation ranges uses. */
const OUTSIDE = { 4: '100.64.0.1', 6: 'fd00:c0f::1' } as const;

const only = (...checks: string[]) => ({ only: checks });

/** Fresh faults with empty memories; use one set per proxy. */
export function createConfigFaults(): Fault[] {
  let lastConfig: ProxiedResponse | undefined;
  const listedFor = new Map<string, unknown[]>();
  return [
    {
      id: 'config-ips-dropped',
      description: 'network service configs are answered without their ips',
      full: only('NSC-001'),
      response: (res, req) =>
        UNDER_CONFIGS.test(pathnameOf(req))
          ? editObjects(res, (item) => {
              if (!('ips' in item)) return undefined;
              const { ips: _dropped, ...rest } = item;
              return rest;
            })
          : res,
    },
    {
      id: 'config-address-outside-subnet',
      description: "addresses are answered outside the exchange LAN's subnets",
      full: only('NSC-001'),
      response: (res, req) =>
        req.method === 'GET' && IPS.test(pathnameOf(req))
          ? editObjects(res, (item) =>
              (item.version === 4 || item.version === 6) && item.address !== OUTSIDE[item.version]
                ? { ...item, address: OUTSIDE[item.version] }
                : undefined,
            )
          : res,
    },
    {
      id: 'config-policy-day-in-the-past',
      description: 'without decommission_at, the policy of a config names a first possible day a month ago',
      full: only('NSC-002'),
      response: editPolicy(
        (policy, req) =>
          splitPath(req.path).query.has('decommission_at')
            ? undefined
            : { decommission_at: shiftDay(policy.decommission_at, -30) },
        CONFIG_POLICY,
      ),
    },
    {
      id: 'config-patch-refusal-accepted',
      description:
        'a PATCH of a config the server refuses (of another type, say) is answered 202 with the config unchanged',
      full: only('NSC-003'),
      response: (res, req, forward) =>
        on(CONFIG, req, 'PATCH') && res.status === 400 ? acceptedAsIs(forward, asRead(req), res) : res,
    },
    {
      id: 'config-vlan-clash-unnamed',
      description: 'a config refused as unable-to-fulfill names no conflict',
      full: only('NSC-004'),
      response(res, req) {
        const body = readJson(res);
        if (req.method !== 'POST' || res.status !== 400 || !isItem(body) || !Array.isArray(body.conflicts))
          return res;
        return withJson(res, { ...body, conflicts: [] });
      },
    },
    {
      id: 'config-destroy-answers-204',
      description: 'cancelling a config answers 204 without the config instead of 202 with it',
      full: only('NSC-005', 'NSC-006'),
      response: (res, req) =>
        on(CONFIG, req, 'DELETE') && res.status === 202
          ? { status: 204, headers: {}, body: Buffer.alloc(0) }
          : res,
    },
    {
      id: 'config-not-archived',
      description: 'a DELETE of a cancelled or decommissioned config answers it as it was, not archived',
      full: only('NSC-006'),
      response(res, req) {
        const body = readJson(res);
        if (!on(CONFIG, req, 'DELETE') || !isItem(body) || body.state !== 'archived') return res;
        return withJson(res, { ...body, state: 'cancelled' });
      },
    },
    {
      id: 'ip-address-change-accepted',
      description: 'a PATCH of an address the server refuses (moving it) is answered 200 with the address',
      full: only('NSC-007'),
      response: (res, req, forward) =>
        on(IP, req, 'PATCH') && res.status === 400 ? acceptedAsIs(forward, asRead(req), res, 200) : res,
    },
    {
      id: 'config-readable-by-others',
      description: 'a config the caller cannot see (or that does not exist) reads as the last config served',
      full: only('NSC-008'),
      reset: () => {
        lastConfig = undefined;
      },
      response(res, req) {
        if (!on(CONFIG, req, 'GET')) return res;
        if (res.status === 200) lastConfig = res;
        return res.status === 404 && lastConfig ? lastConfig : res;
      },
    },
    {
      id: 'ips-filter-leaks',
      description:
        'an empty /ips?network_service_config= answer lists what an earlier caller got with the same filter',
      full: only('NSC-008'),
      reset: () => listedFor.clear(),
      response(res, req) {
        const asked = splitPath(req.path).query.get('network_service_config');
        const items = readJson(res);
        if (
          req.method !== 'GET' ||
          !/\/ips$/.test(pathnameOf(req)) ||
          asked === null ||
          !Array.isArray(items)
        )
          return res;
        if (items.length) {
          listedFor.set(asked, items);
          return res;
        }
        const earlier = listedFor.get(asked);
        return earlier ? withJson(res, earlier) : res;
      },
    },
    {
      id: 'mac-delete-in-use-succeeds',
      description: 'a DELETE of a MAC the server refuses (a config uses it) is answered 200 with the MAC',
      full: only('NSC-009'),
      response: (res, req, forward) =>
        on(MAC, req, 'DELETE') && res.status === 400 ? acceptedAsIs(forward, asRead(req), res, 200) : res,
    },
  ];
}

/** A shared set; the proxy resets a fault's memory each time it is set. */
export const CONFIG_FAULTS: readonly Fault[] = createConfigFaults();
