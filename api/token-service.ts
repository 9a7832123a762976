import { randomUUID, webcrypto } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AuthenticationError, SignatureExpiredError } from '../domain/errors';

const ISSUER = 'ixapi-provisioning';
const AUDIENCE = 'ixapi';
const ALGORITHM = 'HS256';

export type TokenUse = 'access' | 'refresh';

export interface TokenClaims {
  accountId: string;
  apiKey: string;
  jti: string;
  /** Refresh tokens descending from one login share a family, so a leaked one can revoke them all. */
  familyId: string;
  expiresAt: Date;
}

export interface IssuedPair {
  access_token: string;
  refresh_token: string;
  refresh: TokenClaims;
}

export interface TokenServiceOptions {
  signingKey: Uint8Array;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  now?: () => Date;
}

/**
 * Signs and verifies IX-API access and refresh tokens: JWTs with `sub` (the account), `exp`, `iat`,
 * `jti` and `token_use`, so that an access token is never accepted as a refresh token or the reverse.
 */
export function createTokenService(options: TokenServiceOptions) {
  const now = options.now ?? (() => new Date());
  // Imported once as a WebCrypto key: converting raw bytes or a KeyObject on every request costs
  // more than the HMAC itself.
  const key = webcrypto.subtle.importKey(
    'raw',
    options.signingKey,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );

  async function sign(use: TokenUse, subject: { accountId: string; apiKey: string; familyId: string }) {
    const issuedAt = Math.floor(now().getTime() / 1000);
    const ttl = use === 'access' ? options.accessTokenTtlSeconds : options.refreshTokenTtlSeconds;
    const jti = randomUUID();
    const token = await new SignJWT({ token_use: use, api_key: subject.apiKey, fam: subject.familyId })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(subject.accountId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttl)
      .setJti(jti)
      .sign(await key);
    return {
      token,
      claims: { ...subject, jti, expiresAt: new Date((issuedAt + ttl) * 1000) } satisfies TokenClaims,
    };
  }

  async function verify(use: TokenUse, token: string): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, await key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: now(),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      if (payload.token_use !== use) throw new AuthenticationError(`this is not an ${use} token`);
      if (typeof payload.api_key !== 'string' || typeof payload.fam !== 'string') {
        throw new AuthenticationError('the token lacks required claims');
      }
      return {
        accountId: payload.sub!,
        apiKey: payload.api_key,
        familyId: payload.fam,
        jti: payload.jti!,
        expiresAt: new Date(payload.exp! * 1000),
      };
    } catch (error) {
      if (error instanceof AuthenticationError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new SignatureExpiredError('the token has expired');
      throw new AuthenticationError('the token is invalid');
    }
  }

  return {
    async issuePair(subject: { accountId: string; apiKey: string; familyId?: string }): Promise<IssuedPair> {
      const full = { ...subject, familyId: subject.familyId ?? randomUUID() };
      const access = await sign('access', full);
      const refresh = await sign('refresh', full);
      return { access_token: access.token, refresh_token: refresh.token, refresh: refresh.claims };
    },
    verifyAccess: (token: string) => verify('access', token),
    verifyRefresh: (token: string) => verify('refresh', token),
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
