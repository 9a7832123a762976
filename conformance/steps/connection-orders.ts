import type { CheckContext } from '../runner';
import type { Role } from '../suite';
import { roleCover } from './contacts';
import type { Item } from './items';
import { idOf, isItem, newMarker } from './items';
import { waitFor } from './waiting';
import { wholeList } from './whole-lists';

/**
 * Ordering a connection of the suite's own from the offering quickest to provision and to give
 * back.
 */

/** What ordering a connection needs besides the operation under test. */
export const ORDERING = [
  'connections_create',
  'connections_read',
  'connections_destroy',
  'product_offerings_list',
  'role_assignments_list',
];

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
