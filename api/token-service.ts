import { createHash, randomUUID, webcrypto } from 'node:crypto';
import type { JWTHeaderParameters } from 'jose';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AuthenticationError, SignatureExpiredError } from '../domain/errors';

const ISSUER = 'ixapi-provisioning';
const AUDIENCE = 'ixapi';
const ALGORITHM = 'HS256';
/** Verified access tokens remembered at once; the oldest are forgotten first. */
const VERIFIED_TOKENS = 10_000;

export type TokenUse = 'access' | 'refresh';

export interface TokenClaims {
  accountId: string;
  apiKey: string;
  jti: string;
  /** Refresh tokens descending from one login share a family, so a leaked one can revoke them all. */
  familyId: string;
  /** When the family's login happened: no token of the family outlives it by more than its lifetime. */
  authTime: Date;
  expiresAt: Date;
}

export interface IssuedPair {
  access_token: string;
  refresh_token: string;
  refresh: TokenClaims;
}

export interface TokenServiceOptions {
  /** Signs every new token. */
  signingKey: Uint8Array;
  /**
   * Keys that still verify tokens but sign none: the signing keys before a rotation, kept until the
   * tokens they signed have expired, so a rotation logs nobody out.
   */
  verificationKeys?: readonly Uint8Array[];
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** How long a login lasts however often it is refreshed (default: the refresh token's lifetime). */
  refreshFamilyTtlSeconds?: number;
  now?: () => Date;
}

/**
 * The key id a token names in its header: derived from the key (a truncated SHA-256), so every
 * replica given the same keys agrees on it without configuring ids, and it reveals nothing of the key.
 */
export function keyIdOf(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 16);
}

function importKey(key: Uint8Array) {
  // Imported once as a WebCrypto key: converting raw bytes on every request costs more than the HMAC.
  return webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/**
 * Signs and verifies IX-API access and refresh tokens: JWTs with `sub` (the account), `exp`, `iat`,
 * `jti`, `auth_time` and `token_use`, so that an access token is never accepted as a refresh token or
 * the reverse. Each names its signing key (`kid`); tokens of older keys still verify while those keys
 * are among the verification keys.
 */
export function createTokenService(options: TokenServiceOptions) {
  const now = options.now ?? (() => new Date());
  const familyTtl = options.refreshFamilyTtlSeconds ?? options.refreshTokenTtlSeconds;
  const signingKid = keyIdOf(options.signingKey);
  const signing = importKey(options.signingKey);
  const keys = new Map<string, ReturnType<typeof importKey>>([[signingKid, signing]]);
  for (const key of options.verificationKeys ?? []) {
    if (!keys.has(keyIdOf(key))) keys.set(keyIdOf(key), importKey(key));
  }
  // Tokens signed before keys had ids carry none; only the signing key may have signed them.
  const keyFor = (header: JWTHeaderParameters) => {
    const key = header.kid === undefined ? signing : keys.get(header.kid);
    if (!key) throw new AuthenticationError('the token is signed with a key this server does not hold');
    return key;
  };

  async function sign(
    use: TokenUse,
    subject: { accountId: string; apiKey: string; familyId: string; authTime: Date },
  ) {
    const issuedAt = Math.floor(now().getTime() / 1000);
    const authTime = Math.floor(subject.authTime.getTime() / 1000);
    const ttl = use === 'access' ? options.accessTokenTtlSeconds : options.refreshTokenTtlSeconds;
    // No token outlives its login's lifetime.
    const expiresAt = Math.min(issuedAt + ttl, authTime + familyTtl);
    const jti = randomUUID();
    const token = await new SignJWT({
      token_use: use,
      api_key: subject.apiKey,
      fam: subject.familyId,
      auth_time: authTime,
    })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT', kid: signingKid })
      .setSubject(subject.accountId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .setJti(jti)
      .sign(await signing);
    return {
      token,
      claims: { ...subject, jti, expiresAt: new Date(expiresAt * 1000) } satisfies TokenClaims,
    };
  }

  async function verify(use: TokenUse, token: string): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, keyFor, {
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
      // Tokens issued before logins carried their time count from their own issue.
      const authTime = typeof payload.auth_time === 'number' ? payload.auth_time : payload.iat!;
      if (use === 'refresh' && authTime + familyTtl <= Math.floor(now().getTime() / 1000)) {
        throw new SignatureExpiredError('this login has reached its lifetime; request a new token pair');
      }
      return {
        accountId: payload.sub!,
        apiKey: payload.api_key,
        familyId: payload.fam,
        authTime: new Date(authTime * 1000),
        jti: payload.jti!,
        expiresAt: new Date(payload.exp! * 1000),
      };
    } catch (error) {
      if (error instanceof AuthenticationError || error instanceof SignatureExpiredError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new SignatureExpiredError('the token has expired');
      throw new AuthenticationError('the token is invalid');
    }
  }

  // Access tokens already verified, with their claims: a token never changes, so its signature and
  // claims need checking once; only its expiry is checked again on every use. Revocation of its key is
  // checked apart from this (api/authenticate.ts). Only tokens that verified are kept.
  const verified = new Map<string, TokenClaims>();
  async function verifyAccess(token: string): Promise<TokenClaims> {
    const known = verified.get(token);
    if (known) {
      if (known.expiresAt.getTime() > now().getTime()) return known;
      verified.delete(token);
      throw new SignatureExpiredError('the token has expired');
    }
    const claims = await verify('access', token);
    if (verified.size >= VERIFIED_TOKENS) verified.delete(verified.keys().next().value!);
    verified.set(token, claims);
    return claims;
  }

  return {
    /** A new pair: for a login (no family given), or continuing a family on refresh. */
    async issuePair(subject: {
      accountId: string;
      apiKey: string;
      familyId?: string;
      authTime?: Date;
    }): Promise<IssuedPair> {
      const full = {
        accountId: subject.accountId,
        apiKey: subject.apiKey,
        familyId: subject.familyId ?? randomUUID(),
        authTime: subject.authTime ?? now(),
      };
      const access = await sign('access', full);
      const refresh = await sign('refresh', full);
      return { access_token: access.token, refresh_token: refresh.token, refresh: refresh.claims };
    },
    verifyAccess,
    verifyRefresh: (token: string) => verify('refresh', token),
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
