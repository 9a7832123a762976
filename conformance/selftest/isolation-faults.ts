import type { Fault } from './faults';
import type { Item, ProxiedRequest } from './messages';
import {
  editReadObjects,
  idsAskedFor,
  isItem,
  jsonResponse,
  listItems,
  pathnameOf,
  readJson,
  scalar,
  splitPath,
  withJson,
} from './messages';

/**
 * Faults of isolation: another account's resources shown whole, sensitive properties leaked to
 * those who may not see them, an id filter that shows what the caller may not read.
 */

const PUBLIC_ACCOUNT_VIEW = new Set(['id', 'name', 'metro_area_network_presence']);

/** The account id of GET /accounts/{id}, '' for GET /accounts, undefined for other requests. */
function accountsTarget(req: ProxiedRequest): string | undefined {
  if (req.method !== 'GET') return undefined;
  const match = /\/accounts(?:\/([^/]+))?$/.exec(pathnameOf(req));
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1] ?? '');
  } catch {
    return match[1];
  }
}

const isPublicView = (item: Item) =>
  'id' in item && Object.keys(item).every((key) => PUBLIC_ACCOUNT_VIEW.has(key));

export function isolationFaults(): Fault[] {
  const accounts = new Map<string, Item>();
  const seenItems = new Map<string, Map<string, unknown>>();
  return [
    {
      id: 'isolation-read-foreign-account',
      description:
        "reading an account outside the caller's scope answers 200 with the full account instead of 404",
      reset: () => accounts.clear(),
      response(res, req) {
        const target = accountsTarget(req);
        if (target === undefined) return res;
        const body = readJson(res);
        for (const item of Array.isArray(body) ? body : [body]) {
          const id = isItem(item) ? scalar(item.id) : undefined;
          if (id !== undefined && isItem(item) && !isPublicView(item) && !accounts.has(id))
            accounts.set(id, item);
        }
        if (!target || res.status !== 404 || !accounts.size) return res;
        const account = accounts.get(target) ?? accounts.values().next().value;
        return jsonResponse(200, account);
      },
    },
    {
      id: 'isolation-leak-sensitive',
      description: "accounts outside the caller's scope show legal_name and billing_information",
      response(res, req) {
        if (accountsTarget(req) === undefined) return res;
        return editReadObjects(res, req, (item) =>
          isPublicView(item)
            ? {
                ...item,
                legal_name: 'leaked',
                billing_information: {
                  name: 'leaked',
                  address: {
                    country: 'DE',
                    locality: 'Berlin',
                    postal_code: '10115',
                    street_address: 'Leaked Str. 1',
                  },
                },
              }
            : undefined,
        );
      },
    },
    {
      id: 'isolation-service-leak-sensitive',
      description: 'network services show an external_ref to every caller, whoever manages them',
      response(res, req) {
        if (req.method !== 'GET' || !/\/network-services(?:\/[^/]+)?$/.test(pathnameOf(req))) return res;
        return editReadObjects(res, req, (item) =>
          'managing_account' in item && !item.external_ref
            ? { ...item, external_ref: 'leaked-ref' }
            : undefined,
        );
      },
    },
    {
      id: 'isolation-id-filter-leak',
      description:
        'an id filter finds items the caller cannot see (any item seen earlier through the same collection)',
      reset: () => seenItems.clear(),
      response(res, req) {
        const items = listItems(res, req);
        if (!items) return res;
        const pathname = pathnameOf(req);
        const seen = seenItems.get(pathname) ?? new Map<string, unknown>();
        seenItems.set(pathname, seen);
        for (const item of items) {
          const id = isItem(item) ? scalar(item.id) : undefined;
          if (id !== undefined) seen.set(id, item);
        }
        if (items.length) return res;
        const leaked = idsAskedFor(splitPath(req.path).query).flatMap((id) =>
          seen.has(id) ? [seen.get(id)] : [],
        );
        return leaked.length ? withJson(res, leaked) : res;
      },
    },
  ];
}
