import assert from 'node:assert/strict';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const address = {
  country: 'FR',
  locality: 'Lyon',
  postal_code: '69002',
  street_address: '12 Quai Saint-Antoine',
};

const PUBLIC_VIEW = ['id', 'metro_area_network_presence', 'name'];

type Token = string;

async function createAccount(token: Token, body: Record<string, unknown>) {
  const response = await request('POST', '/accounts', { token, body: { address, ...body } });
  assert.equal(response.status, 201, response.text);
  return response.body as { id: string; state: string; managing_account: string };
}

async function createContact(token: Token, body: Record<string, unknown>) {
  const response = await request('POST', '/contacts', { token, body });
  assert.equal(response.status, 201, response.text);
  return response.body as { id: string };
}

async function assign(token: Token, contact: string, role: string) {
  const response = await request('POST', '/role-assignments', { token, body: { contact, role } });
  assert.equal(response.status, 201, response.text);
  return response.body as { id: string };
}

function propertyNames(response: { body: { properties?: Array<{ name: string }> } }) {
  return (response.body.properties ?? []).map((p) => p.name);
}

describe('account, contact and role-assignment writes', () => {
  it('lets a reseller on-board a sub-account that an unrelated customer finds only once discoverable', async () => {
    const reseller = (await login('reseller')).accessToken;
    const customer = (await login('customer', 0)).accessToken;
    const account = await createAccount(reseller, {
      name: 'Rhône Fibre',
      legal_name: 'Rhône Fibre SARL',
      billing_information: { name: 'Rhône Fibre SARL', address, vat_number: 'FR40123456789' },
      metro_area_network_presence: ['man-fra'],
    });
    assert.equal(account.state, 'requested');
    assert.equal(account.managing_account, 'acc-transit-partners', 'the caller manages what it creates');

    const waiting = await eventually('the missing legal contact to show in status', async () => {
      const read = await request('GET', `/accounts/${account.id}`, { token: reseller });
      const body = read.body as { state: string; status: Array<{ tag: string }> };
      return body.status.length ? body : undefined;
    });
    assert.equal(waiting.state, 'requested');
    assert.deepEqual(
      waiting.status.map((s) => s.tag),
      ['contact_role_missing'],
    );

    const contact = await createContact(reseller, {
      managing_account: 'acc-transit-partners',
      consuming_account: account.id,
      name: 'Camille Martin',
      email: 'legal@rhone-fibre.example',
      telephone: '+33472000000',
    });
    await assign(reseller, contact.id, 'role-legal');
    const live = await eventually('the sub-account to reach production', async () => {
      const read = await request('GET', `/accounts/${account.id}`, { token: reseller });
      const body = read.body as { state: string; status: unknown[] };
      return body.state === 'production' ? body : undefined;
    });
    assert.deepEqual(live.status, []);

    const hidden = await request('GET', `/accounts/${account.id}`, { token: customer });
    assert.equal(hidden.status, 404);
    const listed = await request('GET', `/accounts?id=${account.id}`, { token: customer });
    assert.deepEqual(listed.body, []);
    const patch = await request('PATCH', `/accounts/${account.id}`, {
      token: reseller,
      body: { discoverable: true },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    assert.equal(patch.status, 202, patch.text);
    assert.equal(patch.body.discoverable, true);
    assert.equal(patch.body.legal_name, 'Rhône Fibre SARL', 'a patch leaves other properties alone');

    const found = await request('GET', `/accounts/${account.id}`, { token: customer });
    assert.equal(found.status, 200);
    assert.deepEqual(Object.keys(found.body).sort(), PUBLIC_VIEW);
    assert.deepEqual(found.body.metro_area_network_presence, ['man-fra']);
    const inList = await request('GET', `/accounts?id=${account.id}`, { token: customer });
    assert.deepEqual(Object.keys(inList.body[0]).sort(), PUBLIC_VIEW);
    for (const [method, body] of [
      ['PATCH', { name: 'Taken over' }],
      ['PUT', { name: 'Taken over', address, metro_area_network_presence: [] }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await request(method, `/accounts/${account.id}`, { token: customer, body });
      assert.equal(refused.status, 403, `${method}: ${refused.text}`);
      assert.ok(!refused.text.includes('Rhône Fibre SARL'), 'a refusal reveals nothing hidden');
    }
  });

  it('refuses account writes that break the rules, naming the property, and changes nothing', async () => {
    const reseller = (await login('reseller')).accessToken;
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [
        'an account the caller does not act for',
        { name: 'X', managing_account: 'acc-thames-cloud' },
        'managing_account',
      ],
      ['an account that does not exist', { name: 'X', managing_account: 'acc-nowhere' }, 'managing_account'],
      ['no managing account', { name: 'X', managing_account: null }, 'managing_account'],
      ['a lower-case country', { name: 'X', address: { ...address, country: 'fr' } }, 'address.country'],
      [
        'a country ISO 3166-1 does not assign',
        { name: 'X', address: { ...address, country: 'ZZ' } },
        'address.country',
      ],
      [
        'a billing address in no country',
        { name: 'X', billing_information: { name: 'X', address: { ...address, country: 'EU' } } },
        'billing_information.address.country',
      ],
      [
        'an unknown metro area network',
        { name: 'X', metro_area_network_presence: ['man-nowhere'] },
        'metro_area_network_presence.0',
      ],
      [
        'billing information without an address',
        { name: 'X', billing_information: { name: 'X' } },
        'billing_information.address',
      ],
      ['a name that is too long', { name: 'x'.repeat(81) }, 'name'],
    ];
    const before = await request('GET', '/accounts', { token: reseller });
    for (const [what, body, property] of cases) {
      const response = await request('POST', '/accounts', { token: reseller, body: { address, ...body } });
      assert.equal(response.status, 400, `${what}: ${response.text}`);
      assert.ok(propertyNames(response).includes(property), `${what}: ${response.text}`);
    }
    const after = await request('GET', '/accounts', { token: reseller });
    assert.equal(after.body.length, before.body.length);
  });

  it('keeps the hierarchy a tree and lets only the managing side move an account', async () => {
    const reseller = (await login('reseller')).accessToken;
    const child = await createAccount(reseller, { name: 'Child' });
    const grandchild = await createAccount(reseller, { name: 'Grandchild', managing_account: child.id });

    const loop = await request('PATCH', `/accounts/${child.id}`, {
      token: reseller,
      body: { managing_account: grandchild.id },
    });
    assert.equal(loop.status, 400, loop.text);
    assert.deepEqual(propertyNames(loop), ['managing_account']);
    const self = await request('PATCH', `/accounts/${child.id}`, {
      token: reseller,
      body: { managing_account: child.id },
    });
    assert.equal(self.status, 400);

    const own = await request('PATCH', '/accounts/acc-transit-partners', {
      token: reseller,
      body: { managing_account: child.id },
    });
    assert.equal(own.status, 400, 'an account does not pick its own manager');
    const moved = await request('PATCH', `/accounts/${grandchild.id}`, {
      token: reseller,
      body: { managing_account: 'acc-petit-reseau' },
    });
    assert.equal(moved.status, 202, moved.text);
    assert.equal(moved.body.managing_account, 'acc-petit-reseau');
    const sub = (await login('subaccount')).accessToken;
    const seen = await request('GET', `/accounts/${grandchild.id}`, { token: sub });
    assert.equal(seen.status, 200, 'the new manager acts for the moved account');
    assert.equal(seen.body.managing_account, 'acc-petit-reseau');
  });

  it('replaces an account with PUT, clearing what the body leaves out but keeping its manager', async () => {
    const reseller = (await login('reseller')).accessToken;
    const account = await createAccount(reseller, {
      name: 'Before',
      legal_name: 'Before SAS',
      external_ref: 'crm-1',
    });
    const put = await request('PUT', `/accounts/${account.id}`, {
      token: reseller,
      body: { name: 'After', address, metro_area_network_presence: ['man-ams'] },
    });
    assert.equal(put.status, 202, put.text);
    assert.equal(put.body.name, 'After');
    assert.equal(put.body.legal_name, null);
    assert.equal(put.body.external_ref, null);
    assert.equal(put.body.managing_account, 'acc-transit-partners');
    const invalid = await request('PUT', `/accounts/${account.id}`, {
      token: reseller,
      body: { name: 'No address' },
    });
    assert.equal(invalid.status, 400);
    assert.ok(propertyNames(invalid).includes('address'));
  });

  it('deletes an account with its contacts, and refuses while something still refers to it', async () => {
    const { temporal } = stack();
    const reseller = (await login('reseller')).accessToken;
    const parent = await createAccount(reseller, { name: 'Parent' });
    const child = await createAccount(reseller, { name: 'Leaf', managing_account: parent.id });
    const contact = await createContact(reseller, {
      managing_account: child.id,
      consuming_account: child.id,
      name: 'Leaf NOC',
      email: 'noc@leaf.example',
      telephone: '+33100000000',
    });
    const assignment = await assign(reseller, contact.id, 'role-noc');

    const refused = await request('DELETE', `/accounts/${parent.id}`, { token: reseller });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.type, 'https://errors.ix-api.net/v2/unable-to-fulfill.html');
    assert.deepEqual(refused.body.conflicts, [
      {
        resource_type: 'accounts',
        resource_id: parent.id,
        resource_property: 'managing_account',
        remote_resource_type: 'accounts',
        remote_resource_id: child.id,
      },
    ]);

    const deleted = await request('DELETE', `/accounts/${child.id}`, { token: reseller });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.id, child.id);
    for (const path of [
      `/accounts/${child.id}`,
      `/contacts/${contact.id}`,
      `/role-assignments/${assignment.id}`,
    ]) {
      assert.equal((await request('GET', path, { token: reseller })).status, 404, path);
    }
    const handle = temporal.client.workflow.getHandle(`ixapi:account:${child.id}`);
    assert.equal(await handle.result(), 'deleted', 'the waiting on-boarding ends with the account');
    assert.equal((await request('DELETE', `/accounts/${parent.id}`, { token: reseller })).status, 200);

    const self = await request('DELETE', '/accounts/acc-transit-partners', { token: reseller });
    assert.equal(self.status, 403, 'nobody deletes the account they are signed in as');
  });

  it('checks contacts and role assignments against the roles they serve', async () => {
    const reseller = (await login('reseller')).accessToken;
    const account = await createAccount(reseller, { name: 'Contacts Co' });
    const bad = await request('POST', '/contacts', {
      token: reseller,
      body: {
        managing_account: account.id,
        consuming_account: account.id,
        telephone: '0049 40 1234',
        email: 'nope',
      },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(propertyNames(bad).sort(), ['email', 'telephone']);
    const foreign = await request('POST', '/contacts', {
      token: reseller,
      body: { managing_account: account.id, consuming_account: 'acc-spree-networks' },
    });
    assert.deepEqual(propertyNames(foreign), ['consuming_account']);

    const contact = await createContact(reseller, {
      managing_account: account.id,
      consuming_account: account.id,
      name: 'Only A Name',
    });
    const lacking = await request('POST', '/role-assignments', {
      token: reseller,
      body: { contact: contact.id, role: 'role-noc' },
    });
    assert.equal(lacking.status, 400);
    assert.equal(lacking.body.type, 'https://errors.ix-api.net/v2/unable-to-fulfill.html');
    assert.deepEqual(
      lacking.body.conflicts.map((c: { resource_property: string }) => c.resource_property).sort(),
      ['email', 'telephone'],
    );
    const unknownRole = await request('POST', '/role-assignments', {
      token: reseller,
      body: { contact: contact.id, role: 'role-astronaut' },
    });
    assert.deepEqual(propertyNames(unknownRole), ['role']);

    const patched = await request('PATCH', `/contacts/${contact.id}`, {
      token: reseller,
      body: { email: 'legal@contacts.example' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.name, 'Only A Name');
    const legal = await assign(reseller, contact.id, 'role-legal');
    const twice = await request('POST', '/role-assignments', {
      token: reseller,
      body: { contact: contact.id, role: 'role-legal' },
    });
    assert.equal(twice.status, 400);
    assert.equal(twice.body.conflicts[0].remote_resource_id, legal.id);

    const emptied = await request('PATCH', `/contacts/${contact.id}`, {
      token: reseller,
      body: { email: null },
    });
    assert.equal(emptied.status, 400);
    assert.deepEqual(propertyNames(emptied), ['email']);

    await eventually('the account to reach production', async () => {
      const read = await request('GET', `/accounts/${account.id}`, { token: reseller });
      return read.body.state === 'production' ? true : undefined;
    });
    const lastLegal = await request('DELETE', `/role-assignments/${legal.id}`, { token: reseller });
    assert.equal(lastLegal.status, 400, lastLegal.text);
    assert.deepEqual(lastLegal.body.conflicts, [
      {
        resource_type: 'role-assignments',
        resource_id: legal.id,
        resource_property: null,
        remote_resource_type: 'accounts',
        remote_resource_id: account.id,
      },
    ]);
    const contactInUse = await request('DELETE', `/contacts/${contact.id}`, { token: reseller });
    assert.equal(contactInUse.status, 400);

    const second = await createContact(reseller, {
      managing_account: account.id,
      consuming_account: account.id,
      name: 'Second Legal',
      email: 'second@contacts.example',
    });
    await assign(reseller, second.id, 'role-legal');
    const released = await request('DELETE', `/role-assignments/${legal.id}`, { token: reseller });
    assert.equal(released.status, 200, released.text);
    assert.deepEqual(released.body, { id: legal.id, role: 'role-legal', contact: contact.id });
    const gone = await request('DELETE', `/contacts/${contact.id}`, { token: reseller });
    assert.equal(gone.status, 200);
    assert.equal(gone.body.email, 'legal@contacts.example');
  });

  it('shows a contact to its consuming account but lets only the managing side change it', async () => {
    const reseller = (await login('reseller')).accessToken;
    const sub = (await login('subaccount')).accessToken;
    const contact = await createContact(reseller, {
      managing_account: 'acc-transit-partners',
      consuming_account: 'acc-petit-reseau',
      name: 'Shared NOC',
      email: 'noc@shared.example',
      telephone: '+33123456789',
    });
    const seen = await request('GET', `/contacts/${contact.id}`, { token: sub });
    assert.equal(seen.status, 200);
    const change = await request('PATCH', `/contacts/${contact.id}`, {
      token: sub,
      body: { name: 'Mine now' },
    });
    assert.equal(change.status, 403);
    const assignment = await request('POST', '/role-assignments', {
      token: sub,
      body: { contact: contact.id, role: 'role-noc' },
    });
    assert.equal(assignment.status, 400);
    assert.deepEqual(propertyNames(assignment), ['contact']);
    const customer = (await login('customer', 1)).accessToken;
    const invisible = await request('PATCH', `/contacts/${contact.id}`, {
      token: customer,
      body: { name: 'x' },
    });
    assert.equal(invisible.status, 404);
    const nowhere = await request('PATCH', '/contacts/con-does-not-exist', {
      token: customer,
      body: { name: 'x' },
    });
    assert.equal(
      invisible.body.detail.replace(contact.id, 'ID'),
      nowhere.body.detail.replace('con-does-not-exist', 'ID'),
    );
  });

  it('keeps an account that a port bills to, with its billing information', async () => {
    const reseller = (await login('reseller')).accessToken;
    const account = await createAccount(reseller, {
      name: 'Port Holder',
      billing_information: { name: 'Port Holder SAS', address },
    });
    const portId = `port-held-${account.id}`;
    await stack().db.sequelize.query(
      `INSERT INTO ports (id, state, status, connection, managing_account, consuming_account, billing_account,
                          role_assignments, external_ref, purchase_order, contract_ref, operational_state,
                          device, pop, name, media_type, speed, created_at, updated_at)
       SELECT :portId, state, status, NULL, :account, :account, :account, '[]', NULL, '', NULL,
              operational_state, device, pop, CONCAT('held-', name), media_type, speed, NOW(3), NOW(3)
         FROM ports ORDER BY id LIMIT 1`,
      { replacements: { portId, account: account.id } },
    );
    const unbilled = await request('PATCH', `/accounts/${account.id}`, {
      token: reseller,
      body: { billing_information: null },
    });
    assert.equal(unbilled.status, 400, unbilled.text);
    assert.deepEqual(
      unbilled.body.conflicts.map((c: { remote_resource_id: string; resource_property: string }) => [
        c.remote_resource_id,
        c.resource_property,
      ]),
      [[portId, 'billing_account']],
    );
    const refused = await request('DELETE', `/accounts/${account.id}`, { token: reseller });
    assert.equal(refused.status, 400);
    assert.deepEqual(
      refused.body.conflicts.map(
        (c: { remote_resource_type: string; resource_property: string }) =>
          `${c.remote_resource_type}.${c.resource_property}`,
      ),
      ['ports.managing_account', 'ports.consuming_account', 'ports.billing_account'],
    );
    const still = await request('GET', `/accounts/${account.id}`, { token: reseller });
    assert.equal(still.body.billing_information.name, 'Port Holder SAS');
  });

  it('keeps an account that live orders, rules or registrations name, and lets it go once they are archived', async () => {
    const reseller = (await login('reseller')).accessToken;
    const account = await createAccount(reseller, {
      name: 'Circuit Member',
      billing_information: { name: 'Circuit Member SARL', address },
    });
    const sql = stack().db.sequelize;
    const ids = {
      connection: `conn-held-${account.id}`,
      config: `nsc-held-${account.id}`,
      service: `ns-held-${account.id}`,
      rule: `mjr-held-${account.id}`,
    };
    const replacements = { ...ids, account: account.id, owner: 'acc-spree-networks' };
    await sql.query(
      `INSERT INTO connections (id, name, state, status, managing_account, consuming_account, billing_account,
         role_assignments, external_ref, purchase_order, contract_ref, product_offering, pop, device, lag_name,
         mode, lacp_timeout, port_quantity, subscriber_side_demarcs, connecting_party, speed,
         capacity_allocation_limit, created_at, updated_at)
       VALUES (:connection, :connection, 'production', '[]', :owner, :account, :account, '[]', NULL, '', NULL,
         'po-connection-fra-10g', 'pop-fra-1', 'dev-none', NULL, 'standalone', NULL, 1, '[]', NULL, 10000, NULL,
         NOW(3), NOW(3))`,
      { replacements },
    );
    await sql.query(
      `INSERT INTO network_service_configs (id, type, state, status, managing_account, consuming_account,
         billing_account, role_assignments, external_ref, purchase_order, contract_ref, network_service, connection,
         product_offering, vlan_type, outer_vlan, vlan_held, capacity, asns, listed, revision, created_at, updated_at)
       VALUES (:config, 'p2p_vc', 'production', '[]', :owner, :owner, :account, '[]', NULL, '', NULL, :service,
         :connection, NULL, 'dot1q', 3001, false, NULL, '[]', false, 1, NOW(3), NOW(3))`,
      { replacements },
    );
    await sql.query(
      `INSERT INTO network_services (id, type, name, display_name, product_offering, metro_area_network,
         managing_account, consuming_account, billing_account, joining_member_account, state, status,
         external_ref, purchase_order, contract_ref, nsc_required_contact_roles, public, created_at, updated_at)
       VALUES (:service, 'p2p_vc', :service, NULL, 'po-p2p-vc-fra', 'man-fra', :owner, :owner, :owner, :account,
         'production', '[]', NULL, '', NULL, '[]', false, NOW(3), NOW(3))`,
      { replacements },
    );
    await sql.query(
      `INSERT INTO member_joining_rules (id, type, network_service, consuming_account, managing_account,
         external_ref, capacity_min, capacity_max, created_at, updated_at)
       VALUES (:rule, 'allow', :service, :account, :owner, NULL, NULL, NULL, NOW(3), NOW(3))`,
      { replacements },
    );
    const mac = await request('POST', '/macs', {
      token: reseller,
      body: { managing_account: account.id, consuming_account: account.id, address: '02:00:5e:10:00:01' },
    });
    assert.equal(mac.status, 201, mac.text);
    try {
      const refused = await request('DELETE', `/accounts/${account.id}`, { token: reseller });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.body.type, /unable-to-fulfill/);
      const named = (response: typeof refused) =>
        (response.body.conflicts as Array<Record<string, string>>)
          .map((c) => `${c.remote_resource_type} ${c.remote_resource_id} ${c.resource_property}`)
          .sort();
      assert.deepEqual(named(refused), [
        `connections ${ids.connection} billing_account`,
        `connections ${ids.connection} consuming_account`,
        `macs ${mac.body.id} consuming_account`,
        `macs ${mac.body.id} managing_account`,
        `member-joining-rules ${ids.rule} consuming_account`,
        `network-service-configs ${ids.config} billing_account`,
        `network-services ${ids.service} joining_member_account`,
      ]);
      const unbilled = await request('PATCH', `/accounts/${account.id}`, {
        token: reseller,
        body: { billing_information: null },
      });
      assert.equal(unbilled.status, 400, unbilled.text);
      assert.deepEqual(named(unbilled), [
        `connections ${ids.connection} billing_account`,
        `network-service-configs ${ids.config} billing_account`,
      ]);

      // Ended orders may still be charged: they hold the accounts that consume and pay for them
      // until they are archived. The rule and the MAC are given up through the API.
      await sql.query("UPDATE connections SET state = 'decommissioned' WHERE id = :connection", {
        replacements,
      });
      await sql.query("UPDATE network_service_configs SET state = 'cancelled' WHERE id = :config", {
        replacements,
      });
      await sql.query("UPDATE network_services SET state = 'archived' WHERE id = :service", { replacements });
      await sql.query('DELETE FROM member_joining_rules WHERE id = :rule', { replacements });
      const macGone = await request('DELETE', `/macs/${mac.body.id}`, { token: reseller });
      assert.equal(macGone.status, 200, macGone.text);
      const charged = await request('DELETE', `/accounts/${account.id}`, { token: reseller });
      assert.equal(charged.status, 400, charged.text);
      assert.deepEqual(named(charged), [
        `connections ${ids.connection} billing_account`,
        `connections ${ids.connection} consuming_account`,
        `network-service-configs ${ids.config} billing_account`,
      ]);
      await sql.query("UPDATE connections SET state = 'archived' WHERE id = :connection", { replacements });
      await sql.query("UPDATE network_service_configs SET state = 'archived' WHERE id = :config", {
        replacements,
      });
      const deleted = await request('DELETE', `/accounts/${account.id}`, { token: reseller });
      assert.equal(deleted.status, 200, deleted.text);
    } finally {
      await sql.query('DELETE FROM member_joining_rules WHERE id = :rule', { replacements });
      await sql.query('DELETE FROM network_service_configs WHERE id = :config', { replacements });
      await sql.query('DELETE FROM network_services WHERE id = :service', { replacements });
      await sql.query('DELETE FROM connections WHERE id = :connection', { replacements });
    }
  });
});
