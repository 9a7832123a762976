import type { CheckContext } from '../runner';
import type { Role } from '../suite';
import { strings } from './circuit-orders';
import type { Item } from './items';
import { idOf, newMarker, show } from './items';
import { wholeList } from './whole-lists';

/**
 * Contacts in roles: the role assignments an order names, and contacts of the suite's own in a
 * role.
 */

/**
 * What picks, for a list of roles, role assignments of the account `role` acts as (the primary
 * one by default) that hold them (its own contacts' first); it answers undefined when a role has
 * no holder.
 */
export async function roleCover(
  t: CheckContext,
  role: Role = 'primary',
): Promise<(roles: readonly unknown[]) => string[] | undefined> {
  const account = (await t.session(role)).accountId;
  const assignments = await wholeList(t, 'role_assignments_list', { role });
  const contacts = t.suite.isDeclared('contacts_list') ? await wholeList(t, 'contacts_list', { role }) : [];
  const own = new Set(
    contacts.filter((contact) => contact.consuming_account === account).map((contact) => contact.id),
  );
  return (roles) => {
    const picked: string[] = [];
    for (const wanted of roles) {
      const holders = assignments.filter((assignment) => assignment.role === wanted);
      const holder = holders.find((assignment) => own.has(assignment.contact)) ?? holders[0];
      if (!holder) return undefined;
      picked.push(String(holder.id));
    }
    return picked;
  };
}

/** Contact fields the suite can fill for a contact of its own. */
const CONTACT_FIELDS: Item = {
  name: 'Conformance Contact',
  email: 'contact@conformance.example',
  telephone: '+4930123456',
};

/**
 * A contact of the primary account's own in a role it can fill, written into the ledger first, and
 * its role assignment. The role is one that no connection offering requires where there is one,
 * so that other orders of the run do not pick this contact's assignment to cover their roles.
 */
export async function contactInRole(
  t: CheckContext,
): Promise<{ contact: string; assignment: string; role: string; contactSeq: number; seq: number }> {
  const primary =
    (await t.session()).accountId ?? t.inconclusive('the primary token does not name its account');
  const fillable = (await wholeList(t, 'roles_list')).filter((role) =>
    (Array.isArray(role.required_fields) ? role.required_fields : []).every(
      (field) => typeof field === 'string' && field in CONTACT_FIELDS,
    ),
  );
  const demanded = new Set(
    t.suite.isDeclared('product_offerings_list')
      ? (await wholeList(t, 'product_offerings_list', { query: 'type=connection' })).flatMap((offering) =>
          strings(offering.required_contact_roles),
        )
      : [],
  );
  const role =
    fillable.sort(
      (a, b) =>
        Number(demanded.has(String(a.id))) - Number(demanded.has(String(b.id))) ||
        String(a.name).localeCompare(String(b.name)),
    )[0] ??
    t.inconclusive('no role of the exchange can be held by a contact with a name, email and telephone');
  const marker = newMarker();
  const contactSeq = t.suite.ledger.intend({
    destroy: 'contacts_destroy',
    role: 'primary',
    marker,
    find: { list: 'contacts_list', query: `external_ref=${marker}` },
  });
  const created = await t.call('contacts_create', {
    body: { managing_account: primary, consuming_account: primary, external_ref: marker, ...CONTACT_FIELDS },
  });
  const contact = idOf(created.body);
  if (created.status !== 201 || contact === undefined) {
    t.suite.ledger.removed(contactSeq);
    if (created.status === 400)
      t.inconclusive(`the exchange refused the suite's contact: ${created.text.slice(0, 200)}`);
    t.must(false, `creating a contact answered ${created.status}, not 201: ${created.text.slice(0, 200)}`);
    return t.inconclusive('without the contact nothing else could be judged');
  }
  t.suite.ledger.created(contactSeq, contact);
  const seq = t.suite.ledger.intend({
    destroy: 'role_assignments_destroy',
    role: 'primary',
    marker,
    find: { list: 'role_assignments_list', query: `contact=${encodeURIComponent(contact)}` },
  });
  const assigned = await t.call('role_assignments_create', { body: { contact, role: role.id } });
  const assignment = idOf(assigned.body);
  if (assigned.status !== 201 || assignment === undefined) {
    t.suite.ledger.removed(seq);
    if (assigned.status === 400)
      t.inconclusive(
        `the exchange refused to give the suite's contact the role ${show(role.name)}: ${assigned.text.slice(0, 200)}`,
      );
    t.must(false, `a role assignment answered ${assigned.status}, not 201: ${assigned.text.slice(0, 200)}`);
    return t.inconclusive('without the role assignment nothing else could be judged');
  }
  t.suite.ledger.created(seq, assignment);
  return { contact, assignment, role: String(role.id), contactSeq, seq };
}
