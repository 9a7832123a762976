import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { Op } from 'sequelize';
import type { Models } from '../models';
import { isConflict, unitOfWork } from '../unit-of-work';

const KEY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** IX-API credentials: the key is exactly 16 characters (the secret 86, as it is generated). */
export const API_KEY_LENGTH = 16;

function randomKey(): string {
  const bytes = randomBytes(API_KEY_LENGTH);
  let key = '';
  for (const byte of bytes) key += KEY_ALPHABET[byte % KEY_ALPHABET.length];
  return key;
}

/** 64 random bytes in base64url are exactly 86 characters. */
function randomSecret(): string {
  return randomBytes(64).toString('base64url');
}

export interface IssuedCredentials {
  apiKey: string;
  apiSecret: string;
}

export interface VerifiedKey {
  apiKey: string;
  accountId: string;
}

/** An API key as operators list it: never its secret, nor the secret's hash. */
export interface ListedApiKey {
  apiKey: string;
  label: string;
  createdAt: Date;
  /** When a token pair was last issued through it (a login or a refresh), to the minute. */
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A key's use is recorded at most this often: a login within it after the last one writes nothing. */
export const KEY_USE_PRECISION_MS = 60_000;

export type RefreshOutcome =
  { outcome: 'accepted'; apiKey: string; accountId: string; familyId: string } | { outcome: 'rejected' };

export function createCredentialRepository({ models, hashKey }: { models: Models; hashKey: Uint8Array }) {
  const hashSecret = (secret: string): string => createHmac('sha256', hashKey).update(secret).digest('hex');
  const isApiKeyActive = async (apiKey: string): Promise<boolean> => {
    const row = (await models.ApiKey.findByPk(apiKey, { attributes: ['revokedAt'] }))?.get({ plain: true });
    return row !== undefined && row.revokedAt === null;
  };

  return {
    /** Issues a new API key for an account. The secret is returned once and only its keyed hash is kept. */
    async createApiKey(accountId: string, label = '', transaction?: Transaction): Promise<IssuedCredentials> {
      const apiKey = randomKey();
      const apiSecret = randomSecret();
      await models.ApiKey.create(
        { apiKey, accountId, label, secretHash: hashSecret(apiSecret) },
        { transaction },
      );
      return { apiKey, apiSecret };
    },

    /** Stores a known key and secret (demo credentials that survive a re-seed). */
    async putApiKey(accountId: string, credentials: IssuedCredentials, label = ''): Promise<void> {
      await models.ApiKey.upsert({
        apiKey: credentials.apiKey,
        accountId,
        label,
        secretHash: hashSecret(credentials.apiSecret),
        revokedAt: null,
      });
    },

    /** The key's account when key and secret match an active key; null otherwise (no hint which part was wrong). */
    async verifyApiKey(apiKey: string, apiSecret: string): Promise<VerifiedKey | null> {
      const row = (await models.ApiKey.findByPk(apiKey))?.get({ plain: true });
      const expected = Buffer.from(row ? row.secretHash : hashSecret('no such key'), 'hex');
      const given = Buffer.from(hashSecret(apiSecret), 'hex');
      const matches = timingSafeEqual(expected, given);
      if (!row || !matches || row.revokedAt !== null) return null;
      return { apiKey: row.apiKey, accountId: row.accountId };
    },

    async revokeApiKey(apiKey: string): Promise<void> {
      await models.ApiKey.update({ revokedAt: new Date() }, { where: { apiKey, revokedAt: null } });
      await models.RefreshToken.update({ revokedAt: new Date() }, { where: { apiKey, revokedAt: null } });
    },

    /**
     * Deletes refresh tokens past their expiry: once expired a token is refused by its signature
     * check anyway, so its row (kept until then to recognise a spent token presented again) is no
     * longer needed. Answers how many went.
     */
    async purgeExpiredRefreshTokens(now = new Date()): Promise<number> {
      return models.RefreshToken.destroy({ where: { expiresAt: { [Op.lt]: now } }, limit: 10_000 });
    },

    /** The keys of an account, oldest first, as `ListedApiKey` says (revoked ones too). */
    async listApiKeys(accountId: string): Promise<ListedApiKey[]> {
      const rows = await models.ApiKey.findAll({
        attributes: ['apiKey', 'label', 'createdAt', 'lastUsedAt', 'revokedAt'],
        where: { accountId },
        order: [
          ['createdAt', 'ASC'],
          ['apiKey', 'ASC'],
        ],
      });
      return rows.map((row) => {
        const key = row.get({ plain: true });
        return {
          apiKey: key.apiKey,
          label: key.label,
          createdAt: key.createdAt!,
          lastUsedAt: key.lastUsedAt,
          revokedAt: key.revokedAt,
        };
      });
    },

    /**
     * Records a token pair issued through a key (a login, or a refresh of one): its refresh token,
     * and the key's use, which is written only when the last one recorded is a minute old or more,
     * so that a client logging in on every request costs one write a minute, not one a login.
     */
    async recordRefreshToken(
      token: {
        jti: string;
        apiKey: string;
        accountId: string;
        familyId: string;
        expiresAt: Date;
      },
      now = new Date(),
    ): Promise<void> {
      // The token in a unit of work of its own, run again should certification on a Galera cluster
      // refuse it: it refers to the key's row, which a login with the same key on another node may
      // be recording its use on at the same moment.
      await unitOfWork(models.ApiKey.sequelize!, async (transaction) => {
        await models.RefreshToken.create(token, { transaction });
      });
      // The key's use apart, as bookkeeping: when logins with one key through several nodes record
      // it at once and their writes collide, the one that committed stands for all. A login never
      // fails for it.
      await models.ApiKey.update(
        { lastUsedAt: now },
        {
          where: {
            apiKey: token.apiKey,
            [Op.or]: [
              { lastUsedAt: null },
              { lastUsedAt: { [Op.lte]: new Date(now.getTime() - KEY_USE_PRECISION_MS) } },
            ],
          },
        },
      ).catch((error: unknown) => {
        if (!isConflict(error)) throw error;
      });
    },

    /**
     * Spends a refresh token: it works once. Presenting a spent token again means it leaked, so the
     * whole family (every token descended from the same login) is revoked: its refresh tokens here,
     * its access tokens at their next request (db/visibility.ts). A family is revoked once any token
     * of it is, so a token issued while the family was being revoked is refused too.
     */
    async consumeRefreshToken(jti: string, now = new Date()): Promise<RefreshOutcome> {
      const [spent] = await models.RefreshToken.update(
        { usedAt: now },
        { where: { jti, usedAt: null, revokedAt: null, expiresAt: { [Op.gt]: now } } },
      );
      const row = (await models.RefreshToken.findByPk(jti))?.get({ plain: true });
      if (!row) return { outcome: 'rejected' };
      if (spent !== 1) {
        if (row.usedAt !== null) {
          await models.RefreshToken.update(
            { revokedAt: now },
            { where: { familyId: row.familyId, revokedAt: null } },
          );
        }
        return { outcome: 'rejected' };
      }
      const revoked = await models.RefreshToken.findOne({
        attributes: ['jti'],
        where: { familyId: row.familyId, revokedAt: { [Op.ne]: null } },
      });
      if (revoked || !(await isApiKeyActive(row.apiKey))) return { outcome: 'rejected' };
      return { outcome: 'accepted', apiKey: row.apiKey, accountId: row.accountId, familyId: row.familyId };
    },
  };
}

export type CredentialRepository = ReturnType<typeof createCredentialRepository>;
