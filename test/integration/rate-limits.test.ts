import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
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
  RATE_LIMIT_AUTH_PER_ADDRESS: '6/1m',
  RATE_LIMIT_AUTH_PER_KEY: '4/1m',
  RATE_LIMIT_PER_ACCOUNT: '10/1m',
  RATE_LIMIT_PER_ADDRESS: '8/1m',
};

/** A client address of a documentation network (TEST-NET-2); .251 to .254 stay free for other clients. */
const someAddress = () => `198.51.100.${1 + (randomBytes(1)[0] % 250)}`;

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

  it('limits token requests per client address, wrong secrets included, on every replica together', async () => {
    const key = await freshKey();
    const from = someAddress();
    const answers: HttpResponse[] = [];
    for (let i = 0; i < 9; i += 1) {
      const api = i % 2 ? second : first;
      const secret = i < 3 ? 'x'.repeat(86) : key.apiSecret;
      answers.push(
        await request('POST', '/auth/token', {
          ...via(api, from),
          body: { api_key: i < 3 ? randomBytes(8).toString('hex') : key.apiKey, api_secret: secret },
        }),
      );
    }
    assert.deepEqual(
      answers.map((a) => a.status),
      [401, 401, 401, 201, 201, 201, 429, 429, 429],
    );
    assertLimited(answers[6], /token requests from your address/);
    // Another address is not held back by it.
    const elsewhere = await request('POST', '/auth/token', {
      ...via(first, '198.51.100.252'),
      body: { api_key: key.apiKey, api_secret: key.apiSecret },
    });
    assert.equal(elsewhere.status, 201);
  });

  it('limits token requests per API key, from however many addresses', async () => {
    const key = await freshKey();
    const statuses: number[] = [];
    let last: HttpResponse | undefined;
    for (let i = 0; i < 6; i += 1) {
      last = await request('POST', '/auth/token', {
        ...via(i % 2 ? second : first, `203.0.113.${10 + i}`),
        body: { api_key: key.apiKey, api_secret: i === 0 ? 'y'.repeat(86) : key.apiSecret },
      });
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [401, 201, 201, 201, 429, 429]);
    assertLimited(last!, /token requests for this API key/);
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
      settings: {
        authPerAddress: null,
        authPerKey: null,
        perAccount: { points: 3, durationSeconds: 2 },
        perAddress: null,
      },
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
      replacements: { key: `byAccount:${key}` },
    })) as [Array<{ points: number; expire: number }>, unknown];
    assert.equal(row.points, 5);
    assert.ok(row.expire >= started + 2_000 && row.expire <= Date.now() + 2_000, String(row.expire));
    // Once the window has ended, the next request opens a new one and counts from one again.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(row.expire) - Date.now() + 50)));
    assert.deepEqual(await outcomes(4), ['counted', 'counted', 'counted', 'refused']);
  });

  it('counts requests that arrive together exactly, on every replica together', async () => {
    const { db, logger } = stack();
    const settings = { authPerAddress: null, authPerKey: null, perAddress: null };
    // Two limiters on one database stand for two replicas.
    const replicas = [0, 1].map(() =>
      createRateLimits({
        sequelize: db.sequelize,
        settings: { ...settings, perAccount: { points: 25, durationSeconds: 60 } },
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
      replacements: { key: `byAccount:${key}` },
    })) as [Array<{ points: number }>, unknown];
    assert.equal(row.points, 40);
  });
});
