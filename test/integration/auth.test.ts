import assert from 'node:assert/strict';
import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { createTokenService } from '../../api/token-service';
import { login, request } from '../support/http';
import { stack } from '../support/stack';

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
