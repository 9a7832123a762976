import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import type { ApiService } from '../../api/server';
import { startApi } from '../../api/server';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { stack } from '../support/stack';

const SPREE = 'acc-spree-networks';

const ids = (response: HttpResponse) => (response.body as Array<{ id: string }>).map((item) => item.id);
const total = (response: HttpResponse) => Number(response.headers.get('x-pagination-items'));

/**
 * Lists keep what they computed of tables that did not change since (a filtered collection's total,
 * where a deep page starts), and reads by id the resource they read: each test reads through one API process and changes the data through
 * another process with its own database connections, or through plain SQL, and the next read shows
 * the change.
 */
describe('reads that keep what they computed while their tables stay the same', () => {
  let token: string;
  let reseller: string;
  let replica: ApiService;
  let replicaDb: Database;

  before(async () => {
    token = (await login('customer', 0)).accessToken;
    reseller = (await login('reseller', 0)).accessToken;
    const { config, logger } = stack();
    replicaDb = openDatabase({
      url: config.databaseUrl,
      apiSecretHashKey: config.apiSecretHashKey,
      quotas: config.quotas,
    });
    replica = await startApi({ config, logger, db: replicaDb, port: 0, metricsPort: null });
  });

  after(async () => {
    await replica?.stop();
    await replicaDb?.close();
  });

  /** A write through the other API process. */
  const onReplica = (method: string, path: string, body?: unknown) =>
    request(method, path, { token, body, baseUrl: replica.url });

  const sql = (statement: string, replacements: Record<string, unknown> = {}) =>
    replicaDb.sequelize.query(statement, { replacements });

  /** `count` MACs with the external reference `tag`, registered through the other process. */
  async function registerMacs(tag: string, count: number): Promise<string[]> {
    const octets = [2, 3].map(() =>
      Math.floor(Math.random() * 256)
        .toString(16)
        .padStart(2, '0'),
    );
    const created: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const response = await onReplica('POST', '/macs', {
        managing_account: SPREE,
        consuming_account: SPREE,
        address: `02:4b:${octets.join(':')}:00:${index.toString(16).padStart(2, '0')}`,
        external_ref: tag,
      });
      assert.equal(response.status, 201, response.text);
      created.push(response.body.id as string);
    }
    return created;
  }

  it('answers the exact total of a filtered list after each insert, change and delete made elsewhere', async () => {
    const tag = `kept-total-${Date.now().toString(16)}`;
    const page = () => request('GET', `/macs?external_ref=${tag}&page_limit=2`, { token });
    for (let read = 0; read < 2; read += 1) assert.equal(total(await page()), 0);

    const [first, second, third] = await registerMacs(tag, 3);
    assert.equal(total(await page()), 3);
    assert.equal(total(await page()), 3);

    assert.equal((await onReplica('DELETE', `/macs/${second}`)).status, 200);
    const afterDelete = await page();
    assert.equal(total(afterDelete), 2);
    assert.deepEqual(ids(afterDelete), [first, third].sort());

    // A change of the filtered column, made by SQL outside any API process.
    await sql('UPDATE macs SET external_ref = :other WHERE id = :id', { other: `${tag}-moved`, id: third });
    const afterChange = await page();
    assert.equal(total(afterChange), 1);
    assert.deepEqual(ids(afterChange), [first]);
    assert.equal(afterChange.headers.get('x-pagination-next'), '');
  });

  it('reads a resource by id again once it changed elsewhere, and not found once it went', async () => {
    const tag = `kept-one-${Date.now().toString(16)}`;
    const [mac] = await registerMacs(tag, 1);
    const read = () => request('GET', `/macs/${mac}`, { token });
    for (let time = 0; time < 2; time += 1) assert.equal((await read()).body.external_ref, tag);

    await sql('UPDATE macs SET external_ref = :changed WHERE id = :mac', { changed: `${tag}-sql`, mac });
    assert.equal((await read()).body.external_ref, `${tag}-sql`);
    assert.equal((await onReplica('DELETE', `/macs/${mac}`)).status, 200);
    assert.equal((await read()).status, 404);
  });

  it('serves a deep page by offset as a fresh count would, also after a row lands ahead of it', async () => {
    const tag = `kept-pages-${Date.now().toString(16)}`;
    const created = (await registerMacs(tag, 7)).sort();
    const pageAt = (offset: number) =>
      request('GET', `/macs?external_ref=${tag}&page_limit=2&page_offset=${offset}`, { token });
    // Reading each page by offset shows the next page where it starts; reading them again seeks there.
    for (let round = 0; round < 2; round += 1)
      for (const offset of [0, 2, 4, 6]) {
        const response = await pageAt(offset);
        assert.equal(response.status, 206, response.text);
        assert.deepEqual(
          ids(response),
          created.slice(offset, offset + 2),
          `round ${round}, offset ${offset}`,
        );
        assert.equal(total(response), 7);
      }

    // A row whose key sorts before every other: each page by offset moves one item along.
    const ahead = 'mac-0000000000000000';
    await sql(
      `INSERT INTO macs (id, managing_account, consuming_account, address, external_ref, created_at, updated_at)
       VALUES (:ahead, :account, :account, '02:4b:ff:00:00:ff', :tag, NOW(3), NOW(3))`,
      { ahead, account: SPREE, tag },
    );
    try {
      const moved = [ahead, ...created];
      for (const offset of [4, 2, 6, 0]) {
        const response = await pageAt(offset);
        assert.deepEqual(ids(response), moved.slice(offset, offset + 2), `offset ${offset} after the insert`);
        assert.equal(total(response), 8);
      }
    } finally {
      await sql('DELETE FROM macs WHERE id = :ahead', { ahead });
    }
    assert.deepEqual(ids(await pageAt(4)), created.slice(4, 6));
  });

  it('shows a page it keeps to each caller as that caller sees it, and changed once it changed', async () => {
    // An account the reseller manages and the customer may only discover: whole for the one, its
    // public form for the other, on the same page.
    const suffix = Date.now().toString(16);
    const managed = `acc-kept-view-${suffix}`;
    await sql(
      `INSERT INTO accounts (id, name, managing_account, discoverable, external_ref, address,
         metro_area_network_presence, state, status, created_at, updated_at)
       VALUES (:managed, :managed, 'acc-transit-partners', 1, :ref,
         '{"country":"DE","locality":"Berlin","postal_code":"10115","street_address":"Kept 1"}',
         '[]', 'production', '[]', NOW(3), NOW(3))`,
      { managed, ref: `ref-${suffix}` },
    );
    try {
      const shownTo = async (as: string) => {
        const response = await request('GET', '/accounts?page_limit=1000', { token: as });
        assert.equal(response.status, 206, response.text);
        return (response.body as Array<Record<string, unknown>>).find((account) => account.id === managed);
      };
      for (let round = 0; round < 2; round += 1) {
        const [asCustomer, asReseller, asCustomerAgain] = [
          await shownTo(token),
          await shownTo(reseller),
          await shownTo(token),
        ];
        assert.deepEqual(Object.keys(asCustomer ?? {}).sort(), ['id', 'metro_area_network_presence', 'name']);
        assert.deepEqual(asCustomerAgain, asCustomer);
        assert.equal(asReseller?.external_ref, `ref-${suffix}`, `round ${round}`);
        assert.equal(asReseller?.managing_account, 'acc-transit-partners');
      }

      await sql('UPDATE accounts SET name = :name, external_ref = :ref WHERE id = :managed', {
        managed,
        name: `renamed-${suffix}`,
        ref: `changed-${suffix}`,
      });
      assert.equal((await shownTo(token))?.name, `renamed-${suffix}`);
      const asReseller = await shownTo(reseller);
      assert.equal(asReseller?.name, `renamed-${suffix}`);
      assert.equal(asReseller?.external_ref, `changed-${suffix}`);
    } finally {
      await sql('DELETE FROM accounts WHERE id = :managed', { managed });
    }
  });

  it("counts a list's contacts again when the database removes one with the account it serves", async () => {
    // A contact that Transit Partners manages for an account outside its tree, both made by SQL:
    // the account's removal takes the contact with it (the foreign key's cascade fires no trigger
    // on contacts) and leaves what the reseller acts for as it was.
    const suffix = Date.now().toString(16);
    const [outside, contact] = [`acc-kept-${suffix}`, `con-kept-${suffix}`];
    await sql(
      `INSERT INTO accounts (id, name, metro_area_network_presence, state, status, created_at, updated_at)
       VALUES (:outside, :outside, '[]', 'production', '[]', NOW(3), NOW(3))`,
      { outside },
    );
    await sql(
      `INSERT INTO contacts (id, managing_account, consuming_account, name, created_at, updated_at)
       VALUES (:contact, 'acc-transit-partners', :outside, 'Kept', NOW(3), NOW(3))`,
      { contact, outside },
    );
    const contacts = () =>
      request('GET', '/contacts?managing_account=acc-transit-partners&page_limit=100', { token: reseller });
    const before = await contacts();
    assert.ok(ids(before).includes(contact), before.text);
    assert.equal(total(await contacts()), total(before));
    const byId = () => request('GET', `/contacts/${contact}`, { token: reseller });
    for (let time = 0; time < 2; time += 1) assert.equal((await byId()).status, 200);

    await sql('DELETE FROM accounts WHERE id = :outside', { outside });
    const [left] = await replicaDb.sequelize.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM contacts WHERE id = :contact',
      {
        replacements: { contact },
        type: QueryTypes.SELECT,
      },
    );
    assert.equal(Number(left.n), 0, 'the cascade removed the contact');
    const after = await contacts();
    assert.equal(total(after), total(before) - 1, after.text);
    assert.ok(!ids(after).includes(contact));
    assert.equal((await byId()).status, 404);
  });
});
