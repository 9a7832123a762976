import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { parse } from 'yaml';
import { declaredFamily } from '../../api/declared-family';
import { documentWith } from '../../api/families';
import { ajvOf } from '../../api/request-validation';
import { RESOURCE_FAMILIES } from '../../api/registry';
import type { ApiService } from '../../api/server';
import { addVersionedTable, versionedTablesOf } from '../../db/collection-versions';
import type { DeclaredFamily } from '../../domain/declared-family';
import { loadSpec } from '../../spec';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { stack, startSecondApi } from '../support/stack';

/**
 * A family the service does not have, declared whole: an owned toy whose serial number only its
 * owners see, listed by name and colour, under one rule of its own (a red toy needs a serial number).
 */
const TOYS: DeclaredFamily = {
  resource: 'toy',
  collection: 'toys',
  table: 'toys',
  title: { schema: 'Toy', noun: 'toy' },
  properties: {
    name: { schema: { type: 'string', minLength: 1, maxLength: 40 }, required: true, filter: true },
    colour: { schema: { type: 'string', enum: ['green', 'red', 'blue'] }, filter: true },
    serial_number: {
      schema: { type: 'string', maxLength: 40, nullable: true },
      sensitive: true,
      filter: true,
    },
    tags: { schema: { type: 'array', items: { type: 'string', maxLength: 20 }, maxItems: 8 } },
  },
  visibility: 'public',
  problems: (input) =>
    input.colour === 'red' && !input.serial_number
      ? [{ name: 'serial_number', reason: 'a red toy needs a serial number' }]
      : [],
};

/** The table of the toys: a column per property, the two accounts, its times, and a version. */
async function createToysTable() {
  const { sequelize } = stack().db;
  await sequelize.query(
    `CREATE TABLE toys (
       id VARCHAR(80) NOT NULL PRIMARY KEY,
       managing_account VARCHAR(80) NOT NULL,
       consuming_account VARCHAR(80) NOT NULL,
       name VARCHAR(40) NOT NULL,
       colour VARCHAR(8) NOT NULL,
       serial_number VARCHAR(40) NULL,
       tags JSON NOT NULL,
       created_at DATETIME(3) NOT NULL,
       updated_at DATETIME(3) NOT NULL,
       INDEX toys_name (name),
       CONSTRAINT toys_managing FOREIGN KEY (managing_account) REFERENCES accounts (id),
       CONSTRAINT toys_consuming FOREIGN KEY (consuming_account) REFERENCES accounts (id)
     ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
  );
  await addVersionedTable(sequelize, 'toys');
}

const toysVersion = async () => {
  const [row] = await stack().db.sequelize.query<{ version: string | number }>(
    "SELECT SUM(version) AS version FROM collection_versions WHERE table_name = 'toys'",
    { type: QueryTypes.SELECT },
  );
  return Number(row.version);
};

describe('a family declared from a descriptor and a table alone', function () {
  this.timeout(60_000);
  const family = declaredFamily(TOYS);
  const document = documentWith(loadSpec(), [family]);
  const ajv = ajvOf(document);
  const validToy = ajv.compile({ $ref: 'ixapi-openapi#/components/schemas/Toy' });
  let api: ApiService;
  let owner: { token: string; account: string };
  let consumer: { token: string; account: string };
  let outsider: { token: string; account: string };

  const call = (method: string, path: string, token: string, body?: unknown): Promise<HttpResponse> =>
    request(method, path, { baseUrl: api.url, token, body });
  const eventsOf = async (id: string, token = owner.token) => {
    const response = await call('GET', `/events?resource=${id}`, token);
    assert.ok(response.status === 200 || response.status === 206, response.text);
    return response.body as Array<{ type: string; payload: Record<string, unknown> }>;
  };
  const assertToy = (body: unknown) => assert.ok(validToy(body), ajv.errorsText(validToy.errors));

  before(async () => {
    await createToysTable();
    api = await startSecondApi({}, { families: [...RESOURCE_FAMILIES, family] });
    const reseller = await login('reseller');
    const subaccount = await login('subaccount');
    const customer = await login('customer');
    owner = { token: reseller.accessToken, account: reseller.credential.accountId };
    consumer = { token: subaccount.accessToken, account: subaccount.credential.accountId };
    outsider = { token: customer.accessToken, account: customer.credential.accountId };
  });
  after(async () => {
    await api?.stop();
    await stack().db.sequelize.query('DROP TABLE IF EXISTS toys');
    await stack().db.sequelize.query("DELETE FROM collection_versions WHERE table_name = 'toys'");
  });

  it('is documented: the served document has its schemas and its six operations', async () => {
    const response = await fetch(`${api.url}/spec`);
    assert.equal(response.status, 200);
    const served = parse(await response.text()) as typeof document;
    assert.deepEqual(
      [...Object.values(served.paths['/toys']), ...Object.values(served.paths['/toys/{id}'])].map(
        (operation) => operation.operationId,
      ),
      ['toys_list', 'toys_create', 'toys_read', 'toys_update', 'toys_partial_update', 'toys_destroy'],
    );
    assert.equal(
      (served.components.schemas.Toy.properties as Record<string, Record<string, unknown>>).serial_number[
        'x-sensitive'
      ],
      true,
    );
  });

  it('creates, lists, reads, changes and deletes, each write with its event', async () => {
    const created = await call('POST', '/toys', owner.token, {
      managing_account: owner.account,
      consuming_account: consumer.account,
      name: 'kite',
      colour: 'red',
      serial_number: 'K-1',
    });
    assert.equal(created.status, 201, created.text);
    assertToy(created.body);
    const id = created.body.id as string;
    assert.match(id, /^toy-/);
    assert.deepEqual(created.body.tags, [], 'a property left out takes its zero');

    const listed = await call('GET', '/toys?colour=red&name=kite', owner.token);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.map((toy: { id: string }) => toy.id),
      [id],
    );
    assert.deepEqual((await call('GET', '/toys?colour=blue', owner.token)).body, []);

    const patched = await call('PATCH', `/toys/${id}`, owner.token, { tags: ['windy'] });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual({ ...patched.body }, { ...created.body, tags: ['windy'] });

    const replaced = await call('PUT', `/toys/${id}`, owner.token, {
      managing_account: owner.account,
      consuming_account: consumer.account,
      name: 'glider',
    });
    assert.equal(replaced.status, 200, replaced.text);
    assertToy(replaced.body);
    assert.deepEqual(
      { name: replaced.body.name, colour: replaced.body.colour, serial_number: replaced.body.serial_number },
      { name: 'glider', colour: 'green', serial_number: null },
      'a replacement sets what it leaves out to its default',
    );
    const read = await call('GET', `/toys/${id}`, owner.token);
    assert.deepEqual(read.body, replaced.body);

    const deleted = await call('DELETE', `/toys/${id}`, owner.token);
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, replaced.body);
    assert.equal((await call('GET', `/toys/${id}`, owner.token)).status, 404);

    const events = await eventsOf(id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['toy.created', 'toy.changed', 'toy.changed', 'toy.deleted'],
    );
    assert.deepEqual(events[0].payload, { toy: created.body });
    assert.deepEqual(events[3].payload, { toy: replaced.body });
  });

  it('holds writes to the document, to the accounts the caller acts for and to its own rule', async () => {
    const before = await toysVersion();
    const refusals: Array<[unknown, string]> = [
      [{ managing_account: owner.account, consuming_account: owner.account }, 'name'],
      [
        { managing_account: owner.account, consuming_account: owner.account, name: 'x', colour: 'pink' },
        'colour',
      ],
      [
        { managing_account: outsider.account, consuming_account: owner.account, name: 'x' },
        'managing_account',
      ],
      [
        { managing_account: owner.account, consuming_account: owner.account, name: 'x', colour: 'red' },
        'serial_number',
      ],
    ];
    for (const [body, property] of refusals) {
      const response = await call('POST', '/toys', owner.token, body);
      assert.equal(response.status, 400, response.text);
      assert.ok(
        (response.body.properties as Array<{ name: string }>).some((problem) => problem.name === property),
        `${JSON.stringify(body)} is refused for ${property}: ${response.text}`,
      );
    }
    assert.equal(await toysVersion(), before, 'nothing refused was stored');
    assert.deepEqual((await call('GET', '/toys', owner.token)).body, []);
  });

  it('shows a toy whole to its two sides and without its serial number to everybody else', async () => {
    const created = await call('POST', '/toys', owner.token, {
      managing_account: owner.account,
      consuming_account: consumer.account,
      name: 'yo-yo',
      colour: 'blue',
      serial_number: 'Y-7',
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    assert.deepEqual((await call('GET', `/toys/${id}`, consumer.token)).body, created.body);

    const seen = await call('GET', `/toys/${id}`, outsider.token);
    assert.equal(seen.status, 200, seen.text);
    assertToy(seen.body);
    const { serial_number: _hidden, ...publicView } = created.body as Record<string, unknown>;
    assert.deepEqual(seen.body, publicView);
    const listed = await call('GET', '/toys?name=yo-yo', outsider.token);
    assert.deepEqual(listed.body, [seen.body]);
    assert.deepEqual((await call('GET', '/toys?serial_number=Y-7', owner.token)).body, [created.body]);
    assert.deepEqual(
      (await call('GET', '/toys?serial_number=Y-7', outsider.token)).body,
      [],
      'a sensitive property filters only what the caller sees whole',
    );

    // The consuming side reads it and the rest see it, but only the managing side changes it.
    for (const caller of [consumer, outsider]) {
      assert.equal((await call('PATCH', `/toys/${id}`, caller.token, { name: 'mine' })).status, 403);
      assert.equal((await call('DELETE', `/toys/${id}`, caller.token)).status, 403);
    }
    assert.deepEqual(await eventsOf(id, outsider.token), [], 'its events are its two sides’ alone');
    const consumed = await eventsOf(id, consumer.token);
    assert.deepEqual(
      consumed.map((event) => event.payload),
      [{ toy: created.body }],
    );
    assert.equal((await call('DELETE', `/toys/${id}`, owner.token)).status, 200);
  });

  it('keeps its reads by the version of its table, which every write moves', async () => {
    assert.deepEqual(versionedTablesOf('SELECT t.id FROM toys t'), ['toys']);
    const before = await toysVersion();
    const created = await call('POST', '/toys', owner.token, {
      managing_account: owner.account,
      consuming_account: owner.account,
      name: 'top',
    });
    const id = created.body.id as string;
    const first = await call('GET', `/toys/${id}`, owner.token);
    // A change that leaves the version where it was (its trigger taken away for it) is not seen:
    // the read is answered from what was kept at that version.
    const { sequelize } = stack().db;
    await sequelize.query('DROP TRIGGER toys_versioned_update');
    await sequelize.query("UPDATE toys SET name = 'unseen' WHERE id = :id", { replacements: { id } });
    await addVersionedTable(sequelize, 'toys');
    const again = await call('GET', `/toys/${id}`, owner.token);
    assert.deepEqual(again.body, first.body);
    await sequelize.query("UPDATE toys SET name = 'top' WHERE id = :id", { replacements: { id } });
    assert.equal((await call('GET', `/toys/${id}`, owner.token)).body.name, 'top');
    assert.equal((await call('GET', '/toys?name=top', owner.token)).body.length, 1);
    await call('PATCH', `/toys/${id}`, owner.token, { name: 'spinning top' });
    assert.equal((await call('GET', `/toys/${id}`, owner.token)).body.name, 'spinning top');
    assert.equal(
      (await call('GET', '/toys?name=top', owner.token)).body.length,
      0,
      'a kept list is not answered past a change',
    );
    await call('DELETE', `/toys/${id}`, owner.token);
    assert.equal(await toysVersion(), before + 4, 'each write moved the version once');
  });

  it('is refused at start-up while its table has no version, whose reads would be kept past changes', async () => {
    const unversioned = declaredFamily({
      ...TOYS,
      resource: 'kite',
      collection: 'kites',
      table: 'kites',
      title: { schema: 'Kite', noun: 'kite' },
    });
    await assert.rejects(
      startSecondApi({}, { families: [...RESOURCE_FAMILIES, unversioned] }),
      /table kites has no version/,
    );
  });
});
