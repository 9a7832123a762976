import type { EventResource, EventType } from '../domain/events';
import { EVENT_RESOURCE_PROPERTIES, EVENT_TYPES } from '../domain/events';
import type { CollectionEntry, Visibility } from './collections';

/** A payload property that holds a resource of a collection (by the collection's name), or a list. */
interface Held {
  family: string;
  list?: true;
}

/**
 * What the payload of one kind of event holds: resources, each shown to a reader exactly as a read
 * of it shows it to that reader, and plain facts (ids, states, days, sizes) that are never
 * sensitive and are shown to whoever sees the event. Anything else a stored payload holds (written
 * by an older version) is left out.
 */
export interface PayloadLayout {
  resources?: Readonly<Record<string, Held>>;
  facts?: readonly string[];
}

/** A payload holding the resource its event is about, where events of its kind hold it. */
const holding = (resource: EventResource, family: string): PayloadLayout => ({
  resources: { [EVENT_RESOURCE_PROPERTIES[resource]]: { family } },
});

/** A move along the lifecycle; a decommission names its day (what it is charged until, never). */
const MOVED: PayloadLayout = { facts: ['id', 'from', 'to', 'event', 'decommission_at'] };
const CANCELLATION_ASKED: PayloadLayout = { facts: ['id', 'state'] };
const LOA_UPLOADED: PayloadLayout = { facts: ['id', 'bytes'] };
/** A change request of a circuit: what the B side asks (an offering, a capacity), as its sides read it. */
const CHANGE_REQUEST: PayloadLayout = { facts: ['id', 'change_request'] };

const ACCOUNT = holding('account', 'accounts');
const CONTACT = holding('contact', 'contacts');
const ASSIGNMENT = holding('role_assignment', 'role-assignments');
const CONNECTION = holding('connection', 'connections');
const RESERVATION = holding('port_reservation', 'port-reservations');
const IP = holding('ip', 'ips');
const MAC = holding('mac', 'macs');
const RULE = holding('member_joining_rule', 'member-joining-rules');
const SERVICE = holding('network_service', 'network-services');
const CONFIG = holding('network_service_config', 'network-service-configs');
const SESSION = holding('network_feature_config', 'network-feature-configs');

/** Every kind of event with what its payload holds; the compiler holds it to the list of kinds. */
export const EVENT_PAYLOADS: Readonly<Record<EventType, PayloadLayout>> = {
  'account.imported': ACCOUNT,
  'account.created': ACCOUNT,
  'account.updated': ACCOUNT,
  'account.deleted': {
    resources: {
      ...ACCOUNT.resources,
      contacts: { family: 'contacts', list: true },
      role_assignments: { family: 'role-assignments', list: true },
    },
  },
  'account.state_changed': MOVED,
  'contact.created': CONTACT,
  'contact.updated': CONTACT,
  'contact.deleted': {
    resources: {
      ...CONTACT.resources,
      role_assignments: { family: 'role-assignments', list: true },
    },
  },
  'role_assignment.created': ASSIGNMENT,
  'role_assignment.deleted': ASSIGNMENT,
  'connection.created': CONNECTION,
  'connection.changed': CONNECTION,
  'connection.state_changed': MOVED,
  'connection.cancellation_requested': CANCELLATION_ASKED,
  'connection.loa_uploaded': LOA_UPLOADED,
  'port_reservation.created': RESERVATION,
  'port_reservation.changed': RESERVATION,
  'port_reservation.state_changed': MOVED,
  'port_reservation.loa_uploaded': LOA_UPLOADED,
  'ip.created': IP,
  'ip.changed': IP,
  'mac.created': MAC,
  'mac.deleted': MAC,
  'member_joining_rule.created': RULE,
  'member_joining_rule.changed': RULE,
  'member_joining_rule.deleted': RULE,
  'network_service.created': SERVICE,
  'network_service.changed': SERVICE,
  'network_service.state_changed': MOVED,
  'network_service.cancellation_requested': CANCELLATION_ASKED,
  'network_service.change_requested': CHANGE_REQUEST,
  'network_service.change_request_accepted': CHANGE_REQUEST,
  'network_service.change_request_withdrawn': CHANGE_REQUEST,
  'network_service.change_request_rejected': CHANGE_REQUEST,
  'network_service_config.created': CONFIG,
  'network_service_config.changed': CONFIG,
  'network_service_config.state_changed': MOVED,
  'network_service_config.cancellation_requested': CANCELLATION_ASKED,
  'network_feature_config.created': SESSION,
  'network_feature_config.changed': SESSION,
  'network_feature_config.state_changed': MOVED,
  'network_feature_config.cancellation_requested': CANCELLATION_ASKED,
};

/**
 * Shows events to their readers. The payload of each is shaped by its kind: each resource it holds
 * goes through the same presentation as a read of its collection (a circuit's B side sees the
 * circuit without the owner's business, anybody outside an account's scope its public view), each
 * fact as it is, and nothing else. `account` names the reader's own account among those the event
 * was recorded for. Which events a reader sees at all is decided in SQL, before paging. `declared`
 * adds the kinds of event declared families declare, each with its layout.
 */
export function createEventPresenter(
  registry: readonly CollectionEntry[],
  declared: Readonly<Record<string, PayloadLayout>> = {},
) {
  const entries = new Map(registry.map((entry) => [entry.collection.name, entry]));
  const twice = Object.keys(declared).filter((type) => type in EVENT_PAYLOADS);
  if (twice.length) throw new Error(`event kind ${twice.join(', ')} is declared twice`);
  const layouts: Readonly<Record<string, PayloadLayout>> = { ...EVENT_PAYLOADS, ...declared };
  for (const [type, layout] of Object.entries(layouts))
    for (const held of Object.values(layout.resources ?? {}))
      if (!entries.get(held.family)?.read)
        throw new Error(`${type} events hold ${held.family}, which no read operation shows`);

  const isResource = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const asRead = (family: string, resource: Record<string, unknown>, visibility: Visibility) => {
    const present = entries.get(family)!.present;
    return present ? present(resource, visibility) : resource;
  };

  return {
    /** The kinds of event there are; rows of any other kind are never listed. */
    types: [...EVENT_TYPES, ...Object.keys(declared)] as readonly string[],

    present(event: Record<string, unknown>, visibility: Visibility): Record<string, unknown> {
      const { also_account: also, payload: stored, ...rest } = event;
      const layout =
        (typeof event.type === 'string' && Object.hasOwn(layouts, event.type) && layouts[event.type]) || {};
      const given = isResource(stored) ? stored : {};
      const payload: Record<string, unknown> = {};
      for (const fact of layout.facts ?? []) if (fact in given) payload[fact] = given[fact];
      // What is not shaped like what the layout says it holds is left out, never shown unshaped.
      for (const [property, held] of Object.entries(layout.resources ?? {})) {
        const value = given[property];
        if (held.list && Array.isArray(value) && value.every(isResource))
          payload[property] = value.map((item) => asRead(held.family, item, visibility));
        else if (!held.list && isResource(value)) payload[property] = asRead(held.family, value, visibility);
      }
      const account = visibility.accounts.includes(event.account as string) ? event.account : also;
      return { ...rest, payload, account };
    },
  };
}
