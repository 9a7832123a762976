import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { randomBytes } from 'node:crypto';
import { EVENT_PAYLOADS } from '../../api/event-payloads';
import { backfillEventResources } from '../../db/migrations/0027-event-resources';
import type { EventType } from '../../domain/events';
import { eventResourceOf } from '../../domain/events';
import { liveConnection, orderConnection } from '../support/exchange-lan';
import { importFreshAccount } from '../support/fresh-account';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';
import { stack } from '../support/stack';

interface Listed {
  serial: number;
  type: string;
  account: string;
  payload: Record<string, unknown>;
}

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
    const [events, idempotency, byResource] = response.body;
    assert.equal(events.name, 'events');
    assert.equal(events.base_url, stack().config.publicBaseUrl);
    assert.equal(idempotency.name, 'idempotency-key');
    assert.equal(byResource.name, 'events-resource-filter');
    assert.equal(byResource.documentation_url, `${stack().config.publicBaseUrl}/docs#events_list`);
    const paged = await request('GET', '/extensions?page_limit=1');
    assert.equal(paged.status, 206);
    assert.equal(paged.headers.get('x-pagination-items'), '3');
  });

  it('shows each account its own events only, in serial order', async () => {
    const customer = await login('customer', 0);
    const other = await login('customer', 1);
    const mine = await readEvents<Listed>(customer.accessToken);
    assert.ok(mine.length > 0);
    assert.ok(await allConcern(mine, customer.credential.accountId));
    const serials = mine.map((e) => e.serial);
    assert.deepEqual(
      [...serials].sort((a, b) => a - b),
      serials,
    );
    assert.ok(mine.some((e) => e.type === 'account.imported'));
    const theirs = await readEvents<Listed>(other.accessToken);
    assert.ok(await allConcern(theirs, other.credential.accountId));
    // Asking for another account's event by its serial finds nothing.
    const foreign = await readEvents(customer.accessToken, `?id=${theirs[0].serial}`);
    assert.deepEqual(foreign, []);
  });

  it('filters by serial_gt and type, and pages', async () => {
    const { accessToken } = await login('customer', 0);
    const all = await readEvents<Listed>(accessToken);
    const first = all[0].serial;
    const later = await readEvents<Listed>(accessToken, `?serial_gt=${first}`);
    assert.ok(later.every((e) => e.serial > first));
    // Workflows of earlier tests may append events meanwhile: the later list holds at least the rest.
    const laterSerials = new Set(later.map((e) => e.serial));
    assert.ok(all.slice(1).every((e) => laterSerials.has(e.serial)));
    const typed = await request('GET', '/events?type=no.such.type', { token: accessToken });
    assert.equal(typed.status, 206);
    assert.deepEqual(typed.body, []);
    assert.equal(typed.headers.get('x-pagination-items'), '0');
    assert.equal(typed.headers.get('x-pagination-next'), '');
    const bad = await request('GET', '/events?serial_gt=minus-one', { token: accessToken });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.properties[0].name, 'serial_gt');
    const page = await request('GET', '/events?page_limit=1', { token: accessToken });
    assert.equal(page.status, 206);
    assert.ok(Number(page.headers.get('x-pagination-items')) >= all.length);
    const anonymous = await request('GET', '/events');
    assert.equal(anonymous.status, 401);
  });

  describe('following one resource with resource=', () => {
    /** Whether an event is about the connection `id`: holding it, or naming it as a move does. */
    const aboutConnection = (id: string) => (event: Listed) =>
      event.type.startsWith('connection.') &&
      (event.payload.id === id || (event.payload.connection as { id?: string } | undefined)?.id === id);
    const serialsOf = (events: Listed[]) => events.map((event) => event.serial);
    let token: string;
    let followed: string;
    let other: string;

    before(async function () {
      this.timeout(60_000);
      token = (await login('customer', 0)).accessToken;
      followed = await liveConnection(token);
      other = await orderConnection(token);
    });

    it("lists the resource's events only, each as the whole log shows it", async () => {
      const mine = await readEvents<Listed>(token, `?resource=${followed}`);
      const all = await readEvents<Listed>(token);
      assert.deepEqual(mine, all.filter(aboutConnection(followed)));
      assert.equal(mine[0].type, 'connection.created');
      const moves = mine.filter((event) => event.type === 'connection.state_changed');
      assert.ok(moves.length >= 2, `${moves.length} moves`);
      assert.equal(moves.at(-1)!.payload.to, 'production');
      const theirs = await readEvents<Listed>(token, `?resource=${other}`);
      assert.ok(theirs.length > 0);
      assert.ok(theirs.every(aboutConnection(other)), JSON.stringify(theirs.map((event) => event.type)));
      const account = await readEvents<Listed>(token, '?resource=acc-spree-networks');
      assert.ok(account.some((event) => event.type === 'account.imported'));
      assert.ok(account.every((event) => event.type.startsWith('account.')));
    });

    it('combines with type, serial_gt and pagination, Next keeping the filter', async () => {
      const mine = await readEvents<Listed>(token, `?resource=${followed}`);
      const moves = mine.filter((event) => event.type === 'connection.state_changed');
      const typed = await readEvents<Listed>(token, `?resource=${followed}&type=connection.state_changed`);
      assert.deepEqual(serialsOf(typed), serialsOf(moves));
      const since = moves[0].serial;
      const later = await readEvents<Listed>(
        token,
        `?resource=${followed}&type=connection.state_changed&serial_gt=${since}`,
      );
      assert.deepEqual(serialsOf(later), serialsOf(moves.slice(1)));
      const untyped = await readEvents<Listed>(token, `?resource=${followed}&serial_gt=${since}`);
      assert.deepEqual(serialsOf(untyped), serialsOf(mine.filter((event) => event.serial > since)));
      const first = await request('GET', `/events?resource=${followed}&page_limit=1`, { token });
      assert.equal(first.status, 206);
      assert.equal(first.headers.get('x-pagination-items'), String(mine.length));
      const next = first.headers.get('x-pagination-next')!;
      assert.match(next, new RegExp(`[?&]resource=${followed}(&|$)`));
      const second = await request('GET', next, { token });
      assert.equal(second.status, 206);
      assert.deepEqual(serialsOf(second.body as Listed[]), [mine[1].serial]);
    });

    it('shows nothing of a resource the caller does not see, nor of one that does not exist', async () => {
      const stranger = (await login('customer', 1)).accessToken;
      for (const resource of [followed, 'acc-spree-networks', 'conn-no-such-connection']) {
        const response = await request('GET', `/events?resource=${resource}`, { token: stranger });
        assert.equal(response.status, 206, response.text.slice(0, 200));
        assert.deepEqual(response.body, []);
        assert.equal(response.headers.get('x-pagination-items'), '0');
      }
      const unknown = await request('GET', '/events?resource=conn-no-such-connection', { token });
      assert.deepEqual(unknown.body, []);
    });

    it('answers a value no id can have with a 400 naming resource', async () => {
      for (const query of [
        'resource=',
        `resource=${'c'.repeat(81)}`,
        'resource=conn%2F1',
        'resource=conn%201',
        'resource=conn-%C3%A9',
        `resource=${followed}&resource=${other}`,
      ]) {
        const response = await request('GET', `/events?${query}`, { token });
        assert.equal(response.status, 400, `${query}: ${response.text.slice(0, 200)}`);
        assert.deepEqual(
          response.body.properties.map((property: { name: string }) => property.name),
          ['resource'],
          query,
        );
      }
    });

    it('gives events written before the filter the resource their payload names, as writers do now', async () => {
      const { db } = stack();
      const account = `acc-events-before-${randomBytes(4).toString('hex')}`;
      const rows = Object.entries(EVENT_PAYLOADS).map(([type, layout], i) => {
        const id = `res-${i}-${account}`;
        const holder = Object.entries(layout.resources ?? {}).find(([, held]) => !held.list)?.[0];
        const payload = holder
          ? { [holder]: { id, name: 'held' } }
          : { id, from: 'requested', to: 'allocated' };
        return { type: type as EventType, payload, id };
      });
      const unnamed = [
        { type: 'connection.created', payload: {} },
        { type: 'connection.state_changed', payload: { id: 42 } },
        { type: 'contact.created', payload: { contact: { id: 'c'.repeat(81) } } },
      ] as const;
      await db.sequelize.query(
        `INSERT INTO events (type, payload, timestamp, account) VALUES
           ${[...rows, ...unnamed].map(() => '(?, ?, NOW(3), ?)').join(', ')}`,
        {
          replacements: [...rows, ...unnamed].flatMap((row) => [
            row.type,
            JSON.stringify(row.payload),
            account,
          ]),
        },
      );
      await backfillEventResources(db.sequelize);
      const stored = await db.sequelize.query<{ resource: string | null }>(
        'SELECT resource FROM events WHERE account = :account ORDER BY serial',
        { replacements: { account }, type: QueryTypes.SELECT },
      );
      assert.deepEqual(
        stored.map((row) => row.resource),
        [...rows.map((row) => row.id), null, null, null],
      );
      assert.deepEqual(
        rows.map((row) => eventResourceOf(row.type, row.payload)),
        rows.map((row) => row.id),
      );
      assert.deepEqual(
        unnamed.map((row) => eventResourceOf(row.type, row.payload)),
        [null, null, null],
      );
    });
  });

  it('answers a log longer than the default page size in pages of 1000, Next walking every event once; page_limit still wins', async () => {
    const { db } = stack();
    const account = await importFreshAccount('acc-events-long', 'Long event log');
    // 2,500 moves of the account, written straight into the log: more than two default pages.
    const moves = Array.from({ length: 2500 }, (_, i) => [
      'account.state_changed',
      JSON.stringify({ id: account, from: 'production', to: 'production', event: `move-${i}` }),
      account,
    ]);
    await db.sequelize.query(
      `INSERT INTO events (type, payload, timestamp, account) VALUES ${moves.map(() => '(?, ?, NOW(3), ?)').join(', ')}`,
      { replacements: moves.flat() },
    );
    const stored = (
      await db.sequelize.query<{ serial: number }>(
        'SELECT serial FROM events WHERE account = :account OR also_account = :account ORDER BY serial',
        { replacements: { account }, type: QueryTypes.SELECT },
      )
    ).map((row) => Number(row.serial));
    assert.ok(stored.length > 2500, `${stored.length} events stored`);
    const key = await db.credentials.createApiKey(account, 'event log pages');
    const login = await request('POST', '/auth/token', {
      body: { api_key: key.apiKey, api_secret: key.apiSecret },
    });
    assert.equal(login.status, 201, login.text);
    const token = login.body.access_token as string;

    // Without page_limit: the first 1000, as a page, exactly as page_limit=1000 answers.
    const first = await request('GET', '/events', { token });
    assert.equal(first.status, 206, first.text.slice(0, 200));
    const pages = Math.ceil(stored.length / 1000);
    assert.deepEqual(
      [
        'x-pagination-limit',
        'x-pagination-offset',
        'x-pagination-items',
        'x-pagination-pages',
        'x-pagination-page',
      ].map((name) => first.headers.get(name)),
      ['1000', '0', String(stored.length), String(pages), '1'],
    );
    assert.ok(first.headers.get('x-pagination-token'));
    assert.deepEqual(
      (first.body as Listed[]).map((event) => event.serial),
      stored.slice(0, 1000),
    );
    const asked = await request('GET', '/events?page_limit=1000', { token });
    assert.equal(asked.status, 206);
    assert.deepEqual(asked.body, first.body);
    assert.equal(asked.headers.get('x-pagination-next'), first.headers.get('x-pagination-next'));

    // Next walks the rest, every event once, in pages of 1000.
    const walked = [...(first.body as Listed[])];
    const sizes = [walked.length];
    let next = first.headers.get('x-pagination-next');
    while (next) {
      assert.match(next, /^\/events\?(.+&)?page_limit=1000(&|$)/);
      assert.ok(sizes.length < pages, `Next leads past page ${pages}`);
      const page = await request('GET', next, { token });
      assert.equal(page.status, 206, page.text.slice(0, 200));
      assert.equal(page.headers.get('x-pagination-page'), String(sizes.length + 1));
      walked.push(...(page.body as Listed[]));
      sizes.push((page.body as Listed[]).length);
      next = page.headers.get('x-pagination-next');
    }
    assert.deepEqual(sizes, [1000, 1000, stored.length - 2000]);
    assert.deepEqual(
      walked.map((event) => event.serial),
      stored,
    );
    assert.ok(walked.every((event) => event.account === account));
    assert.deepEqual(
      (await readEvents<Listed>(token)).map((event) => event.serial),
      stored,
    );

    // An explicit page_limit wins, within the same bounds; filters page by default too.
    const seven = await request('GET', '/events?page_limit=7&page_offset=14', { token });
    assert.equal(seven.status, 206);
    assert.deepEqual(
      (seven.body as Listed[]).map((event) => event.serial),
      stored.slice(14, 21),
    );
    assert.equal(seven.headers.get('x-pagination-limit'), '7');
    assert.equal(seven.headers.get('x-pagination-pages'), String(Math.ceil(stored.length / 7)));
    const beyond = await request('GET', '/events?page_limit=1001', { token });
    assert.equal(beyond.status, 400);
    assert.equal(beyond.body.properties[0].name, 'page_limit');
    const after = await request('GET', `/events?serial_gt=${stored[999]}`, { token });
    assert.equal(after.status, 206);
    assert.deepEqual(
      (after.body as Listed[]).map((event) => event.serial),
      stored.slice(1000, 2000),
    );
    assert.equal(after.headers.get('x-pagination-items'), String(stored.length - 1000));
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
