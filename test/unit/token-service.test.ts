import assert from 'node:assert/strict';
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { createTokenService, keyIdOf } from '../../api/token-service';
import { AuthenticationError, SignatureExpiredError } from '../../domain/errors';

const signingKey = new Uint8Array(32).fill(7);
const subject = { accountId: 'acc-1', apiKey: 'KKKKKKKKKKKKKKKK' };

describe('token service', () => {
  const tokens = createTokenService({
    signingKey,
    accessTokenTtlSeconds: 3600,
    refreshTokenTtlSeconds: 86400,
  });

  it('issues a pair that verifies for its own use only', async () => {
    const pair = await tokens.issuePair(subject);
    const access = await tokens.verifyAccess(pair.access_token);
    assert.equal(access.accountId, 'acc-1');
    assert.equal(access.apiKey, subject.apiKey);
    const refresh = await tokens.verifyRefresh(pair.refresh_token);
    assert.equal(refresh.familyId, access.familyId);
    assert.equal(refresh.jti, pair.refresh.jti);
    await assert.rejects(tokens.verifyRefresh(pair.access_token), AuthenticationError);
    await assert.rejects(tokens.verifyAccess(pair.refresh_token), AuthenticationError);
  });

  it('keeps the family across a refresh and gives every token its own id', async () => {
    const first = await tokens.issuePair(subject);
    const second = await tokens.issuePair({ ...subject, familyId: first.refresh.familyId });
    assert.equal(second.refresh.familyId, first.refresh.familyId);
    assert.notEqual(decodeJwt(second.access_token).jti, decodeJwt(first.access_token).jti);
  });

  it('reports an expired token as signature-expired', async () => {
    const old = createTokenService({
      signingKey,
      accessTokenTtlSeconds: 60,
      refreshTokenTtlSeconds: 120,
      now: () => new Date(Date.now() - 10 * 60_000),
    });
    const pair = await old.issuePair(subject);
    await assert.rejects(tokens.verifyAccess(pair.access_token), SignatureExpiredError);
    await assert.rejects(tokens.verifyRefresh(pair.refresh_token), SignatureExpiredError);
  });

  it('expires an access token on time however often it was verified before', async () => {
    let clock = Date.parse('2026-03-01T12:00:00Z');
    const timed = createTokenService({
      signingKey,
      accessTokenTtlSeconds: 60,
      refreshTokenTtlSeconds: 120,
      now: () => new Date(clock),
    });
    const pair = await timed.issuePair(subject);
    for (let i = 0; i < 3; i += 1)
      assert.equal((await timed.verifyAccess(pair.access_token)).accountId, 'acc-1');
    clock += 59_000;
    assert.equal((await timed.verifyAccess(pair.access_token)).accountId, 'acc-1');
    clock += 1_000;
    await assert.rejects(timed.verifyAccess(pair.access_token), SignatureExpiredError);
    await assert.rejects(timed.verifyAccess(pair.access_token), SignatureExpiredError);
    // A token verified before does not vouch for a copy with other claims under its signature.
    const [header, , signature] = pair.access_token.split('.');
    const other = Buffer.from(JSON.stringify({ ...decodeJwt(pair.access_token), sub: 'acc-2' })).toString(
      'base64url',
    );
    clock -= 30_000;
    assert.equal((await timed.verifyAccess(pair.access_token)).accountId, 'acc-1');
    await assert.rejects(timed.verifyAccess(`${header}.${other}.${signature}`), AuthenticationError);
  });

  it('rejects unsigned, foreign and malformed tokens', async () => {
    const pair = await tokens.issuePair(subject);
    const claims = decodeJwt(pair.access_token);
    const unsigned = new UnsecuredJWT(claims).encode();
    const foreign = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new Uint8Array(32).fill(8));
    for (const token of [unsigned, foreign, 'x.y.z', '']) {
      await assert.rejects(tokens.verifyAccess(token), AuthenticationError);
    }
  });
});

describe('token service: signing keys and logins', () => {
  const oldKey = new Uint8Array(32).fill(3);
  const newKey = new Uint8Array(32).fill(4);
  const options = { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 86400 };

  it('names its signing key in every token, by an id that reveals nothing of the key', async () => {
    const tokens = createTokenService({ signingKey: newKey, ...options });
    const pair = await tokens.issuePair(subject);
    const kid = decodeProtectedHeader(pair.access_token).kid;
    assert.equal(kid, keyIdOf(newKey));
    assert.equal(decodeProtectedHeader(pair.refresh_token).kid, kid);
    assert.notEqual(keyIdOf(oldKey), kid);
    assert.ok(!Buffer.from(newKey).toString('base64url').includes(kid));
  });

  it('keeps the tokens of the previous key valid after a rotation, and signs with the new one only', async () => {
    const before = createTokenService({ signingKey: oldKey, ...options });
    const issued = await before.issuePair(subject);
    const rotated = createTokenService({ signingKey: newKey, verificationKeys: [oldKey], ...options });
    assert.equal((await rotated.verifyAccess(issued.access_token)).accountId, subject.accountId);
    assert.equal((await rotated.verifyRefresh(issued.refresh_token)).jti, issued.refresh.jti);
    const fresh = await rotated.issuePair(subject);
    assert.equal(decodeProtectedHeader(fresh.access_token).kid, keyIdOf(newKey));
    // Once the old key is dropped, what it signed no longer verifies.
    const retired = createTokenService({ signingKey: newKey, ...options });
    await assert.rejects(retired.verifyAccess(issued.access_token), AuthenticationError);
    await retired.verifyAccess(fresh.access_token);
  });

  it('refuses a token naming a key it does not hold, even one its own key would verify', async () => {
    const tokens = createTokenService({ signingKey: newKey, ...options });
    const claims = decodeJwt((await tokens.issuePair(subject)).access_token);
    const renamed = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: 'unknown-key' })
      .sign(newKey);
    await assert.rejects(tokens.verifyAccess(renamed), AuthenticationError);
  });

  it('ends a login at its lifetime however often it is refreshed', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const tokens = createTokenService({
      signingKey: newKey,
      accessTokenTtlSeconds: 600,
      refreshTokenTtlSeconds: 3600,
      refreshFamilyTtlSeconds: 5400,
      now: () => new Date(now),
    });
    const login = await tokens.issuePair(subject);
    now += 3000_000;
    const first = await tokens.verifyRefresh(login.refresh_token);
    assert.equal(first.authTime.getTime(), Date.parse('2026-01-01T00:00:00Z'));
    const second = await tokens.issuePair({ ...subject, familyId: first.familyId, authTime: first.authTime });
    // The refreshed token expires with the login (90 minutes after it), not an hour from now.
    assert.equal(second.refresh.expiresAt.getTime(), Date.parse('2026-01-01T01:30:00Z'));
    assert.ok(decodeJwt(second.access_token).exp! <= Date.parse('2026-01-01T01:30:00Z') / 1000);
    now += 2400_000;
    await assert.rejects(tokens.verifyRefresh(second.refresh_token), SignatureExpiredError);
    // A new login starts a new lifetime.
    const again = await tokens.issuePair(subject);
    assert.ok((await tokens.verifyRefresh(again.refresh_token)).authTime.getTime() === now - (now % 1000));
  });
});
