import { decodeJwt } from 'jose';
import type { OpenApiDocument } from '../../spec';
import { specOperations } from '../../spec';
import type { CheckContext, CheckDefinition } from '../runner';

const problemType = (name: string) => `https://errors.ix-api.net/v2/${name}.html`;

function expiryOf(token: unknown): number | undefined {
  try {
    return typeof token === 'string' ? decodeJwt(token).exp : undefined;
  } catch {
    return undefined;
  }
}

/** An authenticated GET the server declares, to try tokens on. */
function probePath(t: CheckContext): string {
  if (t.suite.isDeclared('account_read')) return t.path('account_read');
  for (const id of t.suite.declared) {
    const op = t.suite.operations.get(id);
    if (op && op.method === 'GET' && !op.path.includes('{') && op.operation.security?.length !== 0)
      return op.path;
  }
  return t.inconclusive('the server declares no authenticated GET operation to try tokens on');
}

/** Authentication: tokens, refresh, and what happens without them. */
export const AUTH_CHECKS: CheckDefinition[] = [
  {
    id: 'AUTH-001',
    title: 'Valid API credentials give an access and a refresh token',
    clause:
      'Authentication: POST /auth/token with api_key and api_secret answers 201 with access_token and refresh_token.',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const credentials = t.suite.options.credentials.primary;
      const response = await t.call('auth_token_create', { role: null, body: credentials });
      t.must(response.status === 201, `answered ${response.status}, not 201`);
      const body = response.body as { access_token?: unknown; refresh_token?: unknown } | undefined;
      t.must(typeof body?.access_token === 'string', 'no access_token');
      t.must(typeof body?.refresh_token === 'string', 'no refresh_token');
      // Real clients decode both tokens to learn when to refresh.
      t.should(expiryOf(body?.access_token) !== undefined, 'the access token is not a JWT with exp');
      t.should(expiryOf(body?.refresh_token) !== undefined, 'the refresh token is not a JWT with exp');
    },
  },
  {
    id: 'AUTH-002',
    title: 'Wrong API credentials are refused with 401',
    clause: 'Authentication: invalid credentials answer 401 with an authentication error problem.',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const { api_key } = t.suite.options.credentials.primary;
      const response = await t.call('auth_token_create', {
        role: null,
        body: { api_key, api_secret: 'x'.repeat(86) },
      });
      t.must(response.status === 401, `a wrong secret answered ${response.status}, not 401`);
    },
  },
  {
    id: 'AUTH-003',
    title: 'An incomplete token request is a 400 naming the missing fields',
    clause: 'Errors: a validation error answers 400 with properties naming each failing field.',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.call('auth_token_create', { role: null, body: {} });
      t.must(response.status === 400, `an empty body answered ${response.status}, not 400`);
      const names = ((response.body as { properties?: Array<{ name?: unknown }> })?.properties ?? []).map(
        (p) => String(p.name),
      );
      t.must(
        names.includes('api_key') && names.includes('api_secret'),
        `properties name ${JSON.stringify(names)}, not api_key and api_secret`,
      );
    },
  },
  {
    id: 'AUTH-004',
    title: 'A refresh token gives a new pair of tokens',
    clause: 'Authentication: POST /auth/refresh with a refresh token answers 201 with new tokens.',
    operations: ['auth_token_refresh', 'auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const session = await t.suite.login('primary');
      const response = await t.call('auth_token_refresh', {
        role: null,
        body: { refresh_token: session.refreshToken },
      });
      t.must(response.status === 201, `refresh answered ${response.status}, not 201`);
      const fresh = (response.body as { access_token?: string } | undefined)?.access_token;
      if (t.must(typeof fresh === 'string', 'no access_token in the answer')) {
        const probe = await t.send({ method: 'GET', path: probePath(t), token: fresh });
        t.must(probe.status === 200, `the refreshed access token was refused (${probe.status})`);
      }
    },
  },
  {
    id: 'AUTH-005',
    title: 'An access token does not work as a refresh token',
    clause: 'Authentication: only a refresh token refreshes.',
    operations: ['auth_token_refresh'],
    requires: [],
    safety: 'read',
    async run(t) {
      const session = await t.suite.login('primary');
      const response = await t.call('auth_token_refresh', {
        role: null,
        body: { refresh_token: session.accessToken },
      });
      t.must(response.status >= 400 && response.status < 500, `answered ${response.status}`);
    },
  },
  {
    id: 'AUTH-006',
    title: 'A tampered token is refused with 401',
    clause: 'Authentication: a token whose signature does not match is not a credential.',
    operations: [],
    requires: [],
    safety: 'read',
    async run(t) {
      const token = await t.token();
      const parts = token.split('.');
      if (parts.length !== 3) t.inconclusive('the access token is not a JWT; cannot tamper with its claims');
      const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(
        JSON.stringify({ ...claims, exp: Number(claims.exp ?? 0) + 86_400 }),
      ).toString('base64url');
      const response = await t.send({
        method: 'GET',
        path: probePath(t),
        token: `${parts[0]}.${forged}.${parts[2]}`,
      });
      t.must(response.status === 401, `a tampered token answered ${response.status}, not 401`);
      t.must(
        t.suite.problemDocumentProblems(response).length === 0,
        `not a problem: ${t.suite.problemDocumentProblems(response).join('; ')}`,
      );
    },
  },
  {
    id: 'AUTH-007',
    title: 'An expired token is refused with 401',
    clause: 'Authentication: a token past its exp is not a credential (signature-expired).',
    operations: [],
    requires: [],
    safety: 'read',
    async run(t) {
      const token = await t.token();
      const exp = expiryOf(token);
      if (exp === undefined) t.inconclusive('the access token carries no exp');
      // Without the server's key no expired token can be made; a token whose exp lies in the past
      // but whose signature is the original one must be refused either way.
      const parts = token.split('.');
      const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString()) as Record<string, unknown>;
      const expired = Buffer.from(JSON.stringify({ ...claims, exp: 1_000_000_000 })).toString('base64url');
      const response = await t.send({
        method: 'GET',
        path: probePath(t),
        token: `${parts[0]}.${expired}.${parts[2]}`,
      });
      t.must(response.status === 401, `an expired token answered ${response.status}, not 401`);
      const type = (response.body as { type?: string } | undefined)?.type;
      t.should(
        type === problemType('signature-expired') || type === problemType('authentication-error'),
        `problem type ${JSON.stringify(type)}`,
      );
    },
  },
  {
    id: 'AUTH-008',
    title: 'Credentials of the wrong length are refused as invalid input',
    clause:
      'Authentication: api_key has exactly 16 characters and api_secret exactly 86; other lengths are a 400 validation error naming the field.',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const { api_key, api_secret } = t.suite.options.credentials.primary;
      const cases = [
        { field: 'api_key', body: { api_key: `${api_key}x`, api_secret } },
        { field: 'api_key', body: { api_key: api_key.slice(0, 15), api_secret } },
        { field: 'api_secret', body: { api_key, api_secret: `${api_secret}x` } },
      ];
      for (const { field, body } of cases) {
        const length = body[field as keyof typeof body].length;
        const response = await t.call('auth_token_create', { role: null, body });
        if (response.status === 401) {
          // Refusing as wrong credentials keeps the secret; only the error type is imprecise.
          t.should(false, `a ${field} of ${length} characters answered 401, not a 400 validation error`);
          continue;
        }
        if (
          !t.must(
            response.status === 400,
            `a ${field} of ${length} characters answered ${response.status}, not 400`,
          )
        )
          continue;
        const names = ((response.body as { properties?: Array<{ name?: unknown }> })?.properties ?? []).map(
          (p) => String(p.name),
        );
        t.must(
          names.includes(field),
          `the 400 for a ${field} of ${length} characters names ${JSON.stringify(names)}`,
        );
      }
    },
  },
];

const PUBLIC = new Set([
  'auth_token_create',
  'auth_token_refresh',
  'api_health_read',
  'api_implementation_read',
]);

/**
 * One check per operation that needs a token: without one it answers 401 with a problem. It
 * changes nothing whatever the server does, so it is safe against production, and it proves the
 * operation is routed (a declared operation answering 404 or 501 fails).
 */
export function tokenRequiredChecks(document: OpenApiDocument): CheckDefinition[] {
  return specOperations(document)
    .filter((op) => !PUBLIC.has(op.operationId) && op.operation.security?.length !== 0)
    .map((op) => ({
      id: `SEC-${op.operationId}`,
      title: `${op.method.toUpperCase()} ${op.path} needs a token`,
      clause:
        'Authentication: every operation but the public ones requires a bearer token; without one it answers 401.',
      operations: [op.operationId],
      safety: 'read' as const,
      async run(t: CheckContext) {
        const hasBody = op.operation.requestBody !== undefined;
        const response = await t.send({
          method: op.method.toUpperCase(),
          path: t.path(op.operationId, { id: 'conformance-probe' }),
          body: hasBody ? {} : undefined,
        });
        t.must(response.status === 401, `without a token it answered ${response.status}, not 401`);
        if (response.status === 401) {
          const problems = t.suite.problemDocumentProblems(response);
          t.must(problems.length === 0, problems.join('; '));
        }
      },
    }));
}
