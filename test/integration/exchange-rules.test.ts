import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { settleConnections } from '../support/connections';
import { configOrder, liveConnection, reaches, SPREE } from '../support/exchange-lan';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import { connectionFor, CUSTOMERS, endsNow, serviceOrder } from '../support/virtual-circuits';
import { eventually } from '../support/wait';

/**
 * The exchange's rules against a member who tries its luck: nothing is ordered for, consumed by or
 * billed to an account the exchange has not on-boarded, an account that still pays for something
 * (or consumes it) cannot slip away by being deleted, and a MAC address in use on a LAN stays with
 * the member using it.
 */

const address = {
  country: 'DE',
  locality: 'Berlin',
  postal_code: '10115',
  street_address: 'Invalidenstraße 1',
};
const billing = { name: 'Spree Sub GmbH', address, vat_number: 'DE123456789' };

const count = async (table: string, column: string, value: string) => {
  const [row] = await stack().db.sequelize.query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = :value`,
    { replacements: { value }, type: QueryTypes.SELECT },
  );
  return Number(row.n);
};

/** A 400 validation problem naming each of `names`, with `properties`. */
function assertNames(response: HttpResponse, names: readonly string[]): void {
  assert.equal(response.status, 400, response.text);
  const properties = (response.body.properties ?? []) as Array<{ name: string; reason: string }>;
  for (const name of names)
    assert.ok(
      properties.some((property) => property.name === name && /not on-boarded/.test(property.reason)),
      `${name} named: ${response.text}`,
    );
}

describe('the exchange’s rules against a member trying its luck', function () {
  this.timeout(120_000);
  after(() => settleConnections());
  let spree: string;

  before(async () => {
    spree = (await login('customer', 0)).accessToken;
  });

  const subAccount = async (name: string) => {
    const created = await request('POST', '/accounts', {
      token: spree,
      body: { name: `${name} ${randomBytes(3).toString('hex')}`, address, billing_information: billing },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.state, 'requested');
    return created.body.id as string;
  };

  const connectionOrder = (accounts: Record<string, string>) => ({
    managing_account: SPREE,
    consuming_account: SPREE,
    billing_account: SPREE,
    ...accounts,
    role_assignments: ['ra-spree-networks-implementation', 'ra-spree-networks-noc'],
    product_offering: 'po-connection-fra-10g',
    mode: 'standalone',
    port_quantity: 1,
    subscriber_side_demarcs: ['cage 2, panel 1, port 1'],
  });

  it('orders nothing for, to or billed to an account not yet on-boarded, and stores nothing', async () => {
    const sub = await subAccount('Not Onboarded');
    const status = await eventually('the sub-account saying what it lacks', async () => {
      const read = await request('GET', `/accounts/${sub}`, { token: spree });
      const entries = read.body.status as Array<{ tag: string }>;
      return entries.length ? entries : undefined;
    });
    assert.deepEqual(
      status.map((entry) => entry.tag),
      ['contact_role_missing'],
    );
    for (const property of ['managing_account', 'consuming_account', 'billing_account'] as const) {
      const connection = await request('POST', '/connections', {
        token: spree,
        body: connectionOrder({ [property]: sub }),
      });
      assertNames(connection, [property]);
      const service = await request('POST', '/network-services', {
        token: spree,
        body: {
          ...serviceOrder('spree', 'mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra' }),
          [property]: sub,
        },
      });
      assertNames(service, [property]);
    }
    const both = await request('POST', '/connections', {
      token: spree,
      body: connectionOrder({ consuming_account: sub, billing_account: sub }),
    });
    assertNames(both, ['consuming_account', 'billing_account']);
    for (const column of ['managing_account', 'consuming_account', 'billing_account']) {
      assert.equal(await count('connections', column, sub), 0, `no connection names it as ${column}`);
      assert.equal(await count('network_services', column, sub), 0, `no service names it as ${column}`);
    }
  });

  it('keeps an account that consumes and pays for a connection until the connection is archived', async () => {
    const sub = await subAccount('Onboarded');
    const contact = await request('POST', '/contacts', {
      token: spree,
      body: { managing_account: SPREE, consuming_account: sub, name: 'Legal', email: 'legal@sub.example' },
    });
    assert.equal(contact.status, 201, contact.text);
    const legal = await request('POST', '/role-assignments', {
      token: spree,
      body: { contact: contact.body.id, role: 'role-legal' },
    });
    assert.equal(legal.status, 201, legal.text);
    await reaches(spree, `/accounts/${sub}`, 'production');

    const ordered = await request('POST', '/connections', {
      token: spree,
      body: connectionOrder({ consuming_account: sub, billing_account: sub }),
    });
    assert.equal(ordered.status, 201, ordered.text);
    const connection = ordered.body.id as string;
    await reaches(spree, `/connections/${connection}`, 'production');
    const going = await request('DELETE', `/connections/${connection}`, { token: spree });
    assert.equal(going.status, 202, going.text);
    const ended = await endsNow(spree, `/connections/${connection}`, provisioningWorkflowId(connection));
    assert.ok(String(ended.charged_until) >= String(ended.decommission_at), JSON.stringify(ended));

    // Decommissioned, the connection is still charged: its consumer and payer stay.
    const refused = await request('DELETE', `/accounts/${sub}`, { token: spree });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.type as string, /unable-to-fulfill/);
    const conflicts = refused.body.conflicts as Array<{
      remote_resource_id: string;
      resource_property: string;
    }>;
    assert.deepEqual(
      conflicts
        .filter((conflict) => conflict.remote_resource_id === connection)
        .map((conflict) => conflict.resource_property)
        .sort(),
      ['billing_account', 'consuming_account'],
      refused.text,
    );
    assert.equal((await request('GET', `/accounts/${sub}`, { token: spree })).status, 200);
    const read = await request('GET', `/connections/${connection}`, { token: spree });
    assert.equal(
      (await request('GET', `/accounts/${String(read.body.billing_account)}`, { token: spree })).status,
      200,
    );

    // Archived, it holds the account no longer.
    const archived = await request('DELETE', `/connections/${connection}`, { token: spree });
    assert.equal(archived.body.state, 'archived', archived.text);
    const deleted = await request('DELETE', `/accounts/${sub}`, { token: spree });
    assert.equal(deleted.status, 200, deleted.text);
  });

  it('keeps a MAC address in use on the exchange LAN to the member using it', async () => {
    const thames = (await login('customer', 1)).accessToken;
    const address = `02:5e:${randomBytes(4)
      .toString('hex')
      .replace(/(..)(?=.)/g, '$1:')}`;
    const registered = async (token: string, account: string) => {
      const mac = await request('POST', '/macs', {
        token,
        body: { managing_account: account, consuming_account: account, address },
      });
      // Registering says nothing of who else registered the address.
      assert.equal(mac.status, 201, mac.text);
      return mac.body.id as string;
    };
    const spreeMac = await registered(spree, SPREE);
    const spreeConfig = await request('POST', '/network-service-configs', {
      token: spree,
      body: configOrder(await liveConnection(spree), { macs: [spreeMac] }),
    });
    assert.equal(spreeConfig.status, 201, spreeConfig.text);

    const THAMES = CUSTOMERS.thames.account;
    const thamesMac = await registered(thames, THAMES);
    const theirs = {
      ...configOrder(await connectionFor(thames, 'thames'), {
        managing_account: THAMES,
        consuming_account: THAMES,
        billing_account: THAMES,
        role_assignments: ['ra-thames-cloud-noc', 'ra-thames-cloud-peering'],
        asns: [64496],
      }),
    };
    const refused = await request('POST', '/network-service-configs', {
      token: thames,
      body: { ...theirs, macs: [thamesMac] },
    });
    assert.equal(refused.status, 400, refused.text);
    const properties = refused.body.properties as Array<{ name: string; reason: string }>;
    assert.ok(
      properties.some((property) => property.name === 'macs' && property.reason.includes(address)),
      refused.text,
    );
    for (const secret of [SPREE, 'Spree', String(spreeConfig.body.id), spreeMac])
      assert.ok(!refused.text.includes(secret), `the refusal names ${secret}: ${refused.text}`);

    // Nor can a config of Thames's take it on by a change.
    const own = await request('POST', '/network-service-configs', { token: thames, body: theirs });
    assert.equal(own.status, 201, own.text);
    const changed = await request('PATCH', `/network-service-configs/${String(own.body.id)}`, {
      token: thames,
      body: { type: 'exchange_lan', macs: [thamesMac] },
    });
    assert.equal(changed.status, 400, changed.text);
    assert.ok(
      (changed.body.properties as Array<{ name: string; reason: string }>).some(
        (property) => property.name === 'macs' && property.reason.includes(address),
      ),
      changed.text,
    );
    assert.deepEqual(
      (await request('GET', `/network-service-configs/${String(own.body.id)}`, { token: thames })).body.macs,
      [],
    );
  });

  it('gives a MAC address to one member only, also when two members order with it at once', async () => {
    const thames = (await login('customer', 1)).accessToken;
    const THAMES = CUSTOMERS.thames.account;
    const [spreeConnection, thamesConnection] = [
      await liveConnection(spree),
      await connectionFor(thames, 'thames'),
    ];
    for (let round = 0; round < 4; round += 1) {
      const address = `02:5f:${randomBytes(4)
        .toString('hex')
        .replace(/(..)(?=.)/g, '$1:')}`;
      const macOf = async (token: string, account: string) =>
        (
          await request('POST', '/macs', {
            token,
            body: { managing_account: account, consuming_account: account, address },
          })
        ).body.id as string;
      const [spreeMac, thamesMac] = [await macOf(spree, SPREE), await macOf(thames, THAMES)];
      const answers = await Promise.all([
        request('POST', '/network-service-configs', {
          token: spree,
          body: configOrder(spreeConnection, { macs: [spreeMac] }),
        }),
        request('POST', '/network-service-configs', {
          token: thames,
          body: configOrder(thamesConnection, {
            managing_account: THAMES,
            consuming_account: THAMES,
            billing_account: THAMES,
            role_assignments: ['ra-thames-cloud-noc', 'ra-thames-cloud-peering'],
            asns: [64496],
            macs: [thamesMac],
          }),
        }),
      ]);
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [201, 400], answers.map((answer) => answer.text).join('\n'));
      const refused = answers.find((answer) => answer.status === 400)!;
      assert.ok(
        (refused.body.properties as Array<{ name: string; reason: string }>).some(
          (property) => property.name === 'macs' && property.reason.includes(address),
        ),
        refused.text,
      );
    }
  });

  it('gives no discoverable account a name that reads like another discoverable account’s', async () => {
    const named = (name: string, discoverable: boolean) =>
      request('POST', '/accounts', {
        token: spree,
        body: { name, address, billing_information: billing, discoverable },
      });
    const refusedNaming = (response: HttpResponse, property: string) => {
      assert.equal(response.status, 400, response.text);
      assert.match(String(response.body.type), /validation-error/, response.text);
      assert.deepEqual(
        (response.body.properties as Array<{ name: string }>).map((p) => p.name),
        [property],
        response.text,
      );
      for (const secret of ['acc-thames-cloud', 'acc-demo-ix', 'acc-spree-networks'])
        assert.ok(!response.text.includes(secret), `the refusal names ${secret}: ${response.text}`);
    };
    const before = await count('accounts', 'managing_account', SPREE);
    // The same name, and names that pass for it: other case and spacing, a Cyrillic "о",
    // full-width letters, a capital I for an l, a zero-width space.
    for (const name of [
      'Thames Cloud',
      'THAMES  CLOUD',
      'Demо-IX',
      'ＴＨＡＭＥＳ Cloud',
      'Thames CIoud',
      'Th\u200bames Cloud',
      'Spree Netwοrks',
    ])
      refusedNaming(await named(name, true), 'name');
    assert.equal(await count('accounts', 'managing_account', SPREE), before, 'nothing was stored');

    // An account nobody else sees may be called anything; it becomes discoverable under a name
    // of its own only.
    const hidden = await named('Thames Cloud', false);
    assert.equal(hidden.status, 201, hidden.text);
    const shown = await request('PATCH', `/accounts/${String(hidden.body.id)}`, {
      token: spree,
      body: { discoverable: true },
    });
    refusedNaming(shown, 'discoverable');
    const own = `Spree Labs ${randomBytes(3).toString('hex')}`;
    const renamed = await request('PATCH', `/accounts/${String(hidden.body.id)}`, {
      token: spree,
      body: { name: own, discoverable: true },
    });
    // (Changes of an account still being on-boarded are accepted for its on-boarding: 202.)
    assert.equal(renamed.status, 202, renamed.text);
    // Its own name in another case is still its own; another's is not.
    const recased = await request('PATCH', `/accounts/${String(hidden.body.id)}`, {
      token: spree,
      body: { name: own.toUpperCase() },
    });
    assert.equal(recased.status, 202, recased.text);
    refusedNaming(
      await request('PATCH', `/accounts/${String(hidden.body.id)}`, {
        token: spree,
        body: { name: 'Transit  Partners' },
      }),
      'name',
    );
    refusedNaming(await named(own.toLowerCase(), true), 'name');
  });
});
