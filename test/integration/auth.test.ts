import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { QueryTypes } from 'sequelize';
import { createTokenService, keyIdOf } from '../../api/token-service';
import { login, request } from '../support/http';
import { stack, startSecondApi } from '../support/stack';

const problemType = (name: string) => `https://errors.ix-api.net/v2/${name}.html`;

describe('authentication', () => {
  it('issues JWT access and refresh tokens with exp for valid credentials', async () => {
    const { credential, accessToken, refreshToken } = await login('customer');
    const access = decodeJwt(accessToken);
    const refresh = decodeJwt(refreshToken);
    assert.equal(access.sub, credential.accountId);
    const lifetime = access.exp! - access.iat!;
    assert.equal(lifetime, stack().config.accessTokenTtlSeconds);
    assert.ok(lifetime >= 3600, 'access tokens outlast a long terraform apply');
    assert.ok(refresh.exp! > access.exp!);
  });

  it('accepts `application/json;` with a trailing semicolon', async () => {
    const credential = stack().credentials[0];
    const response = await request('POST', '/auth/token', {
      rawBody: JSON.stringify({ api_key: credential.apiKey, api_secret: credential.apiSecret }),
      headers: { 'content-type': 'application/json;', accept: 'application/json;' },
    });
    assert.equal(response.status, 201);
  });

  it('rejects keys and secrets of the wrong length with a 400 naming each property', async () => {
    const response = await request('POST', '/auth/token', {
      body: { api_key: 'x'.repeat(15), api_secret: 'y'.repeat(87) },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.type, problemType('validation-error'));
    assert.deepEqual(response.body.properties.map((p: { name: string }) => p.name).sort(), [
      'api_key',
      'api_secret',
    ]);
  });

  it('rejects a missing body and missing fields with 400', async () => {
    const empty = await request('POST', '/auth/token', { headers: { 'content-type': 'application/json' } });
    assert.equal(empty.status, 400);
    const partial = await request('POST', '/auth/token', { body: { api_key: 'k'.repeat(16) } });
    assert.equal(partial.status, 400);
    assert.deepEqual(partial.body.properties, [{ name: 'api_secret', reason: 'This field is required.' }]);
  });

  it('answers wrong credentials with 401 authentication-error', async () => {
    const credential = stack().credentials[0];
    const wrongSecret = await request('POST', '/auth/token', {
      body: { api_key: credential.apiKey, api_secret: `${credential.apiSecret.slice(0, -1)}x` },
    });
    assert.equal(wrongSecret.status, 401);
    assert.equal(wrongSecret.body.type, problemType('authentication-error'));
    const unknownKey = await request('POST', '/auth/token', {
      body: { api_key: 'ZZZZZZZZZZZZZZZZ', api_secret: credential.apiSecret },
    });
    assert.equal(unknownKey.status, 401);
  });

  it('rotates refresh tokens: a refresh token works once, and its reuse revokes the family', async () => {
    const { refreshToken } = await login('reseller');
    const first = await request('POST', '/auth/refresh', {
      body: { refresh_token: refreshToken },
      // Some clients also send the refresh token as a bearer token; it must be ignored.
      token: refreshToken,
    });
    assert.equal(first.status, 201);
    assert.notEqual(first.body.refresh_token, refreshToken);
    const me = await request('GET', '/account', { token: first.body.access_token });
    assert.equal(me.status, 200);

    const replay = await request('POST', '/auth/refresh', { body: { refresh_token: refreshToken } });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.type, problemType('authentication-error'));
    // The replay revoked every token of that login, including the one issued by the first refresh.
    const descendant = await request('POST', '/auth/refresh', {
      body: { refresh_token: first.body.refresh_token },
    });
    assert.equal(descendant.status, 401);
  });

  it('never accepts an access token as a refresh token, nor the reverse', async () => {
    const { accessToken, refreshToken } = await login();
    const asRefresh = await request('POST', '/auth/refresh', { body: { refresh_token: accessToken } });
    assert.equal(asRefresh.status, 401);
    const asBearer = await request('GET', '/account', { token: refreshToken });
    assert.equal(asBearer.status, 401);
    assert.equal(asBearer.body.type, problemType('authentication-error'));
  });

  it('answers expired tokens with 401 signature-expired', async () => {
    const { config, credentials } = stack();
    const past = createTokenService({
      signingKey: config.tokenSigningKey,
      accessTokenTtlSeconds: 60,
      refreshTokenTtlSeconds: 120,
      now: () => new Date(Date.now() - 3_600_000),
    });
    const pair = await past.issuePair({ accountId: credentials[0].accountId, apiKey: credentials[0].apiKey });
    const response = await request('GET', '/account', { token: pair.access_token });
    assert.equal(response.status, 401);
    assert.equal(response.body.type, problemType('signature-expired'));
    const refresh = await request('POST', '/auth/refresh', { body: { refresh_token: pair.refresh_token } });
    assert.equal(refresh.status, 401);
    assert.equal(refresh.body.type, problemType('signature-expired'));
  });

  it('answers missing, tampered, foreign-key and unsigned tokens with 401 authentication-error', async () => {
    const { accessToken } = await login();
    const [header, payload, signature] = accessToken.split('.');
    const claims = decodeJwt(accessToken);
    const otherAccount = Buffer.from(JSON.stringify({ ...claims, sub: 'acc-demo-ix' })).toString('base64url');
    const unsigned = new UnsecuredJWT({ ...claims }).encode();
    const foreign = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('a different key that is 32 bytes long!!'));
    const tokens = [
      `${header}.${otherAccount}.${signature}`,
      unsigned,
      foreign,
      'not-a-jwt',
      `${header}.${payload}.`,
    ];
    for (const token of tokens) {
      const response = await request('GET', '/account', { token });
      assert.equal(response.status, 401, token);
      assert.equal(response.body.type, problemType('authentication-error'));
    }
    const missing = await request('GET', '/account');
    assert.equal(missing.status, 401);
    const basic = await request('GET', '/account', { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    assert.equal(basic.status, 401);
  });

  it("reads the caller's own account with a valid token", async () => {
    const { credential, accessToken } = await login('subaccount');
    const response = await request('GET', '/account', { token: accessToken });
    assert.equal(response.status, 200);
    assert.equal(response.body.id, credential.accountId);
    assert.equal(response.body.managing_account, 'acc-transit-partners');
  });

  it('stops honouring refresh tokens of a revoked API key', async () => {
    const { db } = stack();
    const account = stack().credentials.find((c) => c.role === 'customer')!.accountId;
    const issued = await db.credentials.createApiKey(account, 'to revoke');
    const tokens = await request('POST', '/auth/token', {
      body: { api_key: issued.apiKey, api_secret: issued.apiSecret },
    });
    assert.equal(tokens.status, 201);
    await db.credentials.revokeApiKey(issued.apiKey);
    const refresh = await request('POST', '/auth/refresh', {
      body: { refresh_token: tokens.body.refresh_token },
    });
    assert.equal(refresh.status, 401);
    const again = await request('POST', '/auth/token', {
      body: { api_key: issued.apiKey, api_secret: issued.apiSecret },
    });
    assert.equal(again.status, 401);
  });
});

describe('authentication: revocation, logins and signing keys', () => {
  const customer = () => stack().credentials.find((c) => c.role === 'customer')!.accountId;

  it('stops honouring the access tokens of a revoked API key at the next request, on every replica', async () => {
    const { db } = stack();
    const other = await startSecondApi({});
    try {
      const issued = await db.credentials.createApiKey(customer(), 'revoked while in use');
      const tokens = await request('POST', '/auth/token', {
        body: { api_key: issued.apiKey, api_secret: issued.apiSecret },
      });
      const token = tokens.body.access_token as string;
      assert.equal((await request('GET', '/account', { token })).status, 200);
      assert.equal((await request('GET', '/account', { token, baseUrl: other.url })).status, 200);
      await db.credentials.revokeApiKey(issued.apiKey);
      for (const baseUrl of [undefined, other.url]) {
        const answer = await request('GET', '/account', { token, baseUrl });
        assert.equal(answer.status, 401, 'the revoked key still works');
        assert.equal(answer.body.type, problemType('authentication-error'));
        assert.match(answer.body.detail, /revoked/);
      }
      const write = await request('POST', '/contacts', {
        token,
        body: { managing_account: customer(), consuming_account: customer(), name: 'After revocation' },
      });
      assert.equal(write.status, 401);
    } finally {
      await other.stop(1_000);
    }
  });

  it('refuses every access token of a login at the next request, on every replica, once a spent refresh token of it comes back', async () => {
    const other = await startSecondApi({});
    try {
      const replicas = [undefined, other.url];
      const answers = async (tokens: string[]) => {
        const seen: Array<[number, unknown]> = [];
        for (const token of tokens)
          for (const baseUrl of replicas) {
            const answer = await request('GET', '/account', { token, baseUrl });
            seen.push([answer.status, answer.status === 200 ? undefined : answer.body.type]);
          }
        return seen;
      };
      const leaked = await login('customer');
      const elsewhere = await login('customer');
      const refreshed = await request('POST', '/auth/refresh', {
        body: { refresh_token: leaked.refreshToken },
      });
      assert.equal(refreshed.status, 201, refreshed.text);
      const ofLogin = [leaked.accessToken, refreshed.body.access_token as string];
      const ok: [number, unknown] = [200, undefined];
      assert.deepEqual(await answers(ofLogin), [ok, ok, ok, ok]);

      const replay = await request('POST', '/auth/refresh', {
        body: { refresh_token: leaked.refreshToken },
        baseUrl: other.url,
      });
      assert.equal(replay.status, 401);
      const refused: [number, unknown] = [401, problemType('authentication-error')];
      assert.deepEqual(await answers(ofLogin), [refused, refused, refused, refused]);
      const detail = await request('GET', '/account', { token: leaked.accessToken });
      assert.match(detail.body.detail as string, /login .*revoked/);
      // A refresh token the revocation missed (issued while it ran) is of a revoked login all the same.
      const missed = refreshed.body.refresh_token as string;
      await stack().db.sequelize.query('UPDATE refresh_tokens SET revoked_at = NULL WHERE jti = :jti', {
        replacements: { jti: decodeJwt(missed).jti },
      });
      const late = await request('POST', '/auth/refresh', { body: { refresh_token: missed } });
      assert.equal(late.status, 401, late.text);

      // The key's other logins, and the logins that come after, go on.
      const fresh = await login('customer');
      assert.deepEqual(await answers([elsewhere.accessToken, fresh.accessToken]), [ok, ok, ok, ok]);
      const again = await request('POST', '/auth/refresh', { body: { refresh_token: fresh.refreshToken } });
      assert.equal(again.status, 201, again.text);
    } finally {
      await other.stop(1_000);
    }
  });

  it('shows an account that a caller has just come to manage at the next request, on every replica', async () => {
    const { db, credentials } = stack();
    const reseller = credentials.find((c) => c.role === 'reseller')!;
    const other = await startSecondApi({});
    try {
      const { accessToken: token } = await login('reseller');
      const id = `acc-managed-${randomBytes(4).toString('hex')}`;
      const seen = async (baseUrl?: string) =>
        (await request('GET', `/accounts/${id}`, { token, baseUrl })).status;
      await db.accounts.importAccount({
        id,
        name: 'Managed from now on',
        address: { country: 'DE', locality: 'Berlin', postal_code: '10115', street_address: 'Str. 1' },
        managing_account: null,
      });
      assert.deepEqual([await seen(), await seen(other.url)], [404, 404]);
      await db.sequelize.query('UPDATE accounts SET managing_account = :reseller WHERE id = :id', {
        replacements: { reseller: reseller.accountId, id },
      });
      assert.deepEqual([await seen(), await seen(other.url)], [200, 200]);
    } finally {
      await other.stop(1_000);
    }
  });

  it('lets a refreshed login last no longer than REFRESH_FAMILY_TTL after it began', async () => {
    const { config, db, credentials } = stack();
    const key = credentials.find((c) => c.role === 'customer')!;
    const familyTtl = config.refreshFamilyTtlSeconds;
    // A login that began a minute before its lifetime ends, signed with the server's key.
    const began = new Date(Date.now() - (familyTtl - 60) * 1000);
    const then = createTokenService({
      signingKey: config.tokenSigningKey,
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
      refreshFamilyTtlSeconds: familyTtl,
      now: () => began,
    });
    const pair = await then.issuePair({ accountId: key.accountId, apiKey: key.apiKey });
    await db.credentials.recordRefreshToken({
      jti: pair.refresh.jti,
      apiKey: key.apiKey,
      accountId: key.accountId,
      familyId: pair.refresh.familyId,
      expiresAt: pair.refresh.expiresAt,
    });
    const refreshed = await request('POST', '/auth/refresh', { body: { refresh_token: pair.refresh_token } });
    assert.equal(refreshed.status, 201, refreshed.text);
    const end = Math.floor(began.getTime() / 1000) + familyTtl;
    assert.equal(decodeJwt(refreshed.body.refresh_token).exp, end);
    assert.ok(decodeJwt(refreshed.body.access_token).exp! <= end);
    assert.equal(decodeJwt(refreshed.body.refresh_token).auth_time, Math.floor(began.getTime() / 1000));
  });

  it('deletes expired refresh tokens and keeps the others', async () => {
    const { db, credentials } = stack();
    const key = credentials.find((c) => c.role === 'customer')!;
    const row = (jti: string, expiresAt: Date) => ({
      jti,
      apiKey: key.apiKey,
      accountId: key.accountId,
      familyId: 'purge-test',
      expiresAt,
    });
    const stale = `purge-stale-${Date.now()}`;
    const live = `purge-live-${Date.now()}`;
    await db.credentials.recordRefreshToken(row(stale, new Date(Date.now() - 60_000)));
    await db.credentials.recordRefreshToken(row(live, new Date(Date.now() + 3_600_000)));
    assert.ok((await db.credentials.purgeExpiredRefreshTokens()) >= 1);
    const left = await db.sequelize.query<{ jti: string }>(
      'SELECT jti FROM refresh_tokens WHERE jti IN (:jtis)',
      { replacements: { jtis: [stale, live] }, type: QueryTypes.SELECT },
    );
    assert.deepEqual(
      left.map((r) => r.jti),
      [live],
    );
  });

  it('rotates the signing key without logging anybody out', async () => {
    const { config } = stack();
    const current = Buffer.from(config.tokenSigningKey).toString('base64');
    const next = randomBytes(32).toString('base64');
    const { accessToken: before } = await login('customer');
    assert.equal(decodeProtectedHeader(before).kid, keyIdOf(config.tokenSigningKey));
    // During the rotation: the new key signs, the current one still verifies.
    const rotating = await startSecondApi({ TOKEN_SIGNING_KEY: `${next},${current}` });
    // After it: the old key is gone.
    const rotated = await startSecondApi({ TOKEN_SIGNING_KEY: next });
    try {
      const old = await request('GET', '/account', { token: before, baseUrl: rotating.url });
      assert.equal(old.status, 200, 'a token of the previous key stops working during the rotation');
      const credential = stack().credentials.find((c) => c.role === 'customer')!;
      const fresh = await request('POST', '/auth/token', {
        baseUrl: rotating.url,
        body: { api_key: credential.apiKey, api_secret: credential.apiSecret },
      });
      const after = fresh.body.access_token as string;
      assert.equal(decodeProtectedHeader(after).kid, keyIdOf(new Uint8Array(Buffer.from(next, 'base64'))));
      assert.equal((await request('GET', '/account', { token: after, baseUrl: rotated.url })).status, 200);
      assert.equal((await request('GET', '/account', { token: before, baseUrl: rotated.url })).status, 401);
      // A server that does not know the new key yet refuses its tokens.
      assert.equal((await request('GET', '/account', { token: after })).status, 401);
    } finally {
      await rotating.stop(1_000);
      await rotated.stop(1_000);
    }
  });
});
