import express from 'express';
import type {
  ExportedLan,
  ExportedRouteServer,
  ListedConfig,
  MemberExportFacts,
} from '../db/repositories/member-export-repository';
import { IN_SERVICE_STATES } from '../domain/states';
import { HttpProblem } from '../domain/errors';

/**
 * The IX-F Member Export (schema 1.0, spec/ixf/ixp-member-list-1.0.schema.json): the exchange's
 * LANs, their route servers and the members that asked to be listed, in the JSON that IXP
 * databases (PeeringDB, the IX-F database) and peering tools read. Public: it needs no token and
 * shows nothing a listed member did not agree to show, nor anything of others.
 */

/** Where the export is served, beside the IX-API base path (not under it). */
export const MEMBER_EXPORT_PATH = '/ixf/member-export';

/** The schema version of the document. */
export const MEMBER_EXPORT_VERSION = '1.0';

/** How the operator numbers the IXPs (`IXF_EXPORT_IXP_IDS`, `IXF_EXPORT_IXF_IDS`). */
export interface MemberExportSettings {
  /** `ixp_id` by exchange LAN id; a LAN not named takes its `ixf_id`. */
  ixpIds: Readonly<Record<string, number>>;
  /** `ixf_id` by exchange LAN id; a LAN not named takes its `ixfdb_ixid`. */
  ixfIds: Readonly<Record<string, number>>;
}

interface AddressDetails {
  address: string;
  routeserver?: boolean;
  max_prefix?: number;
  as_macro?: string;
  services?: Array<{ type: 'ixrouteserver' }>;
}

/** One VLAN a connection of a member is placed in, with its addresses there. */
interface MemberVlan {
  vlan_id: number;
  ipv4?: AddressDetails;
  ipv6?: AddressDetails;
}

interface MemberConnection {
  ixp_id: number;
  state: 'active' | 'inactive';
  if_list: Array<{ if_speed?: number; if_type?: string }>;
  vlan_list: MemberVlan[];
}

interface Member {
  asnum: number;
  member_type: 'peering' | 'ixp';
  name: string;
  connection_list: MemberConnection[];
}

interface PrefixDetails {
  prefix: string;
  mask_length: number;
  looking_glass_urls?: string[];
}

interface Ixp {
  ixp_id: number;
  ixf_id: number;
  shortname: string;
  name: string;
  country?: string;
  peeringdb_id?: number;
  vlan: Array<{ id: number; name: string; ipv4?: PrefixDetails; ipv6?: PrefixDetails }>;
}

/** The document, as the schema has it (the parts this server fills in). */
export interface MemberExport {
  version: string;
  timestamp: string;
  ixp_list: Ixp[];
  member_list: Member[];
}

/** An IXP of the export: an exchange LAN with the numbers it goes by. */
interface NumberedLan extends ExportedLan {
  ixpId: number;
  ixfId: number;
}

const own = (record: Readonly<Record<string, number>>, key: string): number | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** `192.0.2.0/24` as the schema's prefix and mask length; nothing for what is not a prefix. */
function prefixOf(subnet: string | null): { prefix: string; mask_length: number } | undefined {
  const match = subnet ? /^([^/]+)\/(\d{1,3})$/.exec(subnet) : null;
  return match ? { prefix: match[1], mask_length: Number(match[2]) } : undefined;
}

/** The looking glasses of the route servers that speak a family on a LAN. */
function lookingGlasses(servers: readonly ExportedRouteServer[], version: 4 | 6): string[] {
  const speaking = servers.filter((server) => (version === 4 ? server.ipV4 : server.ipV6));
  return [...new Set(speaking.flatMap((server) => (server.lookingGlassUrl ? [server.lookingGlassUrl] : [])))];
}

/**
 * One IXP per exchange LAN: each is an exchange of its own in IX-API (its metro area network, its
 * subnets, its PeeringDB and IX-F ids), with one VLAN, the LAN itself, numbered like its IXP.
 */
function ixpOf(lan: NumberedLan, servers: readonly ExportedRouteServer[]): Ixp {
  const family = (subnet: string | null, version: 4 | 6): PrefixDetails | undefined => {
    const prefix = prefixOf(subnet);
    if (!prefix) return undefined;
    const glasses = lookingGlasses(servers, version);
    return glasses.length ? { ...prefix, looking_glass_urls: glasses } : prefix;
  };
  const ipv4 = family(lan.subnetV4, 4);
  const ipv6 = family(lan.subnetV6, 6);
  const country = /^[A-Z]{2}/.exec(lan.unLocode ?? '')?.[0];
  return {
    ixp_id: lan.ixpId,
    ixf_id: lan.ixfId,
    shortname: lan.name,
    name: lan.metroArea ? `${lan.exchangeName} ${lan.metroArea}` : lan.name,
    ...(country ? { country } : {}),
    ...(lan.peeringdbIxid !== null ? { peeringdb_id: lan.peeringdbIxid } : {}),
    vlan: [{ id: lan.ixpId, name: lan.name, ...(ipv4 ? { ipv4 } : {}), ...(ipv6 ? { ipv6 } : {}) }],
  };
}

/** Whether the config carries traffic now: it and its connection are in service. */
const isActive = (config: ListedConfig) =>
  IN_SERVICE_STATES.includes(config.state as never) &&
  IN_SERVICE_STATES.includes(config.connectionState as never);

/**
 * The VLAN entries of a config: its addresses of each family side by side, each with whether it
 * has a session with a route server and, where the session gives them, its AS macro and maximum
 * number of prefixes.
 */
function vlansOf(config: ListedConfig, vlanId: number): MemberVlan[] {
  const details = (version: 4 | 6, address: string): AddressDetails => {
    const session = config.sessions.find((candidate) => candidate.version === version);
    if (!session) return { address, routeserver: false };
    return {
      address,
      routeserver: true,
      ...(session.maxPrefix !== null ? { max_prefix: session.maxPrefix } : {}),
      ...(session.asSet ? { as_macro: session.asSet } : {}),
    };
  };
  const v4 = config.addresses.filter((a) => a.version === 4).map((a) => details(4, a.address));
  const v6 = config.addresses.filter((a) => a.version === 6).map((a) => details(6, a.address));
  const entries = Math.max(1, v4.length, v6.length);
  return Array.from({ length: entries }, (_, i) => ({
    vlan_id: vlanId,
    ...(v4[i] ? { ipv4: v4[i] } : {}),
    ...(v6[i] ? { ipv6: v6[i] } : {}),
  }));
}

/** Members by account and ASN, each with its connections by key, listed in a stable order. */
class MemberList {
  private readonly members = new Map<
    string,
    { member: Member; connections: Map<string, MemberConnection> }
  >();

  /** The member of an account under one ASN, made on first use. */
  entry(account: string, asn: number, make: () => Omit<Member, 'connection_list'>) {
    const key = `${account} ${asn}`;
    let entry = this.members.get(key);
    if (!entry) {
      entry = { member: { ...make(), connection_list: [] }, connections: new Map() };
      this.members.set(key, entry);
    }
    const { member, connections } = entry;
    return {
      /** The member's entry on an IXP over one connection (`key`), made on first use. */
      connection(connectionKey: string, makeConnection: () => MemberConnection): MemberConnection {
        let connection = connections.get(connectionKey);
        if (!connection) {
          connection = makeConnection();
          connections.set(connectionKey, connection);
          member.connection_list.push(connection);
        }
        return connection;
      },
    };
  }

  list(): Member[] {
    return [...this.members.values()]
      .map(({ member }) => ({
        ...member,
        connection_list: [...member.connection_list].sort((a, b) => a.ixp_id - b.ixp_id),
      }))
      .sort((a, b) => a.asnum - b.asnum || a.name.localeCompare(b.name));
  }
}

/**
 * The member export from what the database holds: one IXP per exchange LAN that has an IX-F id
 * (configured, or its `ixfdb_ixid`: the schema requires one), its route servers as a member of
 * type `ixp` whose addresses offer the `ixrouteserver` service, and each listed member's
 * connections to it by ASN, account name, port speeds, addresses and route-server sessions.
 */
export function memberExportOf(
  facts: MemberExportFacts,
  settings: MemberExportSettings,
  now: Date,
): MemberExport {
  const lans: NumberedLan[] = facts.lans.flatMap((lan) => {
    const ixfId = own(settings.ixfIds, lan.id) ?? lan.ixfdbIxid;
    if (ixfId === null) return [];
    return [{ ...lan, ixfId, ixpId: own(settings.ixpIds, lan.id) ?? ixfId }];
  });
  const byId = new Map(lans.map((lan) => [lan.id, lan]));
  const serversOf = (lan: string) => facts.routeServers.filter((server) => server.lan === lan);
  const members = new MemberList();

  for (const lan of lans) {
    for (const server of serversOf(lan.id)) {
      const member = members.entry(lan.exchangeAccount, server.asn, () => ({
        asnum: server.asn,
        member_type: 'ixp',
        name: lan.exchangeName,
      }));
      const connection = member.connection(`route servers ${lan.id}`, () => ({
        ixp_id: lan.ixpId,
        state: 'active',
        if_list: [],
        vlan_list: [],
      }));
      const offered = (address: string | null) =>
        address ? { address, services: [{ type: 'ixrouteserver' as const }] } : undefined;
      const [ipv4, ipv6] = [offered(server.ipV4), offered(server.ipV6)];
      connection.vlan_list.push({ vlan_id: lan.ixpId, ...(ipv4 ? { ipv4 } : {}), ...(ipv6 ? { ipv6 } : {}) });
    }
  }

  for (const config of facts.configs) {
    const lan = byId.get(config.lan);
    if (!lan) continue;
    for (const asn of config.asns) {
      const member = members.entry(config.account, asn, () => ({
        asnum: asn,
        member_type: config.accountIsExchange ? 'ixp' : 'peering',
        name: config.accountName,
      }));
      const connection = member.connection(`${lan.id} ${config.connection}`, () => ({
        ixp_id: lan.ixpId,
        state: 'inactive',
        if_list: config.ports.map((port) => ({
          ...(port.speed !== null ? { if_speed: port.speed } : {}),
          if_type: port.mediaType,
        })),
        vlan_list: [],
      }));
      if (isActive(config)) connection.state = 'active';
      connection.vlan_list.push(...vlansOf(config, lan.ixpId));
    }
  }

  return {
    version: MEMBER_EXPORT_VERSION,
    timestamp: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ixp_list: lans.map((lan) => ixpOf(lan, serversOf(lan.id))).sort((a, b) => a.ixp_id - b.ixp_id),
    member_list: members.list(),
  };
}

/**
 * Serves the export at MEMBER_EXPORT_PATH: made from live data at each request, with a short
 * `Cache-Control` so that caches in front of the API and clients that poll it spare the database.
 * Any other method is a 405 naming GET; the anonymous rate limit applies as to every request
 * without a token.
 */
export function memberExportRouter(deps: {
  read: () => Promise<MemberExport>;
  guard: (req: express.Request) => Promise<void>;
  maxAgeSeconds: number;
}): express.Router {
  const router = express.Router();
  router.get(MEMBER_EXPORT_PATH, async (req, res) => {
    await deps.guard(req);
    const document = await deps.read();
    res.set('Cache-Control', `public, max-age=${deps.maxAgeSeconds}`);
    res.type('application/json').send(JSON.stringify(document));
  });
  router.all(MEMBER_EXPORT_PATH, (req, res) => {
    res.set('Allow', 'GET, HEAD');
    throw new HttpProblem(
      405,
      'method-not-allowed',
      'Method Not Allowed',
      `${req.method} is not allowed here; use GET.`,
    );
  });
  return router;
}
