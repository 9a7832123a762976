import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { fingerprintOf } from '../../api/idempotency';
import { login, request } from '../support/http';
import { settleConnections } from '../support/connections';
import { stack } from '../support/stack';

const SPREE = 'acc-spree-networks';
const ROLES = ['ra-spree-networks-implementation', 'ra-spree-networks-noc'];

const contact = (name: string) => ({ managing_account: SPREE, consuming_account: SPREE, name });

const connectionOrder = (externalRef: string) => ({
  managing_account: SPREE,
  consuming_account: SPREE,
  billing_account: SPREE,
  role_assignments: ROLES,
  product_offering: 'po-connection-fra-10g',
  mode: 'standalone',
  port_quantity: 1,
  subscriber_side_demarcs: ['cage 9, panel 2, port 1'],
  external_ref: externalRef,
});

async function count(sql: string, replacements: Record<string, unknown>): Promise<number> {
  const [row] = await stack().db.sequelize.query<{ n: number }>(sql, {
    replacements,
    type: QueryTypes.SELECT,
  });
  return Number(row.n);
}

const contactsNamed = (name: string) =>
  count('SELECT COUNT(*) AS n FROM contacts WHERE name = :name', { name });

describe('retries with an Idempotency-Key', function () {
  this.timeout(60_000);
  after(() => settleConnections());
  let token: string;
  before(async () => {
    token = (await login('customer', 0)).accessToken;
  });
  const withKey = (key: string) => ({ 'idempotency-key': key });

  it('carries out a request once and answers its repetition as the first time', async () => {
    const key = randomUUID();
    const name = `Retried ${key}`;
    const first = await request('POST', '/contacts', { token, headers: withKey(key), body: contact(name) });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    // The same body in another key order and layout is the same request.
    const again = await request('POST', '/contacts', {
      token,
      headers: { ...withKey(`"${key}"`), 'content-type': 'application/json' },
      rawBody: JSON.stringify({ name, consuming_account: SPREE, managing_account: SPREE }, null, 2),
    });
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await contactsNamed(name), 1);
    // Without a key, or with another, the same body is a new request.
    const other = await request('POST', '/contacts', {
      token,
      headers: withKey(randomUUID()),
      body: contact(name),
    });
    assert.equal(other.status, 201);
    assert.notEqual(other.body.id, first.body.id);
    assert.equal(await contactsNamed(name), 2);
  });

  it('refuses the key with another request, and changes nothing', async () => {
    const key = randomUUID();
    const name = `Original ${key}`;
    await request('POST', '/contacts', { token, headers: withKey(key), body: contact(name) });
    const changed = await request('POST', '/contacts', {
      token,
      headers: withKey(key),
      body: contact(`Changed ${key}`),
    });
    assert.equal(changed.status, 422);
    assert.equal(changed.body.type, 'https://errors.ix-api.net/v2/idempotency-key-reused.html');
    assert.equal(await contactsNamed(`Changed ${key}`), 0);
    const elsewhere = await request('PATCH', `/contacts/${randomUUID()}`, {
      token,
      headers: withKey(key),
      body: { name },
    });
    assert.equal(elsewhere.status, 422, 'the same key on another path is another request');
  });

  it('keeps keys apart per account', async () => {
    const key = randomUUID();
    const other = (await login('customer', 1)).credential.accountId;
    const otherToken = (await login('customer', 1)).accessToken;
    const mine = await request('POST', '/contacts', {
      token,
      headers: withKey(key),
      body: contact(`Mine ${key}`),
    });
    const theirs = await request('POST', '/contacts', {
      token: otherToken,
      headers: withKey(key),
      body: { managing_account: other, consuming_account: other, name: `Theirs ${key}` },
    });
    assert.equal(mine.status, 201);
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers.get('idempotent-replayed'), null);
  });

  it('orders one connection however many times a timed-out client sends the order at once', async () => {
    const key = randomUUID();
    const externalRef = `idempotent-${key}`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        request('POST', '/connections', { token, headers: withKey(key), body: connectionOrder(externalRef) }),
      ),
    );
    for (const answer of answers) assert.equal(answer.status, 201, answer.text);
    assert.equal(new Set(answers.map((a) => a.body.id as string)).size, 1);
    assert.equal(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true').length, 7);
    const id = answers[0].body.id as string;
    assert.equal(
      await count('SELECT COUNT(*) AS n FROM connections WHERE external_ref = :externalRef', { externalRef }),
      1,
    );
    assert.equal(await count('SELECT COUNT(*) AS n FROM ports WHERE connection = :id', { id }), 1);
    assert.equal(
      await count(
        'SELECT COUNT(*) AS n FROM workflow_outbox WHERE workflow_id = :workflowId AND signal_name IS NULL',
        {
          workflowId: `ixapi:connection:${id}`,
        },
      ),
      1,
    );
  });

  it('repeats the answer of a cancellation instead of archiving on the second DELETE', async () => {
    const key = randomUUID();
    const created = await request('POST', '/contacts', { token, body: contact(`To delete ${key}`) });
    const first = await request('DELETE', `/contacts/${created.body.id}`, { token, headers: withKey(key) });
    assert.equal(first.status, 200);
    const again = await request('DELETE', `/contacts/${created.body.id}`, { token, headers: withKey(key) });
    assert.equal(again.status, 200, 'a repeated delete is answered as the first, not 404');
    assert.deepEqual(again.body, first.body);
    const fresh = await request('DELETE', `/contacts/${created.body.id}`, {
      token,
      headers: withKey(randomUUID()),
    });
    assert.equal(fresh.status, 404);
  });

  it('carries out anew a request whose first attempt was refused, since that changed nothing', async () => {
    const key = randomUUID();
    const name = `Second try ${key}`;
    const refused = await request('POST', '/contacts', {
      token,
      headers: withKey(key),
      body: { ...contact(name), managing_account: 'acc-somebody-else' },
    });
    assert.equal(refused.status, 400);
    const accepted = await request('POST', '/contacts', {
      token,
      headers: withKey(key),
      body: contact(name),
    });
    assert.equal(accepted.status, 201);
    assert.equal(await contactsNamed(name), 1);
  });

  it('refuses a malformed key, naming the header', async () => {
    for (const key of ['', 'x'.repeat(256), 'with space', 'naïve']) {
      const response = await request('POST', '/contacts', {
        token,
        headers: withKey(key),
        body: contact(`Malformed key ${randomUUID()}`),
      });
      assert.equal(response.status, 400, JSON.stringify(key));
      assert.deepEqual(
        (response.body.properties as Array<{ name: string }>).map((p) => p.name),
        ['Idempotency-Key'],
      );
    }
  });

  it('says when the first request with a key was interrupted, and forgets a key after a day', async () => {
    const { sequelize } = stack().db;
    const interrupted = randomUUID();
    const expired = randomUUID();
    const body = contact(`After a crash ${interrupted}`);
    // What a process that died mid-request leaves: a claim whose lease has run out and no answer.
    const base = new URL(stack().baseUrl).pathname;
    for (const [key, lease, life] of [
      [interrupted, -1, 3600],
      [expired, -1, -1],
    ] as const) {
      await sequelize.query(
        `INSERT INTO idempotency_keys (account, idempotency_key, fingerprint, method, path, created_at, locked_until, expires_at)
         VALUES (:account, :key, :fingerprint, 'POST', :path, NOW(3), NOW(3) + INTERVAL :lease SECOND, NOW(3) + INTERVAL :life SECOND)`,
        {
          replacements: {
            account: SPREE,
            key,
            lease,
            life,
            path: `${base}/contacts`,
            fingerprint: fingerprintOf({ method: 'POST', path: `${base}/contacts`, body }),
          },
        },
      );
    }
    const afterCrash = await request('POST', '/contacts', { token, headers: withKey(interrupted), body });
    assert.equal(afterCrash.status, 409);
    assert.equal(afterCrash.body.type, 'https://errors.ix-api.net/v2/idempotency-key-in-use.html');
    assert.match(afterCrash.body.detail, /interrupted/);
    assert.equal(await contactsNamed(body.name), 0);
    const afterADay = await request('POST', '/contacts', { token, headers: withKey(expired), body });
    assert.equal(afterADay.status, 201);
    assert.equal(await contactsNamed(body.name), 1);
    assert.equal(await stack().db.idempotencyKeys.purgeExpired(), 0, 'the expired key was claimed afresh');
  });
});
