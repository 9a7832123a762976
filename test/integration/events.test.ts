import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { login, request } from '../support/http';
import { stack } from '../support/stack';

/**
 * Whether every event is the account's: about it (`account`), or about a resource of two accounts
 * whose other side it is (a joining rule's member, a config's consumer).
 */
async function allConcern(events: Array<{ serial: number; account: string }>, accountId: string) {
  const others = events.filter((event) => event.account !== accountId).map((event) => event.serial);
  if (!others.length) return true;
  const rows = await stack().db.sequelize.query<{ also_account: string | null }>(
    'SELECT also_account FROM events WHERE serial IN (:others)',
    { replacements: { others }, type: QueryTypes.SELECT },
  );
  return rows.length === others.length && rows.every((row) => row.also_account === accountId);
}

describe('extensions: the event log', () => {
  it('announces the events extension at GET /extensions, without a token', async () => {
    const response = await request('GET', '/extensions');
    assert.equal(response.status, 200);
    const [events, idempotency] = response.body;
    assert.equal(events.name, 'events');
    assert.equal(events.base_url, stack().config.publicBaseUrl);
    assert.equal(idempotency.name, 'idempotency-key');
    const paged = await request('GET', '/extensions?page_limit=1');
    assert.equal(paged.status, 206);
    assert.equal(paged.headers.get('x-pagination-items'), '2');
  });

  it('shows each account its own events only, in serial order', async () => {
    const customer = await login('customer', 0);
    const other = await login('customer', 1);
    const mine = await request('GET', '/events', { token: customer.accessToken });
    assert.equal(mine.status, 200);
    assert.ok(mine.body.length > 0);
    assert.ok(await allConcern(mine.body, customer.credential.accountId));
    const serials = mine.body.map((e: { serial: number }) => e.serial);
    assert.deepEqual(
      [...serials].sort((a, b) => a - b),
      serials,
    );
    assert.ok(mine.body.some((e: { type: string }) => e.type === 'account.imported'));
    const theirs = await request('GET', '/events', { token: other.accessToken });
    assert.ok(await allConcern(theirs.body, other.credential.accountId));
    // Asking for another account's event by its serial finds nothing.
    const foreign = await request('GET', `/events?id=${theirs.body[0].serial}`, {
      token: customer.accessToken,
    });
    assert.deepEqual(foreign.body, []);
  });

  it('filters by serial_gt and type, and pages', async () => {
    const { accessToken } = await login('customer', 0);
    const all = await request('GET', '/events', { token: accessToken });
    const first = all.body[0].serial;
    const later = await request('GET', `/events?serial_gt=${first}`, { token: accessToken });
    assert.ok(later.body.every((e: { serial: number }) => e.serial > first));
    // Workflows of earlier tests may append events meanwhile: the later list holds at least the rest.
    const laterSerials = new Set(later.body.map((e: { serial: number }) => e.serial));
    assert.ok(all.body.slice(1).every((e: { serial: number }) => laterSerials.has(e.serial)));
    const typed = await request('GET', '/events?type=no.such.type', { token: accessToken });
    assert.deepEqual(typed.body, []);
    const bad = await request('GET', '/events?serial_gt=minus-one', { token: accessToken });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.properties[0].name, 'serial_gt');
    const page = await request('GET', '/events?page_limit=1', { token: accessToken });
    assert.equal(page.status, 206);
    assert.ok(Number(page.headers.get('x-pagination-items')) >= all.body.length);
    const anonymous = await request('GET', '/events');
    assert.equal(anonymous.status, 401);
  });

  it('deletes events past their retention and keeps the rest', async () => {
    const { db } = stack();
    const [{ newest }] = await db.sequelize.query<{ newest: number }>(
      'SELECT MAX(serial) AS newest FROM events',
      {
        type: QueryTypes.SELECT,
      },
    );
    await db.sequelize.query(
      `INSERT INTO events (type, payload, timestamp, account) VALUES
         ('account.updated', '{}', NOW(3) - INTERVAL 400 DAY, 'acc-retention-old'),
         ('account.updated', '{}', NOW(3) - INTERVAL 2 DAY, 'acc-retention-recent')`,
    );
    assert.ok((await db.events.purgeBefore(new Date(Date.now() - 365 * 86_400_000))) >= 1);
    const left = await db.sequelize.query<{ account: string }>(
      `SELECT account FROM events WHERE account LIKE 'acc-retention-%' AND serial > :newest`,
      { replacements: { newest }, type: QueryTypes.SELECT },
    );
    assert.deepEqual(
      left.map((row) => row.account),
      ['acc-retention-recent'],
    );
    assert.equal(stack().config.eventRetentionSeconds, 365 * 86_400);
  });
});
