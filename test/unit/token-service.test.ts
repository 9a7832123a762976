import assert from 'node:assert/strict';
import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { createTokenService } from '../../api/token-service';
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
