import assert from 'node:assert/strict';
import { login, request } from '../support/http';
import { stack } from '../support/stack';

const PUBLIC_VIEW = ['id', 'metro_area_network_presence', 'name'];

/** An account nobody of the demo acts for, and not discoverable. */
const HIDDEN = 'acc-visibility-hidden';

describe('account visibility and redaction', () => {
  before(async () => {
    await stack().db.accounts.importAccount({
      id: HIDDEN,
      name: 'Hidden Networks',
      address: { country: 'DE', locality: 'Hamburg', postal_code: '20095', street_address: 'Hafen 1' },
    });
  });

  it('shows a reseller itself and its sub-account in full, discoverable accounts redacted, others not at all', async () => {
    const { accessToken } = await login('reseller');
    const response = await request('GET', '/accounts', { token: accessToken });
    assert.equal(response.status, 200);
    const byId = new Map<string, Record<string, unknown>>(
      response.body.map((a: { id: string }) => [a.id, a]),
    );
    assert.equal(byId.get('acc-transit-partners')?.legal_name, 'Transit Partners B.V.');
    assert.equal(byId.get('acc-petit-reseau')?.managing_account, 'acc-transit-partners');
    for (const discoverable of ['acc-demo-ix', 'acc-spree-networks', 'acc-thames-cloud']) {
      assert.deepEqual(Object.keys(byId.get(discoverable) ?? {}).sort(), PUBLIC_VIEW, discoverable);
    }
    assert.equal(byId.has(HIDDEN), false, 'not discoverable, not managed: invisible');
  });

  it('answers 404 for an invisible account and the public view for a discoverable one', async () => {
    const { accessToken } = await login('customer', 0);
    for (const hidden of [HIDDEN, 'acc-petit-reseau']) {
      const response = await request('GET', `/accounts/${hidden}`, { token: accessToken });
      assert.equal(response.status, 404, hidden);
    }
    const reseller = await request('GET', '/accounts/acc-transit-partners', { token: accessToken });
    assert.equal(reseller.status, 200);
    assert.deepEqual(Object.keys(reseller.body).sort(), PUBLIC_VIEW);
    const own = await request('GET', '/accounts/acc-spree-networks', { token: accessToken });
    assert.equal(own.body.legal_name, 'Spree Networks GmbH');
  });

  it('never matches hidden values with a filter on a sensitive property, nor counts invisible accounts', async () => {
    const { sequelize } = stack().db;
    await sequelize.query("UPDATE accounts SET external_ref = 'ext-demo-ix' WHERE id = 'acc-demo-ix'");
    try {
      const customer = await login('customer', 0);
      const leaked = await request('GET', '/accounts?external_ref=ext-demo-ix', {
        token: customer.accessToken,
      });
      assert.deepEqual(leaked.body, []);
      const operator = await login('operator');
      const own = await request('GET', '/accounts?external_ref=ext-demo-ix', { token: operator.accessToken });
      assert.deepEqual(
        own.body.map((a: { id: string }) => a.id),
        ['acc-demo-ix'],
      );
      const all = await request('GET', '/accounts', { token: customer.accessToken });
      const paged = await request('GET', '/accounts?page_limit=1', { token: customer.accessToken });
      assert.equal(Number(paged.headers.get('x-pagination-items')), all.body.length);
      const byIds = await request('GET', `/accounts?id=${HIDDEN},acc-spree-networks`, {
        token: customer.accessToken,
      });
      assert.deepEqual(
        byIds.body.map((a: { id: string }) => a.id),
        ['acc-spree-networks'],
      );
    } finally {
      await sequelize.query("UPDATE accounts SET external_ref = NULL WHERE id = 'acc-demo-ix'");
    }
  });

  it("answers the Terraform provider's credential check with an empty list", async () => {
    const { accessToken } = await login('customer', 1);
    const response = await request('GET', '/accounts?external_ref=tf-check-8f3a2c', { token: accessToken });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, []);
  });

  it('shows contacts and role assignments of the accounts the caller acts for, and nothing else', async () => {
    const customer = await login('customer', 0);
    const own = await request('GET', '/contacts', { token: customer.accessToken });
    assert.equal(own.status, 200);
    assert.ok(own.body.length > 0);
    assert.ok(
      own.body.every((c: { consuming_account: string }) => c.consuming_account === 'acc-spree-networks'),
    );
    const foreign = await request('GET', '/contacts/con-thames-cloud-legal', { token: customer.accessToken });
    assert.equal(foreign.status, 404);
    const filtered = await request('GET', '/contacts?consuming_account=acc-thames-cloud', {
      token: customer.accessToken,
    });
    assert.deepEqual(filtered.body, []);

    const reseller = await login('reseller');
    const managed = await request('GET', '/contacts', { token: reseller.accessToken });
    const consumers = new Set(managed.body.map((c: { consuming_account: string }) => c.consuming_account));
    assert.ok(consumers.has('acc-petit-reseau') && consumers.has('acc-transit-partners'));
    // Every contact shown belongs to an account the reseller acts for (one it sees in full).
    const accounts = await request('GET', '/accounts', { token: reseller.accessToken });
    const actingFor = new Set(
      accounts.body.filter((a: object) => 'address' in a).map((a: { id: string }) => a.id),
    );
    assert.ok(!actingFor.has('acc-thames-cloud'));
    for (const consumer of consumers) assert.ok(actingFor.has(consumer), String(consumer));
    const subContact = await request('GET', '/contacts/con-petit-reseau-legal', {
      token: reseller.accessToken,
    });
    assert.equal(subContact.status, 200);

    const assignments = await request('GET', '/role-assignments', { token: customer.accessToken });
    const visibleContacts = new Set(own.body.map((c: { id: string }) => c.id));
    assert.ok(assignments.body.length > 0);
    assert.ok(assignments.body.every((a: { contact: string }) => visibleContacts.has(a.contact)));
    const foreignAssignment = await request('GET', '/role-assignments/ra-thames-cloud-legal', {
      token: customer.accessToken,
    });
    assert.equal(foreignAssignment.status, 404);
  });

  it("keeps the exchange's spare ports to the exchange", async () => {
    const customer = await login('customer', 0);
    const ports = await request('GET', '/ports', { token: customer.accessToken });
    assert.deepEqual(ports.body, []);
    const operator = await login('operator');
    const own = await request('GET', '/ports?page_limit=1', { token: operator.accessToken });
    assert.equal(own.status, 206);
    const portId = own.body[0].id as string;
    assert.equal((await request('GET', `/ports/${portId}`, { token: customer.accessToken })).status, 404);
  });
});
