import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { statusesOf } from '../../api/families';
import { RESOURCE_FAMILIES } from '../../api/registry';
import { absentConfigOrder } from '../../domain/network-service-configs';
import type { Access } from '../../domain/authority';
import { loadSpec, specOperations } from '../../spec';
import { stack } from './stack';
import type { AccountIdentity, MatrixFixture } from './matrix-world';
import {
  ACCOUNT_IDENTITIES,
  accountFixture,
  actsFor,
  address,
  canary,
  carrierOf,
  contactOf,
  MATRIX_CONNECTION_OFFERING,
  MATRIX_EXCHANGE_LAN,
  matrixConfig,
  matrixMultipointConfig,
  matrixService,
  matrixSession,
  multipointOf,
  outsideMember,
  owned,
  ownerReadyToOrder,
  randomOwnAddress,
  randomUnicastMac,
} from './matrix-world';

export type { AccountIdentity, Identity, MatrixFixture, Subject, World } from './matrix-world';
export {
  ACCOUNT_IDENTITIES,
  canary,
  createWorld,
  matrixService,
  multipointOf,
  outsideMember,
  owned,
  REJECTED_IDENTITIES,
} from './matrix-world';

/**
 * The fixtures of the authorisation matrix, one (or more) per resource family, made in the world of
 * test/support/matrix-world.ts; the world and its identities are exported from here as well.
 */
/** The member each joining rule of the matrix admits, for a replacement that keeps it. */
const ruleMembers = new Map<string, string>();

const document = loadSpec();
/** The path a collection is listed at names its family in the matrix (`/macs`: `macs`). */
const pathOf = (operationId: string) =>
  specOperations(document)
    .find((op) => op.operationId === operationId)!
    .path.split('/')[1];
const registered = RESOURCE_FAMILIES.flatMap((family) =>
  family.collections(document).map((entry) => ({ family, entry, name: pathOf(entry.list) })),
);

/** The collections that are the same for every caller (no scope in the registry) are the catalogue. */
const CATALOGUE_FIXTURES: Record<string, MatrixFixture> = Object.fromEntries(
  registered.filter(({ entry }) => !entry.scope).map(({ name }) => [name, { kind: 'catalogue' }]),
);

/** Each fixture with what the registry says of its family: whether it changes asynchronously. */
function withRegistryFacts(
  fixtures: Record<string, MatrixFixture | MatrixFixture[]>,
): Record<string, MatrixFixture | MatrixFixture[]> {
  const facts = (name: string, fixture: MatrixFixture): MatrixFixture => {
    const family = registered.find((collection) => collection.name === name)?.family;
    if (!family || fixture.kind !== 'subject') return fixture;
    return { ...fixture, asynchronous: family.asynchronous, changeStatus: statusesOf(family).change };
  };
  return Object.fromEntries(
    Object.entries(fixtures).map(([name, fixture]) => [
      name,
      Array.isArray(fixture) ? fixture.map((one) => facts(name, one)) : facts(name, fixture),
    ]),
  );
}

/** Every family the server routes needs one of these to join the matrix. */
export const MATRIX_FIXTURES: Record<string, MatrixFixture | MatrixFixture[]> = withRegistryFacts({
  ...CATALOGUE_FIXTURES,
  'network-services': [
    { kind: 'catalogue', label: 'exchange LAN' },
    {
      kind: 'subject',
      label: 'ordered',
      async setup(world) {
        const external = canary('service-ref');
        const order = canary('service-po');
        const service = await stack().db.networkServices.create({
          ...matrixService(world),
          external_ref: external,
          purchase_order: order,
        });
        return { id: service.id, access: owned(world, 'owner', 'sub-account'), canaries: [external, order] };
      },
      async createBody(world) {
        await ownerReadyToOrder(world, []);
        return {
          type: 'mp2mp_vc',
          product_offering: 'po-mp2mp-vc-ham',
          managing_account: world.accounts.owner,
          consuming_account: world.accounts['sub-account'],
          billing_account: world.accounts.owner,
          display_name: 'Matrix created',
        };
      },
      updateBody: (world) => ({
        type: 'mp2mp_vc',
        product_offering: 'po-mp2mp-vc-ham',
        managing_account: world.accounts.owner,
        consuming_account: world.accounts['sub-account'],
        billing_account: world.accounts.owner,
        display_name: 'Matrix replaced',
      }),
      patchBody: () => ({ type: 'mp2mp_vc', purchase_order: 'matrix patched' }),
      // Change requests belong to point-to-point circuits: a multipoint service has none to read
      // or withdraw, whoever asks, and a letter of authorisation is no change request.
      partStatus: (part) =>
        part.path.endsWith('/change-request') ? (part.method === 'POST' ? 415 : 404) : undefined,
    },
  ],
  extensions: { kind: 'open' },
  account: { kind: 'self' },
  accounts: [accountFixture(true), accountFixture(false)],
  contacts: {
    kind: 'subject',
    async setup(world) {
      const { contact, canaries } = await contactOf(world);
      return { id: contact.id, access: owned(world, 'owner', 'sub-account'), canaries };
    },
    createBody: (world) =>
      Promise.resolve({
        managing_account: world.accounts.owner,
        consuming_account: world.accounts['sub-account'],
        name: 'Matrix created',
      }),
    updateBody: (world) => ({
      managing_account: world.accounts.owner,
      consuming_account: world.accounts['sub-account'],
      name: 'Matrix replaced',
    }),
    patchBody: () => ({ name: 'Matrix patched' }),
  },
  'role-assignments': {
    kind: 'subject',
    async setup(world) {
      const { contact, canaries } = await contactOf(world);
      const assignment = await stack().db.contacts.assignRole({ role: 'role-noc', contact: contact.id });
      return { id: assignment.id, access: owned(world, 'owner', 'sub-account'), canaries };
    },
    async createBody(world) {
      const { contact } = await contactOf(world);
      return { contact: contact.id, role: 'role-peering' };
    },
  },
  connections: {
    kind: 'subject',
    async setup(world) {
      const { db } = stack();
      const offering = (await db.connections.offering(MATRIX_CONNECTION_OFFERING))!;
      const external = canary('connection-ref');
      const order = canary('connection-po');
      const connection = await db.connections.create(
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
          external_ref: external,
          purchase_order: order,
          contract_ref: null,
          connecting_party: null,
        },
        offering,
      );
      return { id: connection.id, access: owned(world, 'owner', 'sub-account'), canaries: [external, order] };
    },
    patchBody: () => ({ purchase_order: 'matrix patched' }),
    async createBody(world) {
      // The owner pays, so it needs billing information; its contact holds the roles the offering needs.
      const assignments = await ownerReadyToOrder(world, ['role-implementation', 'role-noc']);
      return {
        managing_account: world.accounts.owner,
        consuming_account: world.accounts['sub-account'],
        billing_account: world.accounts.owner,
        role_assignments: assignments,
        product_offering: MATRIX_CONNECTION_OFFERING,
        mode: 'standalone',
        port_quantity: 1,
        subscriber_side_demarcs: ['matrix demarc'],
      };
    },
  },
  'port-reservations': {
    kind: 'subject',
    async setup(world) {
      const { db } = stack();
      const offering = (await db.connections.offering(MATRIX_CONNECTION_OFFERING))!;
      const external = canary('reservation-ref');
      const connection = await db.connections.create(
        {
          managing_account: world.accounts.owner,
          consuming_account: world.accounts['sub-account'],
          billing_account: world.accounts.owner,
          role_assignments: [],
          product_offering: offering.id,
          mode: 'lag_lacp',
          lacp_timeout: null,
          port_quantity: 2,
          subscriber_side_demarcs: ['matrix demarc'],
          external_ref: external,
          purchase_order: '',
          contract_ref: null,
          connecting_party: null,
        },
        offering,
      );
      // In production already, as if provisioned: a port of it can be given back.
      await db.sequelize.query(
        `UPDATE connections SET state = 'production', current_billing_start_date = CURRENT_DATE WHERE id = :id`,
        { replacements: { id: connection.id } },
      );
      await db.sequelize.query(
        `UPDATE port_reservations SET state = 'production', external_ref = :external,
           current_billing_start_date = CURRENT_DATE WHERE connection = :id`,
        { replacements: { id: connection.id, external } },
      );
      return {
        id: connection.port_reservations[0],
        access: owned(world, 'owner', 'sub-account'),
        canaries: [external],
      };
    },
    patchBody: () => ({ cross_connect_id: 'matrix patched' }),
    updateBody: () => ({ cross_connect_id: 'matrix replaced', purchase_order: '' }),
  },
  macs: {
    kind: 'subject',
    async setup(world) {
      const external = canary('mac-ref');
      const mac = await stack().db.macs.create({
        managing_account: world.accounts.owner,
        consuming_account: world.accounts['sub-account'],
        external_ref: external,
        address: randomUnicastMac(),
        valid_not_before: null,
        valid_not_after: null,
      });
      return { id: mac.id, access: owned(world, 'owner', 'sub-account'), canaries: [external] };
    },
    createBody: (world) =>
      Promise.resolve({
        managing_account: world.accounts.owner,
        consuming_account: world.accounts['sub-account'],
        address: randomUnicastMac(),
      }),
  },
  'network-service-configs': [
    {
      kind: 'subject',
      label: 'exchange LAN',
      async setup(world) {
        const external = canary('config-ref');
        const order = canary('config-po');
        const { config } = await matrixConfig(world, { external_ref: external, purchase_order: order });
        return { id: config, access: owned(world, 'owner', 'sub-account'), canaries: [external, order] };
      },
      async createBody(world) {
        const assignments = await ownerReadyToOrder(world, ['role-noc', 'role-peering']);
        const connection = await carrierOf(world);
        return {
          type: 'exchange_lan',
          network_service: MATRIX_EXCHANGE_LAN,
          managing_account: world.accounts.owner,
          consuming_account: world.accounts['sub-account'],
          billing_account: world.accounts.owner,
          role_assignments: assignments,
          connection: connection.id,
          vlan_config: { vlan_type: 'dot1q' },
          asns: [64512],
          listed: false,
        };
      },
      patchBody: () => ({ type: 'exchange_lan', purchase_order: 'matrix patched' }),
    },
    {
      kind: 'subject',
      label: 'multipoint',
      async setup(world) {
        const external = canary('vc-config-ref');
        const order = canary('vc-config-po');
        const config = await stack().db.networkServiceConfigs.create(
          {
            ...absentConfigOrder('mp2mp_vc'),
            ...(await matrixMultipointConfig(world)),
            external_ref: external,
            purchase_order: order,
          },
          { quarantineSeconds: 0 },
        );
        return { id: config.id, access: owned(world, 'owner', 'sub-account'), canaries: [external, order] };
      },
      async createBody(world) {
        const assignments = await ownerReadyToOrder(world, ['role-noc']);
        return { ...(await matrixMultipointConfig(world)), role_assignments: assignments };
      },
      patchBody: () => ({ type: 'mp2mp_vc', purchase_order: 'matrix patched' }),
    },
  ],
  'network-feature-configs': {
    kind: 'subject',
    async setup(world) {
      const external = canary('session-ref');
      const password = canary('session-password');
      const { config, v4 } = await matrixConfig(world);
      const featureConfig = await stack().db.networkFeatureConfigs.create({
        ...matrixSession(world, config, v4),
        external_ref: external,
        password,
      });
      return {
        id: featureConfig.id,
        access: owned(world, 'owner', 'sub-account'),
        canaries: [external, password],
      };
    },
    async createBody(world) {
      const assignments = await ownerReadyToOrder(world, ['role-noc']);
      const { config, v4 } = await matrixConfig(world);
      return { ...matrixSession(world, config, v4), role_assignments: assignments };
    },
    patchBody: () => ({ max_prefix_v4: 42 }),
  },
  // The owner manages the rule; the sub-account, consuming the service, sees it but does not manage
  // it, so it reads like a resource the sub-account consumes. The member is outside the world.
  'member-joining-rules': {
    kind: 'subject',
    async setup(world) {
      const external = canary('rule-ref');
      const member = await outsideMember();
      const rule = await stack().db.memberJoiningRules.create({
        type: 'allow',
        network_service: await multipointOf(world),
        consuming_account: member,
        managing_account: world.accounts.owner,
        external_ref: external,
        capacity_min: null,
        capacity_max: null,
      });
      ruleMembers.set(rule.id, member);
      return { id: rule.id, access: owned(world, 'owner', 'sub-account'), canaries: [external] };
    },
    createBody: async (world) => ({
      type: 'allow',
      network_service: await multipointOf(world),
      consuming_account: await outsideMember(),
      managing_account: world.accounts.owner,
    }),
    updateBody: (world, subject) => ({
      type: 'allow',
      consuming_account: ruleMembers.get(subject.id),
      managing_account: world.accounts.owner,
      capacity_max: 1000,
    }),
    patchBody: () => ({ type: 'allow', external_ref: 'matrix patched' }),
  },
  ips: {
    kind: 'subject',
    async setup(world) {
      const external = canary('ip-ref');
      const ip = await stack().db.ips.create({
        managing_account: world.accounts.owner,
        consuming_account: world.accounts['sub-account'],
        external_ref: external,
        version: 4,
        address: randomOwnAddress(),
        prefix_length: 32,
        fqdn: null,
        valid_not_before: null,
        valid_not_after: null,
      });
      return { id: ip.id, access: owned(world, 'owner', 'sub-account'), canaries: [external] };
    },
    createBody: (world) =>
      Promise.resolve({
        managing_account: world.accounts.owner,
        consuming_account: world.accounts['sub-account'],
        version: 4,
        address: randomOwnAddress(),
        prefix_length: 32,
      }),
    updateBody: (world) => ({
      managing_account: world.accounts.owner,
      consuming_account: world.accounts['sub-account'],
      version: 4,
      address: randomOwnAddress(),
      prefix_length: 32,
      fqdn: 'router.matrix.example',
    }),
    patchBody: () => ({ fqdn: 'patched.matrix.example' }),
  },
  ports: {
    kind: 'subject',
    async setup(world) {
      const id = `port-matrix-${randomBytes(5).toString('hex')}`;
      const external = canary('port-ref');
      const order = canary('po');
      await stack().db.sequelize.query(
        `INSERT INTO ports (id, state, status, connection, managing_account, consuming_account, billing_account,
                            role_assignments, external_ref, purchase_order, contract_ref, operational_state,
                            device, pop, name, media_type, speed, created_at, updated_at)
         SELECT :id, state, status, NULL, :managing, :consuming, :managing, '[]', :external, :order, NULL,
                operational_state, device, pop, CONCAT('matrix-', name), media_type, speed, NOW(3), NOW(3)
           FROM ports ORDER BY id LIMIT 1`,
        {
          replacements: {
            id,
            managing: world.accounts.owner,
            consuming: world.accounts['sub-account'],
            external,
            order,
          },
          type: QueryTypes.INSERT,
        },
      );
      return { id, access: owned(world, 'owner', 'sub-account'), canaries: [external, order] };
    },
  },
  events: {
    kind: 'subject',
    async setup(world) {
      const legal = canary('event-legal-name');
      const id = `acc-matrix-e-${randomBytes(5).toString('hex')}`;
      await stack().db.accounts.importAccount({
        id,
        name: 'Matrix event subject',
        legal_name: legal,
        address,
        managing_account: world.accounts.owner,
      });
      const access = Object.fromEntries(
        ACCOUNT_IDENTITIES.map((identity) => [
          identity,
          actsFor(world, identity, world.accounts.owner) ? 'read' : 'none',
        ]),
      ) as Record<AccountIdentity, Access>;
      return { id, access, canaries: [legal], find: (items) => items.find((event) => event.account === id) };
    },
  },
});
