import type { Conflict } from './errors';
import { UnableToFulfillError } from './errors';
import type { State } from './states';

/**
 * Per-account quotas: what one account tree (a top account and every account it manages, directly
 * or below) may hold at once, so that one customer cannot take every spare port of a metro, make
 * sub-accounts, contacts, MAC or IP registrations or joining rules without end, or flood the
 * exchange with orders. A reseller's sub-accounts count against the reseller's tree; the exchange's
 * own account is not limited.
 */
export type QuotaName =
  'ports' | 'sub_accounts' | 'open_orders' | 'contacts' | 'macs' | 'ips' | 'member_joining_rules';

/** The limit of each quota; 0 means no limit. */
export type Quotas = Readonly<Record<QuotaName, number>>;

/** What an order adds to each quota it touches. */
export type QuotaDemand = Partial<Record<QuotaName, number>>;

/** What an account tree holds, for the quotas an order touches. */
export type QuotaUsage = Partial<Record<QuotaName, number>>;

/** Nothing limited (tools and scripts that write on the exchange's behalf). */
export const NO_QUOTAS: Quotas = {
  ports: 0,
  sub_accounts: 0,
  open_orders: 0,
  contacts: 0,
  macs: 0,
  ips: 0,
  member_joining_rules: 0,
};

/** The setting of each quota, as operators know it (QUOTA_PORTS), in the order the quotas are checked. */
export const QUOTA_SETTINGS = Object.fromEntries(
  Object.keys(NO_QUOTAS).map((name) => [name, `QUOTA_${name.toUpperCase()}`]),
) as Readonly<Record<QuotaName, string>>;

/** What each quota counts, in words, and how a tree at its limit makes room. */
const COUNTED: Readonly<Record<QuotaName, { what: string; room: string }>> = {
  ports: { what: 'ports', room: 'end some first' },
  sub_accounts: { what: 'sub-accounts', room: 'end some first' },
  open_orders: { what: 'open orders', room: 'end some first' },
  contacts: { what: 'contacts', room: 'delete some first' },
  macs: { what: 'MAC addresses', room: 'delete some first' },
  // IX-API has no DELETE for IP addresses: a registration is changed to name another address.
  ips: { what: 'registered IP addresses', room: 'change one of them instead' },
  member_joining_rules: { what: 'member joining rules', room: 'delete some first' },
};

/**
 * States of an order that is still open: ordered, not yet in production and not ended. An order
 * counts only while it has never been in production (a resource in trouble after going live is no
 * open order).
 */
export const OPEN_ORDER_STATES: readonly State[] = [
  'requested',
  'scheduled',
  'allocated',
  'testing',
  'error',
  'operator',
];

/** An order refused because the account tree holds what its quota allows already. */
export class QuotaExceededError extends UnableToFulfillError {
  constructor(
    readonly quota: QuotaName,
    readonly limit: number,
    readonly held: number,
    readonly asked: number,
    /** The top account of the tree the quota counts. */
    readonly account: string,
    conflicts: Conflict[],
  ) {
    super(
      'managing_account',
      `quota ${QUOTA_SETTINGS[quota]} reached: ${account} and the accounts it manages hold ${held} ${COUNTED[quota].what} ` +
        `of at most ${limit}, and this needs ${asked} more; ${COUNTED[quota].room} or ask the exchange for a higher quota`,
      conflicts,
    );
  }

  override extensions() {
    return {
      ...super.extensions(),
      quota: {
        name: this.quota,
        setting: QUOTA_SETTINGS[this.quota],
        limit: this.limit,
        held: this.held,
        asked: this.asked,
        account: this.account,
      },
    };
  }
}

/**
 * Refuses an order that would take an account tree beyond one of its quotas (the first one, in the
 * order of QUOTA_SETTINGS). `root` is the tree's top account and `orderedFor` the
 * account the order is for; the conflict names the first as the account whose quota stands in the
 * way (its property `quota_<name>`) and the second as the one using it.
 */
export function requireWithinQuotas(
  quotas: Quotas,
  usage: QuotaUsage,
  demand: QuotaDemand,
  accounts: { root: string; orderedFor: string },
): void {
  for (const name of Object.keys(QUOTA_SETTINGS) as QuotaName[]) {
    const asked = demand[name] ?? 0;
    const limit = quotas[name];
    if (asked <= 0 || limit === 0) continue;
    const held = usage[name] ?? 0;
    if (held + asked <= limit) continue;
    throw new QuotaExceededError(name, limit, held, asked, accounts.root, [
      {
        resource_type: 'accounts',
        resource_id: accounts.root,
        resource_property: `quota_${name}`,
        remote_resource_type: 'accounts',
        remote_resource_id: accounts.orderedFor,
      },
    ]);
  }
}

/** The quotas an order can exceed, of those it touches: which the counting has to look at. */
export function quotasAt(quotas: Quotas, demand: QuotaDemand): QuotaName[] {
  return (Object.keys(QUOTA_SETTINGS) as QuotaName[]).filter(
    (name) => (demand[name] ?? 0) > 0 && quotas[name] > 0,
  );
}
