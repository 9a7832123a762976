import { isDeepStrictEqual } from 'node:util';
import { formatAddress, parseAddress } from '../domain/ip-addresses';
import type {
  BgpSession,
  ConfigChange,
  DeviceIntent,
  InterfaceState,
  LagConfig,
  ServiceAttachment,
} from './contract';
import { DriverError } from './contract';
import { BGP_PASSWORD } from '../domain/network-feature-configs';

/** The parts of a device an intent may touch, as they are now. */
export interface DeviceSnapshot {
  interfaces: ReadonlyMap<string, InterfaceState>;
  lags: ReadonlyMap<string, LagConfig>;
  services: ReadonlyMap<string, ServiceAttachment>;
  bgpSessions: ReadonlyMap<string, BgpSession>;
}

const LAG_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,79}$/;
/** Service names are the ids of configs, which may also hold `:` and `_`. */
const SERVICE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,79}$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
const MAX_DESCRIPTION = 240;
const MAX_AS_SET = 100;
const MAX_ASN = 4294967294;
/** AS_TRANS (RFC 6793) stands in for 4-byte ASNs towards old speakers; no router peers as it. */
const AS_TRANS = 23456;

const invalid = (message: string): never => {
  throw new DriverError('invalid-config', message);
};

/** A LAG in a form that compares equal whatever order its members were given in. */
const normalised = (lag: LagConfig): LagConfig => ({ ...lag, members: [...lag.members].sort() });

function checkLag(lag: LagConfig, snapshot: DeviceSnapshot): void {
  if (!LAG_NAME.test(lag.name)) invalid(`LAG name ${JSON.stringify(lag.name)} is not a valid name`);
  if (lag.description.length > MAX_DESCRIPTION)
    invalid(`LAG ${lag.name}: description longer than ${MAX_DESCRIPTION} characters`);
  if (lag.mode !== 'lacp' && lag.mode !== 'static')
    invalid(`LAG ${lag.name}: unknown mode ${String(lag.mode)}`);
  if (lag.mode === 'lacp' && lag.lacpTimeout !== 'fast' && lag.lacpTimeout !== 'slow')
    invalid(`LAG ${lag.name}: an LACP bundle needs lacpTimeout fast or slow`);
  if (lag.mode === 'static' && lag.lacpTimeout !== null)
    invalid(`LAG ${lag.name}: a static bundle takes no lacpTimeout`);
  if (!lag.members.length) invalid(`LAG ${lag.name} has no members`);
  if (new Set(lag.members).size !== lag.members.length) invalid(`LAG ${lag.name} names a member twice`);
  const speeds = new Set<number>();
  for (const member of lag.members) {
    const port = snapshot.interfaces.get(member);
    if (!port) return invalid(`LAG ${lag.name}: the device has no interface ${member}`);
    speeds.add(port.speed);
  }
  if (speeds.size > 1) invalid(`LAG ${lag.name}: members of different speeds (${[...speeds].join(', ')})`);
}

const isTag = (value: unknown): value is number =>
  Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 4094;

/** A service's tags in words, for messages. */
function tagsOf(service: ServiceAttachment): string {
  if (service.vlanType === 'dot1q') return `dot1q tag ${service.outerVlan}`;
  if (service.vlanType === 'qinq') return `qinq tags ${service.outerVlan}/${service.innerVlan}`;
  return 'untagged';
}

/** A service with its MACs as a set (sorted) and nothing but the contract's properties. */
const normalisedService = (service: ServiceAttachment): ServiceAttachment => ({
  name: service.name,
  description: service.description,
  parent: service.parent,
  vlanType: service.vlanType,
  outerVlan: service.outerVlan,
  innerVlan: service.innerVlan,
  macs: [...service.macs].sort(),
  macFilter: service.macFilter,
  rateLimit: service.rateLimit,
  segment: service.segment,
  isolated: service.isolated,
});

/** Checks what a service says of itself; where it sits is checked with the device as a whole. */
function checkService(service: ServiceAttachment): void {
  const { name, parent, vlanType, outerVlan, innerVlan } = service;
  if (typeof name !== 'string' || !SERVICE_NAME.test(name))
    invalid(`service name ${JSON.stringify(name)} is not a valid name`);
  const where = `service ${name} on ${parent}`;
  if (service.description.length > MAX_DESCRIPTION)
    invalid(`${where}: description longer than ${MAX_DESCRIPTION} characters`);
  if (vlanType === 'port') {
    if (outerVlan !== null || innerVlan !== null)
      invalid(`${where}: a port service takes no tags (outer ${outerVlan}, inner ${innerVlan})`);
  } else if (vlanType === 'dot1q') {
    if (!isTag(outerVlan)) invalid(`${where}: dot1q tag ${outerVlan} is not a VLAN from 1 to 4094`);
    if (innerVlan !== null) invalid(`${where}: dot1q tag ${outerVlan} takes no inner tag (${innerVlan})`);
  } else if (vlanType === 'qinq') {
    if (!isTag(outerVlan) || !isTag(innerVlan))
      invalid(`${where}: qinq tags ${outerVlan}/${innerVlan} are not both VLANs from 1 to 4094`);
  } else invalid(`${where}: unknown VLAN type ${String(vlanType)}`);
  for (const mac of service.macs) {
    if (typeof mac !== 'string' || !MAC.test(mac))
      invalid(
        `${where} (${tagsOf(service)}): MAC ${JSON.stringify(mac)} is not lower-case and colon-separated`,
      );
    // The lowest bit of the first octet marks group (multicast and broadcast) addresses.
    if (Number.parseInt(mac.slice(0, 2), 16) % 2 === 1)
      invalid(`${where} (${tagsOf(service)}): MAC ${mac} is not a unicast address`);
  }
  if (new Set(service.macs).size !== service.macs.length)
    invalid(`${where} (${tagsOf(service)}): names a MAC twice`);
  if (typeof service.macFilter !== 'boolean')
    invalid(`${where} (${tagsOf(service)}): macFilter is not true or false`);
  const { rateLimit } = service;
  if (rateLimit !== null && !(Number.isSafeInteger(rateLimit) && rateLimit > 0))
    invalid(`${where} (${tagsOf(service)}): rate limit ${rateLimit} is not a positive number of Mbit/s`);
  // Segments are named by network service ids, which follow the same rules as service names.
  if (typeof service.segment !== 'string' || !SERVICE_NAME.test(service.segment))
    invalid(`${where} (${tagsOf(service)}): segment ${JSON.stringify(service.segment)} is not a valid name`);
  if (typeof service.isolated !== 'boolean')
    invalid(`${where} (${tagsOf(service)}): isolated is not true or false`);
}

/**
 * Checks the tags of the services that will sit on one parent: a `port` service takes the whole
 * parent; `dot1q` services never share a tag; a `qinq` outer tag is never a `dot1q` service's tag;
 * `qinq` services never share both tags.
 */
function checkTags(parent: string, services: readonly ServiceAttachment[]): void {
  const port = services.find((service) => service.vlanType === 'port');
  const other = services.find((service) => service !== port);
  if (port && other)
    invalid(
      `service ${port.name} on ${parent}: a port service takes the whole of ${parent}, yet service ${other.name} (${tagsOf(other)}) is on it too`,
    );
  const dot1q = new Map<number, string>();
  for (const service of services) {
    if (service.vlanType !== 'dot1q') continue;
    const tag = service.outerVlan!;
    const holder = dot1q.get(tag);
    if (holder) invalid(`services ${holder} and ${service.name} on ${parent} both take dot1q tag ${tag}`);
    dot1q.set(tag, service.name);
  }
  const qinq = new Map<string, string>();
  for (const service of services) {
    if (service.vlanType !== 'qinq') continue;
    const holder = dot1q.get(service.outerVlan!);
    if (holder)
      invalid(
        `service ${service.name} on ${parent}: qinq outer tag ${service.outerVlan} is the tag of dot1q service ${holder}`,
      );
    const pair = `${service.outerVlan}/${service.innerVlan}`;
    const twin = qinq.get(pair);
    if (twin) invalid(`services ${twin} and ${service.name} on ${parent} both take qinq tags ${pair}`);
    qinq.set(pair, service.name);
  }
}

/** The device after an intent, as far as services care: which LAGs exist, who is whose member. */
interface Outcome {
  lags: ReadonlyMap<string, LagConfig>;
  memberOf: ReadonlyMap<string, string>;
}

/**
 * Checks where the services will sit and plans their changes, in two groups: `early` ones go
 * before any LAG or interface changes (deletes, and updates whose new parent can take them from
 * the start), `late` ones after (creates, and updates onto LAGs or interfaces that become free).
 * A service moving from a parent that goes to one that only comes is deleted early and created
 * late, so that no service ever sits on a parent that is missing or a LAG member.
 */
function planServices(
  snapshot: DeviceSnapshot,
  outcome: Outcome,
  intent: DeviceIntent,
): { early: ConfigChange[]; late: ConfigChange[] } {
  const intended = intent.services ?? [];
  const removed = new Set(intent.removeServices ?? []);
  const names = new Set<string>();
  for (const service of intended) {
    checkService(service);
    if (names.has(service.name)) invalid(`the intent names service ${service.name} twice`);
    if (removed.has(service.name)) invalid(`service ${service.name} is both intended and removed`);
    names.add(service.name);
  }

  const after = new Map(snapshot.services);
  for (const name of removed) after.delete(name);
  for (const service of intended) after.set(service.name, normalisedService(service));

  const byParent = new Map<string, ServiceAttachment[]>();
  for (const service of [...after.values()].sort((x, y) => (x.name < y.name ? -1 : 1))) {
    const { name, parent } = service;
    if (!outcome.lags.has(parent)) {
      // A service the intent leaves in place sat well before: the intent's LAG changes moved its ground.
      const leftInPlace = !names.has(name);
      if (snapshot.lags.has(parent))
        invalid(
          leftInPlace
            ? `LAG ${parent} is removed while service ${name} sits on it; remove or move the service in the same intent`
            : `service ${name} on ${parent}: the intent removes LAG ${parent}`,
        );
      if (!snapshot.interfaces.has(parent))
        invalid(`service ${name} on ${parent}: the device has no interface or LAG ${parent}`);
      const lag = outcome.memberOf.get(parent);
      if (lag)
        invalid(
          leftInPlace
            ? `interface ${parent} would join LAG ${lag} while service ${name} sits on it; remove or move the service in the same intent`
            : `service ${name} on ${parent}: interface ${parent} belongs to LAG ${lag}; put the service on the LAG`,
        );
    }
    byParent.set(parent, [...(byParent.get(parent) ?? []), service]);
  }
  for (const [parent, services] of byParent) checkTags(parent, services);

  // Where a service can sit: on a LAG that exists, or on an interface in no LAG.
  const freeAtStart = (parent: string) =>
    snapshot.lags.has(parent) || snapshot.interfaces.get(parent)?.lag === null;
  const freeAtEnd = (parent: string) =>
    outcome.lags.has(parent) || (snapshot.interfaces.has(parent) && !outcome.memberOf.has(parent));

  const deletes: ConfigChange[] = [];
  const early: ConfigChange[] = [];
  const late: ConfigChange[] = [];
  const creates: ConfigChange[] = [];
  for (const name of [...new Set([...removed, ...names])].sort()) {
    const was = snapshot.services.get(name) ?? null;
    const will = after.get(name) ?? null;
    const change = (
      action: ConfigChange['action'],
      before: ServiceAttachment | null,
      next: ServiceAttachment | null,
    ): ConfigChange => ({ kind: 'service', name, action, before, after: next });
    if (was === null) {
      if (will !== null) creates.push(change('create', null, will));
    } else if (will === null) deletes.push(change('delete', was, null));
    else if (isDeepStrictEqual(normalisedService(was), will)) continue;
    else if (freeAtStart(will.parent)) early.push(change('update', was, will));
    else if (freeAtEnd(was.parent)) late.push(change('update', was, will));
    else {
      deletes.push(change('delete', was, null));
      creates.push(change('create', null, will));
    }
  }
  return { early: [...deletes, ...early], late: [...late, ...creates] };
}

/** A session with its flags as a set (sorted) and nothing but the contract's properties. */
const normalisedSession = (session: BgpSession): BgpSession => ({
  name: session.name,
  peerAsn: session.peerAsn,
  peerAddress: session.peerAddress,
  passive: session.passive,
  password: session.password,
  asSet: session.asSet,
  maxPrefix: session.maxPrefix,
  insertIxpAsn: session.insertIxpAsn,
  flags: [...session.flags].sort(),
});

/** Whether `text` is an IPv4 or IPv6 address written the one way the device reads back. */
function isCanonicalAddress(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const parsed = parseAddress(text);
  return parsed !== null && formatAddress(parsed.version, parsed.value) === text;
}

/** Checks what a session says of itself; whether its peer address is free is checked over all of them. */
function checkSession(session: BgpSession): void {
  const { name, peerAsn, peerAddress, password, asSet, maxPrefix, flags } = session;
  if (typeof name !== 'string' || !SERVICE_NAME.test(name))
    invalid(`BGP session name ${JSON.stringify(name)} is not a valid name`);
  const where = `BGP session ${name}`;
  if (!Number.isInteger(peerAsn) || peerAsn < 1 || peerAsn > MAX_ASN)
    invalid(`${where}: peer ASN ${peerAsn} is not an ASN from 1 to ${MAX_ASN}`);
  if (peerAsn === AS_TRANS) invalid(`${where}: peer ASN ${AS_TRANS} is AS_TRANS, which no router peers as`);
  if (!isCanonicalAddress(peerAddress))
    invalid(
      `${where}: peer address ${JSON.stringify(peerAddress)} is not an IPv4 or IPv6 address in canonical form (lower case, compressed)`,
    );
  if (typeof session.passive !== 'boolean') invalid(`${where}: passive is not true or false`);
  if (typeof session.insertIxpAsn !== 'boolean') invalid(`${where}: insertIxpAsn is not true or false`);
  if (password !== null && (typeof password !== 'string' || !BGP_PASSWORD.test(password)))
    invalid(`${where}: the password is not 1 to 80 printable ASCII characters without spaces or quotes`);
  if (asSet !== null && (typeof asSet !== 'string' || asSet.length > MAX_AS_SET))
    invalid(`${where}: AS-SET longer than ${MAX_AS_SET} characters`);
  if (maxPrefix !== null && !(Number.isSafeInteger(maxPrefix) && maxPrefix >= 0))
    invalid(`${where}: max prefix ${maxPrefix} is not a whole number from 0`);
  if (!Array.isArray(flags) || flags.some((flag) => typeof flag !== 'string' || flag === ''))
    invalid(`${where}: flags are not a list of names`);
  if (new Set(flags).size !== flags.length) invalid(`${where}: names a flag twice`);
}

/**
 * Checks the BGP sessions of an intent, and that no two sessions will share a peer address, and
 * plans their changes: deletes, which go before any other change, and creates and updates, which
 * go after every other one. Sessions depend on no interface, so neither group waits for one.
 */
function planBgpSessions(
  snapshot: DeviceSnapshot,
  intent: DeviceIntent,
): { deletes: ConfigChange[]; upserts: ConfigChange[] } {
  const intended = intent.bgpSessions ?? [];
  const removed = new Set(intent.removeBgpSessions ?? []);
  const names = new Set<string>();
  for (const session of intended) {
    checkSession(session);
    if (names.has(session.name)) invalid(`the intent names BGP session ${session.name} twice`);
    if (removed.has(session.name)) invalid(`BGP session ${session.name} is both intended and removed`);
    names.add(session.name);
  }

  const after = new Map(snapshot.bgpSessions);
  for (const name of removed) after.delete(name);
  for (const session of intended) after.set(session.name, normalisedSession(session));

  const holders = new Map<string, string>();
  for (const session of [...after.values()].sort((x, y) => (x.name < y.name ? -1 : 1))) {
    const holder = holders.get(session.peerAddress);
    if (holder)
      invalid(
        `BGP sessions ${holder} and ${session.name} both peer with ${session.peerAddress}; a route server holds one session per member address`,
      );
    holders.set(session.peerAddress, session.name);
  }

  const deletes: ConfigChange[] = [];
  const upserts: ConfigChange[] = [];
  for (const name of [...new Set([...removed, ...names])].sort()) {
    const was = snapshot.bgpSessions.get(name) ?? null;
    const will = after.get(name) ?? null;
    if (was === null) {
      if (will !== null)
        upserts.push({ kind: 'bgp_session', name, action: 'create', before: null, after: will });
    } else if (will === null)
      deletes.push({ kind: 'bgp_session', name, action: 'delete', before: was, after: null });
    else if (!isDeepStrictEqual(normalisedSession(was), will))
      upserts.push({ kind: 'bgp_session', name, action: 'update', before: was, after: will });
  }
  return { deletes, upserts };
}

/**
 * Checks an intent against a device and works out what committing it changes: BGP sessions
 * removed, services removed or moved away, LAGs removed, every interface whose settings or LAG
 * membership move, LAGs created or changed, services moved onto them or created, and last BGP
 * sessions created or changed. Applied in this order, no service ever sits on a missing parent.
 * Throws an `invalid-config` DriverError for an intent the device cannot take.
 */
export function planChanges(snapshot: DeviceSnapshot, intent: DeviceIntent): ConfigChange[] {
  const intendedLags = intent.lags ?? [];
  const removed = new Set(intent.removeLags ?? []);
  for (const lag of intendedLags) {
    checkLag(lag, snapshot);
    if (removed.has(lag.name)) invalid(`LAG ${lag.name} is both intended and removed`);
  }
  if (new Set(intendedLags.map((lag) => lag.name)).size !== intendedLags.length)
    invalid('the intent names a LAG twice');

  // The LAGs as they will be, and which LAG each interface will belong to.
  const lagsAfter = new Map(snapshot.lags);
  for (const name of removed) lagsAfter.delete(name);
  for (const lag of intendedLags) lagsAfter.set(lag.name, normalised(lag));
  const memberOf = new Map<string, string>();
  for (const lag of lagsAfter.values()) {
    for (const member of lag.members) {
      const other = memberOf.get(member);
      if (other) invalid(`interface ${member} would belong to both ${other} and ${lag.name}`);
      memberOf.set(member, lag.name);
    }
  }

  const settings = new Map<string, InterfaceState>();
  for (const wanted of intent.interfaces ?? []) {
    const current = snapshot.interfaces.get(wanted.name);
    if (!current) return invalid(`the device has no interface ${wanted.name}`);
    if (settings.has(wanted.name)) invalid(`the intent names interface ${wanted.name} twice`);
    if (wanted.description.length > MAX_DESCRIPTION)
      invalid(`interface ${wanted.name}: description longer than ${MAX_DESCRIPTION} characters`);
    settings.set(wanted.name, { ...current, description: wanted.description, enabled: wanted.enabled });
  }

  const services = planServices(snapshot, { lags: lagsAfter, memberOf }, intent);
  const sessions = planBgpSessions(snapshot, intent);

  const changes: ConfigChange[] = [...sessions.deletes, ...services.early];
  for (const name of [...removed].sort()) {
    const before = snapshot.lags.get(name);
    if (before) changes.push({ kind: 'lag', name, action: 'delete', before, after: null });
  }
  // Interfaces whose settings are named, or whose LAG membership may move.
  const touched = new Set(settings.keys());
  for (const name of [...removed, ...intendedLags.map((lag) => lag.name)]) {
    for (const member of snapshot.lags.get(name)?.members ?? []) touched.add(member);
    for (const member of lagsAfter.get(name)?.members ?? []) touched.add(member);
  }
  for (const name of [...touched].sort()) {
    const before = snapshot.interfaces.get(name)!;
    const after: InterfaceState = { ...(settings.get(name) ?? before), lag: memberOf.get(name) ?? null };
    if (!isDeepStrictEqual(before, after))
      changes.push({ kind: 'interface', name, action: 'update', before, after });
  }
  for (const lag of intendedLags) {
    const before = snapshot.lags.get(lag.name) ?? null;
    const after = normalised(lag);
    if (before === null) changes.push({ kind: 'lag', name: lag.name, action: 'create', before, after });
    else if (!isDeepStrictEqual(normalised(before), after))
      changes.push({ kind: 'lag', name: lag.name, action: 'update', before, after });
  }
  changes.push(...services.late, ...sessions.upserts);
  return changes;
}

/** The changes that undo `changes`, in the order to apply them. */
export function inverseOf(changes: readonly ConfigChange[]): ConfigChange[] {
  return [...changes].reverse().map((change) => ({
    ...change,
    action: change.action === 'create' ? 'delete' : change.action === 'delete' ? 'create' : 'update',
    before: change.after,
    after: change.before,
  }));
}

/** The snapshot after `changes`: what a device holds once it committed them. */
export function applyChanges(snapshot: DeviceSnapshot, changes: readonly ConfigChange[]): DeviceSnapshot {
  const interfaces = new Map(snapshot.interfaces);
  const lags = new Map(snapshot.lags);
  const services = new Map(snapshot.services);
  const bgpSessions = new Map(snapshot.bgpSessions);
  for (const change of changes) {
    if (change.kind === 'interface') interfaces.set(change.name, change.after as InterfaceState);
    else if (change.kind === 'lag') {
      if (change.after === null) lags.delete(change.name);
      else lags.set(change.name, change.after as LagConfig);
    } else if (change.kind === 'bgp_session') {
      if (change.after === null) bgpSessions.delete(change.name);
      else bgpSessions.set(change.name, change.after as BgpSession);
    } else if (change.after === null) services.delete(change.name);
    else services.set(change.name, change.after as ServiceAttachment);
  }
  return { interfaces, lags, services, bgpSessions };
}
