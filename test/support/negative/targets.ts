import { QueryTypes } from 'sequelize';
import { accountsActingFor } from '../../../db/visibility';
import type { AccountIdentity, World } from '../matrix';
import { ACCOUNT_IDENTITIES, MATRIX_FIXTURES, createWorld } from '../matrix';
import { stack } from '../stack';

/** The table behind each family of paths (`/network-services/{id}` → network_services). */
export const FAMILY_TABLES: Readonly<Record<string, string>> = {
  accounts: 'accounts',
  contacts: 'contacts',
  'role-assignments': 'role_assignments',
  connections: 'connections',
  'port-reservations': 'port_reservations',
  macs: 'macs',
  ips: 'ip_addresses',
  'network-services': 'network_services',
  'network-service-configs': 'network_service_configs',
  'network-feature-configs': 'network_feature_configs',
  'member-joining-rules': 'member_joining_rules',
  ports: 'ports',
  facilities: 'facilities',
  devices: 'devices',
  pops: 'pops',
  'metro-areas': 'metro_areas',
  'metro-area-networks': 'metro_area_networks',
  'availability-zones': 'availability_zones',
  'product-offerings': 'product_offerings',
  'network-features': 'network_features',
  roles: 'roles',
};

/** A real resource a request can name, and who could change it. */
export interface Target {
  family: string;
  id: string;
  /** The account identities acting for its managing side (or the account itself). */
  changers: ReadonlySet<AccountIdentity>;
  /** The stored type of a polymorphic resource (`type` of services, configs, rules). */
  type?: string;
}

export interface CampaignWorld {
  world: World;
  targets: Target[];
  /** Every id of each family, as the database holds it now. */
  existing: Map<string, Set<string>>;
  /** The accounts each account identity acts for. */
  actsFor: Record<AccountIdentity, ReadonlySet<string>>;
  /** The managing account of each contact and connection, which a create may name. */
  managerOf: Map<string, string | null>;
  /** Bodies the managing side could send (so never sent as they are by one who may change). */
  validBodies: Map<string, Array<Record<string, unknown>>>;
}

/**
 * Where the managing side of a resource is not its own `managing_account`: an account is its own,
 * a role assignment is its contact's, a port reservation its connection's; a circuit's B side asks
 * for changes too (`member`).
 */
const RELATED_SQL: Record<string, string> = {
  accounts: 'SELECT id, id AS manager, NULL AS member, NULL AS type FROM accounts',
  'role-assignments': `SELECT r.id, c.managing_account AS manager, NULL AS member, NULL AS type
                         FROM role_assignments r JOIN contacts c ON c.id = r.contact`,
  'port-reservations': `SELECT r.id, c.managing_account AS manager, NULL AS member, NULL AS type
                          FROM port_reservations r JOIN connections c ON c.id = r.connection`,
  'network-services':
    'SELECT id, managing_account AS manager, joining_member_account AS member, type FROM network_services',
};

interface Row {
  id: string;
  manager: string | null;
  member: string | null;
  type: string | null;
}

/** The managing account and type of every resource of a family (the catalogue has no manager). */
async function rowsOf(family: string): Promise<Row[]> {
  const table = FAMILY_TABLES[family];
  const columns = await stack().db.sequelize.query<{ name: string }>(
    `SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :table`,
    { replacements: { table }, type: QueryTypes.SELECT },
  );
  const has = (name: string) => columns.some((column) => column.name === name);
  const sql =
    RELATED_SQL[family] ??
    `SELECT id, ${has('managing_account') ? 'managing_account' : 'NULL'} AS manager, NULL AS member,
            ${has('type') ? 'type' : 'NULL'} AS type FROM ${table}`;
  return stack().db.sequelize.query(`${sql} ORDER BY id`, { type: QueryTypes.SELECT });
}

/** The operation paths a fixture body belongs to: create on the collection, update and patch on an item. */
const BODY_SLOTS = [
  ['create', 'POST', (family: string) => `/${family}`],
  ['update', 'PUT', (family: string) => `/${family}/{id}`],
  ['patch', 'PATCH', (family: string) => `/${family}/{id}`],
] as const;

/**
 * The world of the authorisation matrix with a resource of every family in it (made by the matrix's
 * own fixtures), the bodies its managing side could send, and every other resource the database
 * holds, each with the identities that could change it.
 */
export async function createCampaignWorld(): Promise<CampaignWorld> {
  const world = await createWorld();
  const validBodies = new Map<string, Array<Record<string, unknown>>>();
  const add = (key: string, body: Record<string, unknown>) =>
    validBodies.set(key, [...(validBodies.get(key) ?? []), body]);
  const made: Array<{ family: string; id: string }> = [];
  for (const [family, entry] of Object.entries(MATRIX_FIXTURES)) {
    for (const fixture of Array.isArray(entry) ? entry : [entry]) {
      if (fixture.kind !== 'subject' || !fixture.setup || family === 'events') continue;
      const subject = await fixture.setup(world);
      made.push({ family, id: subject.id });
      for (const [slot, method, path] of BODY_SLOTS) {
        const key = `${method} ${path(family)}`;
        if (slot === 'create' && fixture.createBody) add(key, await fixture.createBody(world));
        if (slot === 'update' && fixture.updateBody) add(key, fixture.updateBody(world, subject));
        if (slot === 'patch' && fixture.patchBody) add(key, fixture.patchBody(world, subject));
      }
    }
  }
  const actsFor = {} as Record<AccountIdentity, ReadonlySet<string>>;
  for (const identity of ACCOUNT_IDENTITIES)
    actsFor[identity] = new Set(await accountsActingFor(stack().db.sequelize, world.accounts[identity]));
  const inWorld = (account: string | null) =>
    account !== null && ACCOUNT_IDENTITIES.some((identity) => actsFor[identity].has(account));
  const targets: Target[] = [];
  const existing = new Map<string, Set<string>>();
  const managerOf = new Map<string, string | null>();
  for (const family of Object.keys(FAMILY_TABLES)) {
    const rows = await rowsOf(family);
    existing.set(family, new Set(rows.map((row) => row.id)));
    if (family === 'contacts' || family === 'connections')
      for (const row of rows) managerOf.set(row.id, row.manager);
    // In an order that does not depend on the world's random names, so that a seed drafts the same
    // requests in every run of the file: the matrix's subjects as they were made, the world's
    // accounts, then the first few (by id) of everybody else's, which the seed named.
    const byId = new Map(rows.map((row) => [row.id, row]));
    const ours = [
      ...made.filter((subject) => subject.family === family).map((subject) => subject.id),
      ...(family === 'accounts' ? ACCOUNT_IDENTITIES.map((identity) => world.accounts[identity]) : []),
    ];
    const others = rows.filter((row) => !ours.includes(row.id) && !inWorld(row.manager)).slice(0, 3);
    for (const row of [...ours.map((id) => byId.get(id)!), ...others]) {
      const changers = new Set(
        ACCOUNT_IDENTITIES.filter((identity) =>
          [row.manager, row.member].some((account) => account !== null && actsFor[identity].has(account)),
        ),
      );
      targets.push({ family, id: row.id, changers, ...(row.type ? { type: row.type } : {}) });
    }
  }
  // Logins with keys that exist and secrets that are not theirs; a refresh with an access token.
  return {
    world,
    targets,
    existing,
    actsFor,
    managerOf,
    validBodies,
  };
}
