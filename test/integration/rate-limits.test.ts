import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { RateLimitSettings } from '../../api/rate-limits';
import { createRateLimits } from '../../api/rate-limits';
import type { ApiService } from '../../api/server';
import { RequestProblem } from '../../api/request-problems';
import type { HttpResponse } from '../support/http';
import { request } from '../support/http';
import { stack, startSecondApi } from '../support/stack';

/**
 * Two API replicas with low limits on the suite's database; X-Forwarded-For (trusted from loopback)
 * stands for clients at different addresses. Every case uses addresses and accounts of its own, so
 * counters of other cases (and of the rest of the suite) never meet it.
 */
const LIMITS = {
  TRUST_PROXY: 'loopback',
  RATE_LIMIT_AUTH_PER_ADDRESS: '20/1m',
  RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '6/1m',
  RATE_LIMIT_AUTH_FAILURES_PER_KEY: '3/1m',
  RATE_LIMIT_PER_ACCOUNT: '10/1m',
  RATE_LIMIT_PER_ADDRESS: '8/1m',
};

/** Every limit off, for limiters a case builds itself. */
const NO_LIMITS: RateLimitSettings = {
  authPerAddress: null,
  authFailuresPerAddress: null,
  authFailuresPerKey: null,
  perAccount: null,
  perAddress: null,
};

/** Client addresses of a documentation network (TEST-NET-2), a new one at each call. */
const someAddress = (() => {
  let next = randomBytes(1)[0];
  return () => `198.51.100.${1 + (next++ % 250)}`;
})();

/** A key's wrong secret: right length, wrong bytes. */
const WRONG_SECRET = 'x'.repeat(86);

function assertLimited(response: HttpResponse, what: RegExp): void {
  assert.equal(response.status, 429, response.text);
  assert.equal(response.body.type, 'https://errors.ix-api.net/v2/too-many-requests.html');
  assert.equal(response.body.status, 429);
  assert.match(response.body.detail, what);
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
}

describe('rate limits', function () {
  this.timeout(120_000);
  let first: ApiService;
  let second: ApiService;
  before(async () => {
    first = await startSecondApi(LIMITS);
    second = await startSecondApi(LIMITS);
  });
  after(async () => {
    await first?.stop(1_000);
    await second?.stop(1_000);
  });

  /** A new account with an API key, unknown to every counter. */
  async function freshKey() {
    const { db } = stack();
    const id = `acc-limits-${randomBytes(4).toString('hex')}`;
    await db.accounts.importAccount({
      id,
      name: 'Rate limited',
      address: { country: 'DE', locality: 'Berlin', postal_code: '10115', street_address: 'Str. 1' },
      managing_account: null,
    });
    return { id, ...(await db.credentials.createApiKey(id, 'rate limits')) };
  }

  const via = (api: ApiService, from: string) => ({ baseUrl: api.url, headers: { 'x-forwarded-for': from } });

  /** Asks for a token with this key and secret from an address, on the replicas in turn. */
  let turn = 0;
  const login = (from: string, apiKey: string, apiSecret: string) =>
    request('POST', '/auth/token', {
      ...via(turn++ % 2 ? second : first, from),
      body: { api_key: apiKey, api_secret: apiSecret },
    });

  async function statusesOf(count: number, attempt: () => Promise<HttpResponse>) {
    const statuses: number[] = [];
    for (let i = 0; i < count; i += 1) statuses.push((await attempt()).status);
    return statuses;
  }

  it('never refuses correct logins of a key for their number, below the limit of their address', async () => {
    const key = await freshKey();
    const from = someAddress();
    // An apply, a plan, a change and a destroy of a few provider aliases: more logins than budgets
    // of failures, well within a minute.
    const statuses = await statusesOf(16, () => login(from, key.apiKey, key.apiSecret));
    assert.deepEqual(statuses, Array<number>(16).fill(201));
    // Other addresses log in with the same key as often.
    assert.deepEqual(
      await statusesOf(4, () => login(someAddress(), key.apiKey, key.apiSecret)),
      [201, 201, 201, 201],
    );
  });

  it('refuses an address its logins with a key once it has failed with it too often, and no other address', async () => {
    const key = await freshKey();
    const attacker = someAddress();
    const wrong = await statusesOf(5, () => login(attacker, key.apiKey, WRONG_SECRET));
    assert.deepEqual(wrong, [401, 401, 401, 429, 429]);
    // The right secret from there is refused as well: past its budget, an address learns nothing.
    const right = await login(attacker, key.apiKey, key.apiSecret);
    assertLimited(right, /failed logins for this API key from your address: at most 3 in 60 s/);
    // The owner, elsewhere, is not held back, on either replica.
    const owner = someAddress();
    assert.deepEqual(await statusesOf(2, () => login(owner, key.apiKey, key.apiSecret)), [201, 201]);
    // Nor is another key at the failing address: its own budget is not used up.
    const other = await freshKey();
    assert.equal((await login(attacker, other.apiKey, other.apiSecret)).status, 201);
  });

  it('refuses an address every login once it has failed too often, whatever keys it named', async () => {
    const victim = await freshKey();
    const bystander = await freshKey();
    const attacker = someAddress();
    const guessed = await statusesOf(7, () => login(attacker, randomBytes(8).toString('hex'), WRONG_SECRET));
    assert.deepEqual(guessed, [401, 401, 401, 401, 401, 401, 429]);
    const refused = await login(attacker, victim.apiKey, victim.apiSecret);
    assertLimited(refused, /failed logins from your address: at most 6 in 60 s/);
    assert.equal((await login(attacker, bystander.apiKey, bystander.apiSecret)).status, 429);
    // Neither key is refused to anybody else.
    assert.equal((await login(someAddress(), victim.apiKey, victim.apiSecret)).status, 201);
    assert.equal((await login(someAddress(), bystander.apiKey, bystander.apiSecret)).status, 201);
  });

  it("forgives a key's failures at an address once it logs in there with its secret", async () => {
    const key = await freshKey();
    const from = someAddress();
    assert.deepEqual(await statusesOf(2, () => login(from, key.apiKey, WRONG_SECRET)), [401, 401]);
    assert.equal((await login(from, key.apiKey, key.apiSecret)).status, 201);
    // Three more failures are the key's whole budget again; the address's own has one left.
    assert.deepEqual(await statusesOf(3, () => login(from, key.apiKey, WRONG_SECRET)), [401, 401, 401]);
    assertLimited(await login(from, key.apiKey, key.apiSecret), /failed logins for this API key/);
  });

  it('counts the failures of keys of any characters, on every replica together', async () => {
    for (const apiKey of ['é'.repeat(16), 'k€y '.repeat(4), `${'%e9'.repeat(5)}%`]) {
      const from = someAddress();
      // The key's budget is counted in the database: the fourth failure, on either replica, is refused.
      const statuses = await statusesOf(4, () => login(from, apiKey, WRONG_SECRET));
      assert.deepEqual(statuses, [401, 401, 401, 429], apiKey);
    }
  });

  it('limits the auth requests of an address, right or wrong, on every replica together', async () => {
    const key = await freshKey();
    const from = someAddress();
    const answers: HttpResponse[] = [];
    let refreshToken = '';
    for (let i = 0; i < 22; i += 1) {
      const api = i % 2 ? second : first;
      const answer =
        i % 2 && refreshToken
          ? await request('POST', '/auth/refresh', {
              ...via(api, from),
              body: { refresh_token: refreshToken },
            })
          : await request('POST', '/auth/token', {
              ...via(api, from),
              body: { api_key: key.apiKey, api_secret: i === 4 ? WRONG_SECRET : key.apiSecret },
            });
      refreshToken = (answer.body.refresh_token as string | undefined) ?? refreshToken;
      answers.push(answer);
    }
    const statuses = answers.map((answer) => answer.status);
    assert.deepEqual(statuses.slice(20), [429, 429]);
    assert.deepEqual(
      statuses.slice(0, 20),
      statuses.slice(0, 20).map((_, i) => (i === 4 ? 401 : 201)),
    );
    assertLimited(answers[20], /token requests from your address: at most 20 in 60 s/);
    assertLimited(answers[21], /token requests from your address/);
    // Another address is not held back by it.
    assert.equal((await login(someAddress(), key.apiKey, key.apiSecret)).status, 201);
  });

  it('limits the requests of an account, across replicas, and no other account', async () => {
    const busy = await freshKey();
    const calm = await freshKey();
    const tokenOf = async (key: { apiKey: string; apiSecret: string }) =>
      (
        await request('POST', '/auth/token', {
          ...via(first, `192.0.2.${1 + (randomBytes(1)[0] % 250)}`),
          body: { api_key: key.apiKey, api_secret: key.apiSecret },
        })
      ).body.access_token as string;
    const busyToken = await tokenOf(busy);
    const calmToken = await tokenOf(calm);
    const statuses: number[] = [];
    let last: HttpResponse | undefined;
    for (let i = 0; i < 12; i += 1) {
      last = await request('GET', '/account', {
        token: busyToken,
        ...via(i % 2 ? second : first, `192.0.2.${100 + i}`),
      });
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [...Array<number>(10).fill(200), 429, 429]);
    assertLimited(last!, /requests of your account/);
    // Writes count too, and are refused before anything is read or changed.
    const write = await request('POST', '/contacts', {
      token: busyToken,
      ...via(first, '192.0.2.200'),
      body: { managing_account: busy.id, consuming_account: busy.id, name: 'Over the limit' },
    });
    assert.equal(write.status, 429);
    const contacts = await stack().db.sequelize.query(
      'SELECT id FROM contacts WHERE managing_account = :id',
      {
        replacements: { id: busy.id },
      },
    );
    assert.deepEqual(contacts[0], []);
    assert.equal(
      (await request('GET', '/account', { token: calmToken, ...via(second, '192.0.2.201') })).status,
      200,
    );
  });

  it('limits requests without a valid token per address: discovery and guessed tokens alike', async () => {
    const from = someAddress();
    const statuses: number[] = [];
    let last: HttpResponse | undefined;
    for (let i = 0; i < 10; i += 1) {
      const options = via(i % 2 ? second : first, from);
      last =
        i % 3 === 0
          ? await request('GET', '/account', { ...options, token: `guess.${i}.token` })
          : await request('GET', '/implementation', options);
      statuses.push(last.status);
    }
    assert.deepEqual(statuses.slice(8), [429, 429]);
    assert.ok(
      statuses.slice(0, 8).every((status) => status === 200 || status === 401),
      String(statuses),
    );
    assertLimited(last!, /without a valid access token from your address/);
  });

  it('counts in windows: a new window starts anew, a refusal says when the window ends', async () => {
    const { db, logger } = stack();
    const refused: string[] = [];
    const limits = createRateLimits({
      sequelize: db.sequelize,
      settings: { ...NO_LIMITS, perAccount: { points: 3, durationSeconds: 2 } },
      logger,
      onRefused: (limit) => refused.push(limit),
    });
    const key = `window-${randomBytes(4).toString('hex')}`;
    const outcomes = async (count: number) => {
      const seen: string[] = [];
      for (let i = 0; i < count; i += 1) {
        try {
          await limits.byAccount(key);
          seen.push('counted');
        } catch (error) {
          assert.ok(error instanceof RequestProblem, String(error));
          // The window is 2 s long: a refusal inside it names 1 or 2 s, never more.
          assert.match(error.headers['Retry-After'], /^[12]$/);
          seen.push('refused');
        }
      }
      return seen;
    };
    const started = Date.now();
    assert.deepEqual(await outcomes(5), ['counted', 'counted', 'counted', 'refused', 'refused']);
    assert.deepEqual(refused, ['per_account', 'per_account']);
    const [[row]] = (await db.sequelize.query('SELECT points, expire FROM rate_limits WHERE `key` = :key', {
      replacements: { key: `perAccount:${key}` },
    })) as [Array<{ points: number; expire: number }>, unknown];
    assert.equal(row.points, 5);
    assert.ok(row.expire >= started + 2_000 && row.expire <= Date.now() + 2_000, String(row.expire));
    // Once the window has ended, the next request opens a new one and counts from one again.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(row.expire) - Date.now() + 50)));
    assert.deepEqual(await outcomes(4), ['counted', 'counted', 'counted', 'refused']);
  });

  it('counts requests that arrive together exactly, on every replica together', async () => {
    const { db, logger } = stack();
    // Two limiters on one database stand for two replicas.
    const replicas = [0, 1].map(() =>
      createRateLimits({
        sequelize: db.sequelize,
        settings: { ...NO_LIMITS, perAccount: { points: 25, durationSeconds: 60 } },
        logger,
      }),
    );
    const key = `together-${randomBytes(4).toString('hex')}`;
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        replicas[i % 2].byAccount(key).then(
          () => 'counted',
          (error: unknown) =>
            error instanceof RequestProblem && error.status === 429 ? 'refused' : String(error),
        ),
      ),
    );
    assert.equal(outcomes.filter((outcome) => outcome === 'counted').length, 25, String(outcomes));
    assert.equal(outcomes.filter((outcome) => outcome === 'refused').length, 15, String(outcomes));
    const [[row]] = (await db.sequelize.query('SELECT points FROM rate_limits WHERE `key` = :key', {
      replacements: { key: `perAccount:${key}` },
    })) as [Array<{ points: number }>, unknown];
    assert.equal(row.points, 40);
  });
});
