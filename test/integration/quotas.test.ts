import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { ApiService } from '../../api/server';
import { startApi } from '../../api/server';
import { loadConfig } from '../../config/config';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import type { HttpResponse } from '../support/http';
import { request } from '../support/http';
import { settleConnections } from '../support/connections';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

/** The quotas of the second API these tests talk to; the shared stack keeps the defaults. */
const QUOTAS = {
  QUOTA_PORTS: '3',
  QUOTA_SUB_ACCOUNTS: '2',
  QUOTA_OPEN_ORDERS: '2',
  QUOTA_CONTACTS: '5',
  QUOTA_MACS: '2',
  QUOTA_IPS: '1',
  QUOTA_MEMBER_JOINING_RULES: '1',
};

const address = { country: 'NL', locality: 'Amsterdam', postal_code: '1012 AB', street_address: 'Damrak 2' };
const ENDED = ['decommissioned', 'cancelled', 'archived'];

/** What the tests read of a stateful resource. */
interface Resource {
  state: string;
  status: Array<{ tag: string }>;
  ports?: string[];
}

interface Customer {
  id: string;
  token: string;
  roles: string[];
}

/** What an order could write: rows of every table it touches, and the newest event. */
async function footprint(): Promise<Record<string, number>> {
  const [row] = await stack().db.sequelize.query<Record<string, number>>(
    `SELECT (SELECT COUNT(*) FROM accounts) AS accounts, (SELECT COUNT(*) FROM connections) AS connections,
       (SELECT COUNT(*) FROM port_reservations) AS port_reservations,
       (SELECT COUNT(*) FROM ports WHERE connection IS NOT NULL) AS ports_taken,
       (SELECT COUNT(*) FROM network_services) AS network_services,
       (SELECT COUNT(*) FROM network_service_configs) AS network_service_configs,
       (SELECT COUNT(*) FROM workflow_outbox) AS outbox, (SELECT MAX(serial) FROM events) AS newest_event`,
    { type: QueryTypes.SELECT },
  );
  return Object.fromEntries(Object.entries(row).map(([name, value]) => [name, Number(value)]));
}

/** What a registration writes: the rows of its table, and the events of its kind so far. */
async function registered(table: string, eventType: string): Promise<{ rows: number; events: number }> {
  const [row] = await stack().db.sequelize.query<{ rows: number; events: number }>(
    `SELECT (SELECT COUNT(*) FROM ${table}) AS \`rows\`, (SELECT COUNT(*) FROM events WHERE type = :eventType) AS events`,
    { replacements: { eventType }, type: QueryTypes.SELECT },
  );
  return { rows: Number(row.rows), events: Number(row.events) };
}

/** The footprint once nothing writes any more (workflows of earlier orders come to rest first). */
async function quietFootprint(): Promise<Record<string, number>> {
  return eventually(
    'the database coming to rest',
    async () => {
      const before = await footprint();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const after = await footprint();
      return JSON.stringify(before) === JSON.stringify(after) ? after : undefined;
    },
    30_000,
  );
}

/** Asserts a refusal naming the quota and its limit, counted for `root`'s tree, on behalf of `orderedFor`. */
function assertQuotaRefusal(
  response: HttpResponse,
  quota: { name: string; setting: string; limit: number; held: number },
  accounts: { root: string; orderedFor: string },
) {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.type, 'https://errors.ix-api.net/v2/unable-to-fulfill.html');
  assert.match(response.body.detail, new RegExp(`${quota.setting}.*at most ${quota.limit}\\b`));
  assert.deepEqual(response.body.conflicts, [
    {
      resource_type: 'accounts',
      resource_id: accounts.root,
      resource_property: `quota_${quota.name}`,
      remote_resource_type: 'accounts',
      remote_resource_id: accounts.orderedFor,
    },
  ]);
  assert.deepEqual(
    [response.body.quota.name, response.body.quota.limit, response.body.quota.held],
    [quota.name, quota.limit, quota.held],
  );
}

describe('quotas per account tree', function () {
  this.timeout(180_000);
  const suffix = randomBytes(3).toString('hex');
  let db: Database;
  let api: ApiService;
  /** Stateful resources these tests ordered, to be ended afterwards: [path, token]. */
  const ordered: Array<[string, string]> = [];

  const call = (method: string, path: string, token: string, body?: unknown) =>
    request(method, path, { token, body, baseUrl: api.url });

  /** A customer of its own (under `manager` when given) with contacts for connections and an API key. */
  async function customer(label: string, manager: string | null = null): Promise<Customer> {
    const { db: shared } = stack();
    const id = `acc-quota-${label}-${suffix}`;
    await shared.accounts.importAccount({
      id,
      name: `Quota ${label}`,
      address,
      billing_information: { name: `Quota ${label} B.V.`, address },
      managing_account: manager,
    });
    const roles: string[] = [];
    for (const role of ['implementation', 'noc']) {
      const contact = `con-quota-${label}-${role}-${suffix}`;
      await shared.contacts.ensureContact({
        id: contact,
        managing_account: id,
        consuming_account: id,
        external_ref: null,
        name: `${label} ${role}`,
        email: `${role}@${label}.example`,
        telephone: '+31201234567',
      });
      const assignment = `ra-quota-${label}-${role}-${suffix}`;
      await shared.contacts.ensureRoleAssignment({ id: assignment, role: `role-${role}`, contact });
      roles.push(assignment);
    }
    const key = await shared.credentials.createApiKey(id, 'quota tests');
    const login = await request('POST', '/auth/token', {
      body: { api_key: key.apiKey, api_secret: key.apiSecret },
    });
    assert.equal(login.status, 201, login.text);
    return { id, token: login.body.access_token as string, roles };
  }

  /** A connection order of `who` (Frankfurt, where the exchange makes the cross-connect, by default). */
  const connectionOrder = (who: Customer, extra: Record<string, unknown> = {}) => ({
    managing_account: who.id,
    consuming_account: who.id,
    billing_account: who.id,
    role_assignments: who.roles,
    product_offering: 'po-connection-fra-10g',
    mode: 'lag_lacp',
    lacp_timeout: 'slow',
    port_quantity: 2,
    subscriber_side_demarcs: ['quota cage, panel 1'],
    ...extra,
  });
  /** Amsterdam connections wait for the subscriber's cross-connect: they stay open orders. */
  const waitingOrder = (who: Customer) =>
    connectionOrder(who, {
      product_offering: 'po-connection-ams-10g',
      mode: 'standalone',
      lacp_timeout: null,
      port_quantity: 1,
      subscriber_side_demarcs: [],
    });

  async function order(who: Customer, path: string, body: unknown): Promise<{ id: string }> {
    const created = await call('POST', path, who.token, body);
    assert.equal(created.status, 201, created.text);
    ordered.push([`${path}/${created.body.id}`, who.token]);
    return created.body as { id: string };
  }

  /** Waits until the resource at `path` passes `check`. */
  const reaches = (who: Customer, path: string, check: (body: Resource) => boolean) =>
    eventually(
      `${path} coming along`,
      async () => {
        const body = (await call('GET', path, who.token)).body as Resource;
        return check(body) ? true : undefined;
      },
      60_000,
    );
  const waitingForCrossConnect = (body: Resource) =>
    body.state === 'allocated' && body.status.some((entry) => entry.tag === 'cross_connect_pending');

  before(async () => {
    const config = loadConfig({ ...stack().env, ...QUOTAS });
    db = openDatabase({
      url: config.databaseUrl,
      apiSecretHashKey: config.apiSecretHashKey,
      quotas: config.quotas,
    });
    api = await startApi({
      config,
      logger: stack().logger,
      db,
      port: 0,
      relayIntervalMs: 300,
      relayGraceMs: 300,
    });
  });

  after(async () => {
    // Everything ordered here ends, so that later tests find the exchange at rest.
    try {
      for (const [path, token] of ordered.reverse()) {
        const now = (await call('GET', path, token)).body as { state: string };
        if (!ENDED.includes(now.state) && now.state !== 'decommission_requested')
          assert.equal((await call('DELETE', path, token)).status, 202, path);
      }
      for (const [path, token] of ordered)
        await eventually(
          `${path} ended`,
          async () => (ENDED.includes((await call('GET', path, token)).body.state) ? true : undefined),
          60_000,
        );
      await settleConnections();
    } finally {
      await api.stop();
      await db.close();
    }
  });

  it('refuses ports beyond the quota, by order or reservation, with nothing written, until some end', async () => {
    const member = await customer('member');
    const first = await order(member, '/connections', connectionOrder(member));
    await reaches(member, `/connections/${first.id}`, (body) => body.state === 'production');

    const before = await quietFootprint();
    const refused = await call('POST', '/connections', member.token, connectionOrder(member));
    assertQuotaRefusal(
      refused,
      { name: 'ports', setting: 'QUOTA_PORTS', limit: 3, held: 2 },
      { root: member.id, orderedFor: member.id },
    );
    assert.deepEqual(await footprint(), before, 'the refused order wrote nothing');

    // A reservation adds a port: the third fits, a fourth does not.
    await order(member, '/port-reservations', { connection: first.id });
    await reaches(
      member,
      `/connections/${first.id}`,
      (body) => body.state === 'production' && body.ports?.length === 3,
    );
    const full = await quietFootprint();
    const another = await call('POST', '/port-reservations', member.token, { connection: first.id });
    assertQuotaRefusal(
      another,
      { name: 'ports', setting: 'QUOTA_PORTS', limit: 3, held: 3 },
      { root: member.id, orderedFor: member.id },
    );
    assert.deepEqual(await footprint(), full, 'the refused reservation wrote nothing');

    // Once the connection is decommissioned, its ports are free for the next order.
    assert.equal((await call('DELETE', `/connections/${first.id}`, member.token)).status, 202);
    await reaches(member, `/connections/${first.id}`, (body) => body.state === 'decommissioned');
    await order(member, '/connections', connectionOrder(member));
  });

  it('counts sub-accounts and their orders against the reseller’s tree', async () => {
    const reseller = await customer('reseller');
    const sub = await customer('sub', reseller.id);
    // The reseller's tree holds one sub-account; it may have two.
    const second = await call('POST', '/accounts', reseller.token, {
      name: 'Quota second sub',
      address,
      managing_account: reseller.id,
    });
    assert.equal(second.status, 201, second.text);
    const before = await quietFootprint();
    const third = await call('POST', '/accounts', sub.token, { name: 'Quota sub of sub', address });
    assertQuotaRefusal(
      third,
      { name: 'sub_accounts', setting: 'QUOTA_SUB_ACCOUNTS', limit: 2, held: 2 },
      { root: reseller.id, orderedFor: sub.id },
    );
    // The second sub-account's on-boarding may still record its status meanwhile: what must not
    // appear is anything of the refused account.
    const { newest_event: newestBefore, ...counts } = before;
    const { newest_event: _newestAfter, ...countsAfter } = await footprint();
    assert.deepEqual(countsAfter, counts, 'the refused account was not written');
    const created = await stack().db.sequelize.query<{ type: string }>(
      "SELECT type FROM events WHERE serial > :newestBefore AND type = 'account.created'",
      { replacements: { newestBefore }, type: QueryTypes.SELECT },
    );
    assert.deepEqual(created, [], 'the refused account was not written');

    // The sub-account holds no port itself, but its reseller's tree holds two of three.
    const own = await order(reseller, '/connections', connectionOrder(reseller));
    await reaches(reseller, `/connections/${own.id}`, (body) => body.state === 'production');
    const held = await quietFootprint();
    const subsOrder = await call('POST', '/connections', sub.token, connectionOrder(sub));
    assertQuotaRefusal(
      subsOrder,
      { name: 'ports', setting: 'QUOTA_PORTS', limit: 3, held: 2 },
      { root: reseller.id, orderedFor: sub.id },
    );
    assert.deepEqual(await footprint(), held, 'the refused connection was not written');
  });

  it('refuses an order of any kind beyond the open orders, and takes it once one is cancelled', async () => {
    const member = await customer('open');
    const waiting = [
      await order(member, '/connections', waitingOrder(member)),
      await order(member, '/connections', waitingOrder(member)),
    ];
    for (const { id } of waiting) await reaches(member, `/connections/${id}`, waitingForCrossConnect);
    const service = {
      type: 'mp2mp_vc',
      managing_account: member.id,
      consuming_account: member.id,
      billing_account: member.id,
      product_offering: 'po-mp2mp-vc-fra',
      display_name: 'Quota multipoint',
    };
    const before = await quietFootprint();
    const refused = await call('POST', '/network-services', member.token, service);
    assertQuotaRefusal(
      refused,
      { name: 'open_orders', setting: 'QUOTA_OPEN_ORDERS', limit: 2, held: 2 },
      { root: member.id, orderedFor: member.id },
    );
    assert.deepEqual(await footprint(), before, 'the refused service was not written');

    assert.equal((await call('DELETE', `/connections/${waiting[0].id}`, member.token)).status, 202);
    await reaches(member, `/connections/${waiting[0].id}`, (body) => body.state === 'cancelled');
    await order(member, '/network-services', service);
  });

  it('lets exactly one of concurrent orders racing for the last open order through', async () => {
    const member = await customer('race');
    const first = await order(member, '/connections', waitingOrder(member));
    await reaches(member, `/connections/${first.id}`, waitingForCrossConnect);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => call('POST', '/connections', member.token, waitingOrder(member))),
    );
    const won = answers.filter((answer) => answer.status === 201);
    for (const answer of won) ordered.push([`/connections/${answer.body.id}`, member.token]);
    assert.equal(won.length, 1, answers.map((answer) => answer.status).join(' '));
    for (const answer of answers.filter((a) => a.status !== 201))
      assertQuotaRefusal(
        answer,
        { name: 'open_orders', setting: 'QUOTA_OPEN_ORDERS', limit: 2, held: 2 },
        { root: member.id, orderedFor: member.id },
      );
    const [held] = await stack().db.sequelize.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM connections WHERE managing_account = :id',
      { replacements: { id: member.id }, type: QueryTypes.SELECT },
    );
    assert.equal(Number(held.n), 2);
  });
  /** Creates at `path` as `who`, expecting a 201; answers the id. */
  async function create(who: Customer, path: string, body: unknown): Promise<string> {
    const created = await call('POST', path, who.token, body);
    assert.equal(created.status, 201, created.text);
    return created.body.id as string;
  }

  /** Asserts that creating at `path` is refused for `quota`, writing no row of `table` and no event. */
  async function assertRefusedRegistration(
    who: Customer,
    path: string,
    body: unknown,
    stored: { table: string; eventType: string },
    quota: { name: string; setting: string; limit: number; held: number },
    root: Customer,
  ) {
    const before = await registered(stored.table, stored.eventType);
    const refused = await call('POST', path, who.token, body);
    assertQuotaRefusal(refused, quota, { root: root.id, orderedFor: who.id });
    assert.deepEqual(
      await registered(stored.table, stored.eventType),
      before,
      `${path}: nothing was written`,
    );
  }

  it('counts the contacts of a whole tree, refuses one beyond them and takes it once another is deleted', async () => {
    // Each customer comes with two contacts: the tree of the reseller and its sub-account holds four.
    const reseller = await customer('contacts');
    const sub = await customer('contacts-sub', reseller.id);
    const contact = (who: Customer, name: string) => ({
      managing_account: who.id,
      consuming_account: who.id,
      name,
      email: `${name.toLowerCase()}@quota.example`,
    });
    const fifth = await create(reseller, '/contacts', contact(reseller, 'Fifth'));
    const stored = { table: 'contacts', eventType: 'contact.created' };
    const quota = { name: 'contacts', setting: 'QUOTA_CONTACTS', limit: 5, held: 5 };
    await assertRefusedRegistration(sub, '/contacts', contact(sub, 'Sixth'), stored, quota, reseller);
    await assertRefusedRegistration(
      reseller,
      '/contacts',
      contact(reseller, 'Sixth'),
      stored,
      quota,
      reseller,
    );

    assert.equal((await call('DELETE', `/contacts/${fifth}`, reseller.token)).status, 200);
    await create(sub, '/contacts', contact(sub, 'Sixth'));
  });

  it('refuses MAC addresses beyond the quota, and takes one again once another is deleted', async () => {
    const member = await customer('macs');
    const mac = (address: string) => ({ managing_account: member.id, consuming_account: member.id, address });
    const first = await create(member, '/macs', mac('02:00:5e:10:00:01'));
    await create(member, '/macs', mac('02:00:5e:10:00:02'));
    await assertRefusedRegistration(
      member,
      '/macs',
      mac('02:00:5e:10:00:03'),
      { table: 'macs', eventType: 'mac.created' },
      { name: 'macs', setting: 'QUOTA_MACS', limit: 2, held: 2 },
      member,
    );

    assert.equal((await call('DELETE', `/macs/${first}`, member.token)).status, 200);
    await create(member, '/macs', mac('02:00:5e:10:00:03'));
  });

  it('counts the IP addresses a customer registers, not those the exchange allocated to it', async () => {
    const member = await customer('ips');
    // An address of the exchange LAN allocated to the member, as a config of its would hold it.
    await stack().db.sequelize.query(
      `INSERT INTO ip_addresses (id, managing_account, consuming_account, version, address, prefix_length,
         network_service, created_at, updated_at)
       VALUES (:id, :account, :account, 6, '2001:db8:1::ffee', 64, 'ns-exchange-lan-fra', NOW(3), NOW(3))`,
      { replacements: { id: `ip-quota-allocated-${suffix}`, account: member.id } },
    );
    const ip = (address: string) => ({
      managing_account: member.id,
      consuming_account: member.id,
      version: 6,
      address,
      prefix_length: 128,
    });
    const own = await create(member, '/ips', ip('2001:db8:ffff:10::1'));
    await assertRefusedRegistration(
      member,
      '/ips',
      ip('2001:db8:ffff:10::2'),
      { table: 'ip_addresses', eventType: 'ip.created' },
      { name: 'ips', setting: 'QUOTA_IPS', limit: 1, held: 1 },
      member,
    );
    // IX-API deletes no IP address: a customer at its quota changes a registration instead.
    const changed = await call('PATCH', `/ips/${own}`, member.token, { address: '2001:db8:ffff:10::2' });
    assert.equal(changed.status, 200, changed.text);
  });

  it('refuses member joining rules beyond the quota, and takes one again once another is deleted', async () => {
    const owner = await customer('rules');
    const members = [await customer('rules-a', owner.id), await customer('rules-b', owner.id)];
    const service = `ns-quota-rules-${suffix}`;
    await stack().db.sequelize.query(
      `INSERT INTO network_services (id, type, name, display_name, product_offering, metro_area_network,
         managing_account, consuming_account, billing_account, state, status, external_ref, purchase_order,
         contract_ref, nsc_required_contact_roles, public, created_at, updated_at)
       VALUES (:id, 'mp2mp_vc', :id, 'Quota VLAN', 'po-mp2mp-vc-fra', 'man-fra', :owner, :owner, :owner,
         'production', '[]', NULL, '', NULL, '[]', false, NOW(3), NOW(3))`,
      { replacements: { id: service, owner: owner.id } },
    );
    const allow = (member: Customer) => ({
      type: 'allow',
      network_service: service,
      consuming_account: member.id,
      managing_account: owner.id,
    });
    const first = await create(owner, '/member-joining-rules', allow(members[0]));
    await assertRefusedRegistration(
      owner,
      '/member-joining-rules',
      allow(members[1]),
      { table: 'member_joining_rules', eventType: 'member_joining_rule.created' },
      { name: 'member_joining_rules', setting: 'QUOTA_MEMBER_JOINING_RULES', limit: 1, held: 1 },
      owner,
    );

    assert.equal((await call('DELETE', `/member-joining-rules/${first}`, owner.token)).status, 200);
    await create(owner, '/member-joining-rules', allow(members[1]));
  });
});
