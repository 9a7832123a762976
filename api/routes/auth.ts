import type { CredentialRepository } from '../../db/repositories/credential-repository';
import { AuthenticationError, SignatureExpiredError } from '../../domain/errors';
import type { Schemas } from '../../spec';
import type { OperationContext, OperationDefinition, Reply } from '../operations';
import type { TokenService } from '../token-service';

/**
 * POST /auth/token and POST /auth/refresh. Both ignore any Authorization header: some clients send
 * the refresh token there as well as in the body.
 */
export function authOperations(deps: {
  credentials: CredentialRepository;
  tokens: TokenService;
  /**
   * Runs the check of a login's key and secret within the failure budgets of the request's client
   * address (api/rate-limits.ts): refused before it is checked once they are used up.
   */
  limitFailures: <T>(
    context: OperationContext,
    apiKey: string,
    verify: () => Promise<T | null>,
  ) => Promise<T | null>;
  /** Told of every pair issued and every request refused for its credentials or refresh token. */
  onToken?: (operationId: string, outcome: 'issued' | 'refused') => void;
}): OperationDefinition[] {
  const { credentials, tokens } = deps;

  /** Reports the operation's outcome: a pair issued, or refused for what authenticates it. */
  const reported = (definition: OperationDefinition): OperationDefinition => ({
    ...definition,
    async handle(context) {
      try {
        const reply = await definition.handle(context);
        deps.onToken?.(definition.operationId, 'issued');
        return reply;
      } catch (error) {
        if (error instanceof AuthenticationError || error instanceof SignatureExpiredError) {
          deps.onToken?.(definition.operationId, 'refused');
        }
        throw error;
      }
    },
  });

  async function issue(subject: {
    accountId: string;
    apiKey: string;
    familyId?: string;
    authTime?: Date;
  }): Promise<Reply> {
    const pair = await tokens.issuePair(subject);
    await credentials.recordRefreshToken({
      jti: pair.refresh.jti,
      apiKey: pair.refresh.apiKey,
      accountId: pair.refresh.accountId,
      familyId: pair.refresh.familyId,
      expiresAt: pair.refresh.expiresAt,
    });
    const body: Schemas['AuthToken'] = { access_token: pair.access_token, refresh_token: pair.refresh_token };
    return { status: 201, body };
  }

  const definitions: OperationDefinition[] = [
    {
      operationId: 'auth_token_create',
      authenticated: false,
      async handle(context) {
        const { api_key, api_secret } = context.body as Schemas['AuthTokenRequest'];
        const key = await deps.limitFailures(context, api_key, () =>
          credentials.verifyApiKey(api_key, api_secret),
        );
        if (!key) throw new AuthenticationError('the API key and secret do not match an active key');
        return issue({ accountId: key.accountId, apiKey: key.apiKey });
      },
    },
    {
      operationId: 'auth_token_refresh',
      authenticated: false,
      async handle({ body }) {
        const { refresh_token } = body as Schemas['RefreshTokenRequest'];
        const claims = await tokens.verifyRefresh(refresh_token);
        const spent = await credentials.consumeRefreshToken(claims.jti);
        if (spent.outcome !== 'accepted') {
          throw new AuthenticationError('the refresh token has been used, revoked or is unknown');
        }
        return issue({
          accountId: spent.accountId,
          apiKey: spent.apiKey,
          familyId: spent.familyId,
          authTime: claims.authTime,
        });
      },
    },
  ];
  return deps.onToken ? definitions.map(reported) : definitions;
}
