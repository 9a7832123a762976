import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTokenService } from '../../api/token-service';
import type { Access } from '../../domain/authority';
import { request } from './http';
import { stack } from './stack';

/**
 * The world of the authorisation matrix: a reseller R managing an owner O, which manages a
 * sub-account S, and an unrelated account U, each with an API key; plus tokens that must not work.
 * Names are random so the matrix shares the database with other tests without meeting them.
 */
export const ACCOUNT_IDENTITIES = ['owner', 'reseller', 'sub-account', 'unrelated'] as const;
export const REJECTED_IDENTITIES = ['expired token', 'tampered token', 'anonymous'] as const;
export type AccountIdentity = (typeof ACCOUNT_IDENTITIES)[number];
export type Identity = AccountIdentity | (typeof REJECTED_IDENTITIES)[number];

export interface World {
  accounts: Record<AccountIdentity, string>;
  tokens: Record<Identity, string | undefined>;
}

export const address = {
  country: 'NL',
  locality: 'Amsterdam',
  postal_code: '1012 AB',
  street_address: 'Damrak 1',
};

export const canary = (what: string) => `canary-${what}-${randomBytes(5).toString('hex')}`;

export async function createWorld(): Promise<World> {
  const { db, config } = stack();
  const suffix = randomBytes(4).toString('hex');
  const accounts = {
    reseller: `acc-matrix-r-${suffix}`,
    owner: `acc-matrix-o-${suffix}`,
    'sub-account': `acc-matrix-s-${suffix}`,
    unrelated: `acc-matrix-u-${suffix}`,
  } satisfies Record<AccountIdentity, string>;
  const managers: Record<AccountIdentity, string | null> = {
    reseller: null,
    owner: accounts.reseller,
    'sub-account': accounts.owner,
    unrelated: null,
  };
  const tokens: Partial<Record<Identity, string | undefined>> = {};
  let owner: { apiKey: string } | undefined;
  // Managers first: the hierarchy refers to existing accounts only.
  for (const identity of ['reseller', 'owner', 'sub-account', 'unrelated'] as const) {
    await db.accounts.importAccount({
      id: accounts[identity],
      name: `Matrix ${identity} ${suffix}`,
      address,
      managing_account: managers[identity],
    });
    const key = await db.credentials.createApiKey(accounts[identity], 'authorisation matrix');
    if (identity === 'owner') owner = key;
    const response = await request('POST', '/auth/token', {
      body: { api_key: key.apiKey, api_secret: key.apiSecret },
    });
    assert.equal(response.status, 201, response.text);
    tokens[identity] = response.body.access_token as string;
  }
  const past = createTokenService({
    signingKey: config.tokenSigningKey,
    accessTokenTtlSeconds: 60,
    refreshTokenTtlSeconds: 120,
    now: () => new Date(Date.now() - 3_600_000),
  });
  tokens['expired token'] = (
    await past.issuePair({ accountId: accounts.owner, apiKey: owner!.apiKey })
  ).access_token;
  // The owner's token claiming to be the reseller, with the owner's signature.
  const [header, payload, signature] = tokens.owner!.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  const forged = Buffer.from(JSON.stringify({ ...claims, sub: accounts.reseller })).toString('base64url');
  tokens['tampered token'] = `${header}.${forged}.${signature}`;
  tokens.anonymous = undefined;
  return { accounts, tokens: tokens as Record<Identity, string | undefined> };
}

/** A resource made for one matrix case, with what each identity may do with it. */
export interface Subject {
  id: string;
  access: Record<AccountIdentity, Access>;
  /** Values that must never reach an identity whose access is `none` or `discover`. */
  canaries: string[];
  /** Picks the subject out of a list answer (by id unless said otherwise). */
  find?: (items: Array<Record<string, unknown>>) => Record<string, unknown> | undefined;
}

/**
 * How one resource family takes part in the matrix. `kind` says what the family is:
 * - `subject`: resources with an owner; `setup` makes a fresh one per case;
 * - `catalogue`: the same for every authenticated caller (read the first item of the list);
 * - `self`: the caller's own account (`GET /account`);
 * - `open`: readable without a token.
 */
export interface MatrixFixture {
  kind: 'subject' | 'catalogue' | 'self' | 'open';
  /** Tells fixtures of one family apart in test names. */
  label?: string;
  setup?: (world: World) => Promise<Subject>;
  /** A create body the managing side (owner, reseller) may send. */
  createBody?: (world: World) => Promise<Record<string, unknown>>;
  updateBody?: (world: World, subject: Subject) => Record<string, unknown>;
  patchBody?: (world: World, subject: Subject) => Record<string, unknown>;
  /**
   * The status a part of the resource answers an identity with this access, where it differs from
   * the usual (GET 200, a change 202, with a letter of authorisation as the body).
   */
  partStatus?: (part: { method: string; path: string }, access: Access) => number | undefined;
  /** Properties an identity with `discover` access may see. */
  publicView?: readonly string[];
  /**
   * Stateful resources change asynchronously: PUT, PATCH and DELETE answer 202 and a DELETE leaves
   * the resource in place (decommissioning, cancelled); others answer 200 and a DELETE removes it.
   * Filled in from the registry (api/registry.ts), never written per family.
   */
  asynchronous?: boolean;
  /** What a PUT or PATCH answers (200 or 202); from the registry too. */
  changeStatus?: number;
}

export const owned = (world: World, managing: AccountIdentity, consuming: AccountIdentity) =>
  Object.fromEntries(
    ACCOUNT_IDENTITIES.map((identity) => {
      const { accounts } = world;
      const acts = (holder: AccountIdentity) => actsFor(world, identity, accounts[holder]);
      const access: Access = acts(managing) ? 'change' : acts(consuming) ? 'read' : 'none';
      return [identity, access];
    }),
  ) as Record<AccountIdentity, Access>;

/** R acts for R, O, S; O for O, S; S for S; U for U. */
export function actsFor(world: World, identity: AccountIdentity, accountId: string): boolean {
  const below: Record<AccountIdentity, AccountIdentity[]> = {
    reseller: ['reseller', 'owner', 'sub-account'],
    owner: ['owner', 'sub-account'],
    'sub-account': ['sub-account'],
    unrelated: ['unrelated'],
  };
  return below[identity].some((holder) => world.accounts[holder] === accountId);
}

export async function contactOf(world: World) {
  const external = canary('contact-ref');
  const name = canary('contact-name');
  const contact = await stack().db.contacts.createContact({
    managing_account: world.accounts.owner,
    consuming_account: world.accounts['sub-account'],
    external_ref: external,
    name,
    email: `${canary('mail')}@matrix.example`,
    telephone: '+31201234567',
  });
  return { contact, canaries: [external, name, contact.email!] };
}

/** An account managed by the owner, discoverable or not, with sensitive values to watch for. */
export function accountFixture(discoverable: boolean): MatrixFixture {
  return {
    kind: 'subject',
    label: discoverable ? 'discoverable' : 'not discoverable',
    publicView: ['id', 'name', 'metro_area_network_presence'],
    async setup(world) {
      const legal = canary('legal-name');
      const external = canary('account-ref');
      const billing = canary('billing');
      const street = canary('street');
      const id = `acc-matrix-t-${randomBytes(5).toString('hex')}`;
      await stack().db.accounts.importAccount({
        id,
        name: `Matrix subject ${id.slice(-10)}`,
        legal_name: legal,
        external_ref: external,
        address: { ...address, street_address: street },
        billing_information: { name: billing, address },
        discoverable,
        managing_account: world.accounts.owner,
      });
      const access = Object.fromEntries(
        ACCOUNT_IDENTITIES.map((identity) => [
          identity,
          actsFor(world, identity, world.accounts.owner) ? 'change' : discoverable ? 'discover' : 'none',
        ]),
      ) as Record<AccountIdentity, Access>;
      return { id, access, canaries: [legal, external, billing, street] };
    },
    createBody: (world) =>
      Promise.resolve({ name: 'Matrix created', address, managing_account: world.accounts.owner }),
    // Discoverable accounts' names must read apart: each write names its account afresh.
    updateBody: () => ({
      name: `Matrix replaced ${randomBytes(5).toString('hex')}`,
      address,
      metro_area_network_presence: [],
    }),
    patchBody: () => ({ name: `Matrix patched ${randomBytes(5).toString('hex')}` }),
  };
}

/** A locally administered unicast address no other test uses. */
export const randomUnicastMac = () =>
  ['02', ...[...randomBytes(5)].map((byte) => byte.toString(16).padStart(2, '0'))].join(':');

/** Connections of the matrix are ordered where the exchange orders the cross-connect. */
export const MATRIX_CONNECTION_OFFERING = 'po-connection-ham-10g';

/** A connection of the owner for the sub-account, ordered straight into the database. */
async function matrixConnection(world: World) {
  const { db } = stack();
  const offering = (await db.connections.offering(MATRIX_CONNECTION_OFFERING))!;
  return db.connections.create(
    {
      managing_account: world.accounts.owner,
      consuming_account: world.accounts['sub-account'],
      billing_account: world.accounts.owner,
      role_assignments: [],
      product_offering: offering.id,
      mode: 'standalone',
      lacp_timeout: null,
      port_quantity: 1,
      subscriber_side_demarcs: ['matrix demarc'],
      external_ref: null,
      purchase_order: '',
      contract_ref: null,
      connecting_party: null,
    },
    offering,
  );
}

/** One connection per world carries every config of the matrix (each on a VLAN of its own). */
const carriers = new WeakMap<World, Promise<{ id: string }>>();
export function carrierOf(world: World): Promise<{ id: string }> {
  let carrier = carriers.get(world);
  if (!carrier) {
    carrier = matrixConnection(world);
    carriers.set(world, carrier);
  }
  return carrier;
}

/** The owner can pay, and holds a contact with `roles`; answers the assignments. */
export async function ownerReadyToOrder(world: World, roles: readonly string[]): Promise<string[]> {
  await stack().db.sequelize.query('UPDATE accounts SET billing_information = :billing WHERE id = :id', {
    replacements: { id: world.accounts.owner, billing: JSON.stringify({ name: 'Matrix owner', address }) },
  });
  const { contact } = await contactOf(world);
  const assignments = [];
  for (const role of roles)
    assignments.push((await stack().db.contacts.assignRole({ role, contact: contact.id })).id);
  return assignments;
}

/** The exchange LAN the matrix's (Hamburg) connections reach. */
export const MATRIX_EXCHANGE_LAN = 'ns-exchange-lan-ham';

/** An exchange-LAN config of the owner on the world's connection, with its IPv4 address. */
export async function matrixConfig(
  world: World,
  refs: { external_ref: string | null; purchase_order: string } = { external_ref: null, purchase_order: '' },
): Promise<{ config: string; v4: string }> {
  const { db } = stack();
  const config = await db.networkServiceConfigs.create(
    {
      type: 'exchange_lan',
      network_service: MATRIX_EXCHANGE_LAN,
      managing_account: world.accounts.owner,
      consuming_account: world.accounts['sub-account'],
      billing_account: world.accounts.owner,
      role_assignments: [],
      connection: (await carrierOf(world)).id,
      vlan_config: { vlan_type: 'dot1q', vlan: null },
      asns: [64512],
      capacity: null,
      macs: [],
      listed: false,
      product_offering: null,
      contract_ref: null,
      role: null,
      handover: null,
      cloud_vlan: null,
      ...refs,
    },
    { quarantineSeconds: 0 },
  );
  const [v4] = await db.sequelize.query<{ id: string }>(
    'SELECT id FROM ip_addresses WHERE network_service_config = :id AND version = 4',
    { replacements: { id: config.id }, type: QueryTypes.SELECT },
  );
  return { config: config.id, v4: v4.id };
}

/** A session of the owner with the Hamburg IPv4 route server over `config`. */
export const matrixSession = (world: World, config: string, ip: string) => ({
  type: 'route_server' as const,
  network_feature: 'nf-rs1-ham',
  network_service_config: config,
  managing_account: world.accounts.owner,
  consuming_account: world.accounts['sub-account'],
  billing_account: world.accounts.owner,
  role_assignments: [],
  asn: 64512,
  password: null,
  as_set_v4: 'AS-MATRIX@RIPE',
  as_set_v6: null,
  max_prefix_v4: null,
  max_prefix_v6: null,
  insert_ixp_asn: true,
  session_mode: 'public' as const,
  bgp_session_type: 'passive' as const,
  ip,
  flags: [],
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
});

/** A private multipoint service of the owner for the sub-account, in Hamburg. */
export const matrixService = (world: World) => ({
  type: 'mp2mp_vc' as const,
  product_offering: 'po-mp2mp-vc-ham',
  managing_account: world.accounts.owner,
  consuming_account: world.accounts['sub-account'],
  billing_account: world.accounts.owner,
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
  joining_member_account: null,
  display_name: 'Matrix multipoint',
  capacity: null,
  public: false,
  cloud_key: null,
});

/** One multipoint service per world carries the matrix's multipoint configs. */
const multipoints = new WeakMap<World, Promise<string>>();
function multipointServiceOf(world: World): Promise<string> {
  let service = multipoints.get(world);
  if (!service) {
    service = stack()
      .db.networkServices.create(matrixService(world))
      .then((created) => created.id);
    multipoints.set(world, service);
  }
  return service;
}

/** A multipoint config order of the owner for the sub-account on the world's connection. */
export const matrixMultipointConfig = async (world: World) => ({
  type: 'mp2mp_vc' as const,
  network_service: await multipointServiceOf(world),
  managing_account: world.accounts.owner,
  consuming_account: world.accounts['sub-account'],
  billing_account: world.accounts.owner,
  role_assignments: [] as string[],
  connection: (await carrierOf(world)).id,
  vlan_config: { vlan_type: 'dot1q' as const, vlan: null },
});

/** Addresses from a range no exchange subnet uses (RFC 2544's benchmark range). */
export const randomOwnAddress = () => `198.18.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0] % 254)}`;

/** A private multipoint service per world: the owner manages it, the sub-account consumes it. */
const multipointServices = new WeakMap<World, Promise<string>>();
export function multipointOf(world: World): Promise<string> {
  let service = multipointServices.get(world);
  if (!service) {
    const id = `ns-matrix-mp-${randomBytes(5).toString('hex')}`;
    service = stack()
      .db.sequelize.query(
        `INSERT INTO network_services (id, type, name, display_name, product_offering, metro_area_network,
           managing_account, consuming_account, billing_account, state, status, external_ref, purchase_order,
           contract_ref, nsc_required_contact_roles, public, created_at, updated_at)
         VALUES (:id, 'mp2mp_vc', :id, 'Matrix VLAN', 'po-mp2mp-vc-fra', 'man-fra', :owner, :sub, :owner,
           'production', '[]', NULL, '', NULL, '[]', false, NOW(3), NOW(3))`,
        { replacements: { id, owner: world.accounts.owner, sub: world.accounts['sub-account'] } },
      )
      .then(() => id);
    multipointServices.set(world, service);
  }
  return service;
}

/**
 * An account nobody in the world acts for, for a joining rule to admit: discoverable, since a rule
 * names only accounts its owner may see.
 */
export async function outsideMember(): Promise<string> {
  const id = `acc-matrix-m-${randomBytes(5).toString('hex')}`;
  await stack().db.accounts.importAccount({
    id,
    name: `Matrix member ${id.slice(-10)}`,
    address,
    discoverable: true,
  });
  return id;
}
