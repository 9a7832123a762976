import type { CheckContext, CheckDefinition } from '../runner';
import { listOperations } from '../steps/list-operations';
import { isZero, sensitiveOfSchemas } from '../steps/redaction';
import { wholeCollection, wholeList } from '../steps/whole-lists';

const PUBLIC_ACCOUNT_VIEW = new Set(['id', 'name', 'metro_area_network_presence']);

type Item = Record<string, unknown>;

/** Redaction rules hold only where the judged revision marks account properties sensitive. */
const redacts = (t: CheckContext) => t.suite.sensitive.has('legal_name');
const NO_SENSITIVE_MARKS =
  'the judged schema revision marks no property sensitive, so nothing must be hidden';

/** The account ids a role acts for, as far as its own account list shows: itself and those below. */
async function scopeOf(t: CheckContext, role: 'primary' | 'secondary'): Promise<Set<string>> {
  const own = (await t.session(role)).accountId;
  if (!own) t.inconclusive(`the ${role} account's token does not name its account (no sub claim)`);
  const accounts = await wholeCollection(t, 'accounts_list', role);
  const scope = new Set([own]);
  for (let grew = true; grew;) {
    grew = false;
    for (const account of accounts) {
      if (!scope.has(String(account.id)) && scope.has(String(account.managing_account))) {
        scope.add(String(account.id));
        grew = true;
      }
    }
  }
  return scope;
}

/**
 * Whether a resource is meant to be seen beyond its accounts by one of `scope`: an exchange LAN
 * (the exchange's own, offered to every customer), a circuit whose B side it is, a public
 * multipoint service, or a multipoint service with joining rules (which may admit it).
 */
function sharedWith(item: Item, scope: ReadonlySet<string>): boolean {
  if (item.type === 'exchange_lan') return true;
  if (scope.has(String(item.joining_member_account))) return true;
  if (item.public === true) return true;
  return Array.isArray(item.member_joining_rules) && item.member_joining_rules.length > 0;
}

/** The primary account's id, for checks in which a second account looks at it. */
async function primaryForSecondary(t: CheckContext): Promise<string> {
  if (!t.suite.hasCredentials('secondary')) t.notApplicable('no credentials for a second account were given');
  const primary = (await t.session('primary')).accountId;
  return primary ?? t.inconclusive('the primary token does not name its account');
}

/** Redaction and isolation, seen from a second, unrelated account. */
export const ISOLATION_CHECKS: CheckDefinition[] = [
  {
    id: 'ISO-001',
    title: 'Another account sees the primary account only if discoverable, and then only its public view',
    clause:
      "Visibility: an account outside the caller's scope is visible only when discoverable, exposing id, name and metro_area_network_presence.",
    operations: ['accounts_read', 'accounts_list'],
    safety: 'read',
    async run(t) {
      const primary = await primaryForSecondary(t);
      const own = await t.call('accounts_read', { id: primary });
      const discoverable = (own.body as { discoverable?: unknown } | undefined)?.discoverable === true;
      const seen = await t.call('accounts_read', { id: primary, role: 'secondary' });
      if (discoverable) {
        t.must(seen.status === 200, `a discoverable account answered ${seen.status} to another account`);
        if (!redacts(t)) return;
        const extra = Object.keys((seen.body ?? {}) as Item).filter((key) => !PUBLIC_ACCOUNT_VIEW.has(key));
        t.must(extra.length === 0, `another account sees more than the public view: ${extra.join(', ')}`);
      } else {
        t.must(
          seen.status === 404,
          `a non-discoverable account answered ${seen.status} to another account, not 404`,
        );
      }
      const listed = (await wholeCollection(t, 'accounts_list', 'secondary')).find((a) => a.id === primary);
      t.must(
        discoverable || listed === undefined,
        "a non-discoverable account appears in another account's list",
      );
    },
  },
  {
    id: 'ISO-002',
    title: "Accounts outside the caller's scope are listed in their public view only",
    clause: "Redaction: sensitive properties of accounts outside the caller's scope are never shown.",
    operations: ['accounts_list'],
    safety: 'read',
    async run(t) {
      if (!t.suite.hasCredentials('secondary'))
        t.notApplicable('no credentials for a second account were given');
      if (!redacts(t)) t.notApplicable(NO_SENSITIVE_MARKS);
      for (const role of ['primary', 'secondary'] as const) {
        const scope = await scopeOf(t, role);
        for (const account of await wholeCollection(t, 'accounts_list', role)) {
          if (scope.has(String(account.id))) continue;
          const extra = Object.keys(account).filter((key) => !PUBLIC_ACCOUNT_VIEW.has(key));
          t.must(
            extra.length === 0,
            `${role} sees ${extra.join(', ')} of account ${String(account.id)} outside its scope`,
          );
        }
      }
    },
  },
  {
    id: 'ISO-003',
    title: 'Resources of the primary account are invisible to an unrelated account',
    clause:
      "Visibility: a resource neither managed nor consumed by the caller's accounts does not exist for it (404, absent from lists and id filters); exchange LANs, circuits whose B side it is and multipoint services that are public or have joining rules are shared on purpose and left out.",
    operations: ['accounts_list'],
    safety: 'read',
    async run(t) {
      if (!t.suite.hasCredentials('secondary'))
        t.notApplicable('no credentials for a second account were given');
      const primaryScope = await scopeOf(t, 'primary');
      const secondaryScope = await scopeOf(t, 'secondary');
      let tried = 0;
      for (const op of listOperations(t.suite.document)) {
        if (
          !op.read ||
          !t.suite.isDeclared(op.list) ||
          !t.suite.isDeclared(op.read) ||
          op.list === 'accounts_list'
        )
          continue;
        const owned = (await wholeCollection(t, op.list)).filter(
          (item) =>
            'managing_account' in item &&
            [item.managing_account, item.consuming_account].some((a) => primaryScope.has(String(a))) &&
            ![item.managing_account, item.consuming_account].some((a) => secondaryScope.has(String(a))) &&
            !sharedWith(item, secondaryScope),
        );
        for (const item of owned.slice(0, 2)) {
          tried += 1;
          const read = await t.call(op.read, { id: String(item.id), role: 'secondary' });
          t.must(
            read.status === 404,
            `${op.read} of ${String(item.id)} answered ${read.status} to an unrelated account`,
          );
          const filtered = await wholeList(t, op.list, {
            query: `id=${encodeURIComponent(String(item.id))}`,
            role: 'secondary',
          });
          t.must(filtered.length === 0, `${op.list}?id=${String(item.id)} shows it to an unrelated account`);
        }
      }
      if (!tried)
        t.inconclusive(
          'the primary account has no resources of its own to hide',
          'a connection of the primary account',
        );
    },
  },
  {
    id: 'ISO-004',
    title: "A filter on a sensitive property does not match another account's values",
    clause: 'Redaction: filtering by a sensitive property never reveals values hidden from the caller.',
    operations: ['accounts_list'],
    safety: 'read',
    async run(t) {
      if (!t.suite.hasCredentials('secondary'))
        t.notApplicable('no credentials for a second account were given');
      if (!redacts(t)) t.notApplicable(NO_SENSITIVE_MARKS);
      const primary = (await t.session('primary')).accountId;
      // The primary account itself, else an account it manages (the full profile creates some).
      const accounts = (await wholeCollection(t, 'accounts_list')).filter(
        (a) => typeof a.external_ref === 'string' && a.external_ref,
      );
      const own =
        accounts.find((a) => a.id === primary) ??
        accounts.find((a) => a.managing_account === primary) ??
        t.inconclusive(
          'neither the primary account nor an account it manages has an external_ref to search for',
          'an external_ref on the primary account or an account it manages',
        );
      const found = await wholeList(t, 'accounts_list', {
        query: `external_ref=${encodeURIComponent(String(own.external_ref))}`,
        role: 'secondary',
      });
      t.must(
        !found.some((a) => a.id === own.id),
        `another account finds account ${String(own.id)} by its external_ref`,
      );
    },
  },
  {
    id: 'ISO-006',
    title: 'Shared network services hide their sensitive properties from other accounts',
    clause:
      "Redaction: a network service shown outside its accounts' scope hides its sensitive properties; required ones take zero values ('', 0, false). Public services are visible to every account.",
    operations: ['network_services_list', 'accounts_list'],
    safety: 'read',
    async run(t) {
      const roles = t.suite.hasCredentials('secondary')
        ? (['primary', 'secondary'] as const)
        : (['primary'] as const);
      const sensitive = sensitiveOfSchemas(t, /NetworkService$/);
      const shared = new Map<string, Set<string>>();
      const seen = new Map<string, Set<string>>();
      /** Public services (and exchange LANs) of others the primary account sees. */
      const everyones: string[] = [];
      for (const role of roles) {
        const scope = await scopeOf(t, role);
        const ids = new Set<string>();
        const services = await wholeCollection(t, 'network_services_list', role);
        seen.set(role, new Set(services.map((service) => String(service.id))));
        for (const service of services) {
          if (scope.has(String(service.managing_account)) || scope.has(String(service.consuming_account)))
            continue;
          ids.add(String(service.id));
          if (role === 'primary' && (service.public === true || service.type === 'exchange_lan'))
            everyones.push(String(service.id));
          const shown = Object.keys(service).filter((key) => sensitive.has(key) && !isZero(service[key]));
          t.must(
            shown.length === 0,
            `${role} sees ${shown.join(', ')} of network service ${String(service.id)} outside its scope`,
          );
        }
        shared.set(role, ids);
      }
      if (![...shared.values()].some((ids) => ids.size))
        t.inconclusive('no account sees a network service outside its scope');
      // Public services of others the primary account sees, the secondary one sees too (or owns);
      // circuits and services shared with the primary account alone may stay hidden from it.
      const secondary = seen.get('secondary');
      if (secondary) {
        const hidden = everyones.filter((id) => !secondary.has(id));
        t.should(
          hidden.length === 0,
          `public services the primary account sees are hidden from the secondary one: ${hidden.slice(0, 5).join(', ')}`,
        );
      }
    },
  },
  {
    id: 'ISO-007',
    title: "Another account's account cannot be changed: 403 when visible, 404 when not",
    clause:
      'Authorisation: a resource the caller may see but not change answers 403 permission-denied to a change; one it may not see answers 404.',
    operations: ['accounts_partial_update', 'accounts_read'],
    safety: 'read',
    async run(t) {
      const primary = await primaryForSecondary(t);
      const seen = await t.call('accounts_read', { id: primary, role: 'secondary' });
      // An empty patch changes nothing, even on a server that wrongly lets it through.
      const patched = await t.call('accounts_partial_update', { id: primary, role: 'secondary', body: {} });
      const type = (patched.body as { type?: unknown } | undefined)?.type;
      if (seen.status === 200) {
        t.must(
          patched.status === 403,
          `another account's PATCH of a visible account answered ${patched.status}, not 403`,
        );
        if (patched.status === 403)
          t.must(
            typeof type === 'string' && type.endsWith('/permission-denied.html'),
            `the 403 has the problem type ${JSON.stringify(type)}, not permission-denied`,
          );
      } else {
        t.must(
          patched.status === 404,
          `another account's PATCH of an invisible account answered ${patched.status}, not 404 (a 403 would reveal it exists)`,
        );
      }
    },
  },
  {
    id: 'ISO-005',
    title: 'Pagination counts only what the caller may see',
    clause: 'Visibility: invisible resources do not count in X-Pagination-Items.',
    operations: ['accounts_list'],
    safety: 'read',
    async run(t) {
      if (!t.suite.hasCredentials('secondary'))
        t.notApplicable('no credentials for a second account were given');
      const all = await wholeCollection(t, 'accounts_list', 'secondary');
      const page = await t.call('accounts_list', { query: 'page_limit=1', role: 'secondary' });
      t.must(
        page.headers['x-pagination-items'] === String(all.length),
        `X-Pagination-Items says ${page.headers['x-pagination-items']}, the caller sees ${all.length}`,
      );
    },
  },
];
