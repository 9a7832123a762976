import { trace } from '@opentelemetry/api';
import type { Request, RequestHandler, Router } from 'express';
import express from 'express';
import type { Logger } from 'pino';
import { HttpProblem, NotFoundError } from '../domain/errors';
import type { HttpMethod, OpenApiDocument } from '../spec';
import { specOperations } from '../spec';
import type { Idempotency } from './idempotency';
import { isJsonRequest, mediaTypeOf } from './media-types';
import type { RequestValidators } from './request-validation';

/** Who is calling, once the bearer token has been verified. */
export interface Caller {
  accountId: string;
  apiKey: string;
  /** Its own account and every account it manages, recursively, as read for this request. */
  accounts: readonly string[];
}

export interface OperationContext {
  params: Record<string, string>;
  query: Request['query'];
  body: unknown;
  headers: Request['headers'];
  /** The client's address, as Express reads it (behind a trusted proxy, the forwarded one). */
  address?: string;
  caller: Caller | undefined;
  log: Logger;
}

export interface Reply {
  status: number;
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * An IX-API operation implemented by this server. Method and path come from the OpenAPI document
 * by operationId, so they are never restated here.
 */
export interface OperationDefinition {
  operationId: string;
  /** False for the few operations anyone may call (the two auth operations, health, implementation). */
  authenticated: boolean;
  /**
   * The handler validates the body itself: a partial update of a polymorphic resource may leave
   * `type` out (pyixapi does), and only the handler knows the stored type to validate it with.
   */
  validatesBody?: boolean;
  handle(context: OperationContext): Promise<Reply>;
}

export interface MountedOperation {
  operationId: string;
  method: HttpMethod;
  path: string;
}

function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/** Checks that run before a request's body is read (rate limits, see api/rate-limits.ts). */
export interface RequestGuards {
  /** A request to an operation anyone may call, before anything of it is read. */
  anonymous(req: Request, operationId: string): Promise<void>;
  /** A request to an authenticated operation, once its caller is known. */
  caller(req: Request, caller: Caller): Promise<void>;
}

/** The most a JSON body of an authenticated operation may weigh. */
export const BODY_LIMIT = '1mb';
/** The most a JSON body of an operation anyone may call (the auth operations) may weigh. */
export const ANONYMOUS_BODY_LIMIT = '16kb';
/** The largest letter of authorisation taken (a scanned, signed page or two). */
export const LOA_LIMIT = '8mb';

const WRITE_METHODS = new Set<HttpMethod>(['post', 'put', 'patch', 'delete']);

/** Answers about a caller's resources, tokens and refusals alike, are the caller's alone: no cache keeps them. */
const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};

/**
 * The body parsers an operation needs, for the media types it takes and nothing else: an operation
 * without a request body reads none, and only letters of authorisation are read as raw bytes.
 */
function bodyParsers(mediaTypes: readonly string[], authenticated: boolean): RequestHandler[] {
  const parsers: RequestHandler[] = [];
  if (mediaTypes.some((type) => type.includes('json'))) {
    parsers.push(
      express.json({
        limit: authenticated ? BODY_LIMIT : ANONYMOUS_BODY_LIMIT,
        strict: false,
        type: (req) => isJsonRequest(req),
      }),
    );
  }
  const raw = mediaTypes.filter((type) => !type.includes('json'));
  if (raw.length) parsers.push(express.raw({ limit: LOA_LIMIT, type: raw }));
  return parsers;
}

/**
 * Routes every definition at the method and path the document gives its operationId. Throws at
 * start-up for an operationId the document does not know, so nothing is routed off-contract.
 *
 * A request passes, in order: its guard (before authentication for operations anyone may call), the
 * bearer token and the caller's guard, the media-type check, the body parser of the operation (so
 * no body is read before the caller is known, and none for operations that take none), validation,
 * and, for writes with an `Idempotency-Key`, the key's record.
 */
export function mountOperations(options: {
  router: Router;
  document: OpenApiDocument;
  definitions: readonly OperationDefinition[];
  validators: RequestValidators;
  authenticate: RequestHandler;
  guards: RequestGuards;
  idempotency: Idempotency;
}): MountedOperation[] {
  const { router, document, definitions, validators, authenticate, guards, idempotency } = options;
  const byId = new Map(specOperations(document).map((op) => [op.operationId, op]));
  const mounted: MountedOperation[] = [];
  const methodsByPath = new Map<string, Set<string>>();
  for (const definition of definitions) {
    const spec = byId.get(definition.operationId);
    if (!spec) throw new Error(`operation ${definition.operationId} is not in the OpenAPI document`);
    const path = expressPath(spec.path);
    const mediaTypes = Object.keys(spec.operation.requestBody?.content ?? {});
    const retrySafe = definition.authenticated && WRITE_METHODS.has(spec.method);
    // Read by the request metrics (api/metrics.ts): the operation id, never the path, labels a request.
    // The request's span (when traced) is named by the route and the operation id likewise.
    const spanName = `${spec.method.toUpperCase()} ${spec.path}`;
    const named: RequestHandler = (_req, res, next) => {
      res.locals.operationId = definition.operationId;
      trace
        .getActiveSpan()
        ?.updateName(spanName)
        .setAttributes({ 'http.route': spec.path, 'ixapi.operation_id': definition.operationId });
      next();
    };
    const guard: RequestHandler = async (req, res, next) => {
      if (definition.authenticated) await guards.caller(req, res.locals.caller as Caller);
      else await guards.anonymous(req, definition.operationId);
      next();
    };
    const mediaTypeCheck: RequestHandler = (req, _res, next) => {
      // A body of a kind the operation does not take is refused rather than silently ignored.
      const hasBody =
        Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if (hasBody && mediaTypes.length && !mediaTypes.includes(mediaTypeOf(req))) {
        throw new HttpProblem(
          415,
          'unsupported-media-type',
          'Unsupported Media Type',
          `Send the request body as ${mediaTypes.join(' or ')}.`,
        );
      }
      next();
    };
    const handler: RequestHandler = async (req, res) => {
      if (!validators.pathMatches(definition.operationId, req.params as Record<string, string>)) {
        throw new NotFoundError(`no ${spec.path.split('/')[1]} at ${req.path}`);
      }
      // Handlers that validate against the stored type still get no text nor nesting the document
      // refuses everywhere: the body is fingerprinted (idempotency) before they see it.
      if (!definition.validatesBody) validators.body(definition.operationId, req.body);
      else validators.text(req.body);
      const caller = res.locals.caller as Caller | undefined;
      const execute = () =>
        definition.handle({
          params: req.params as Record<string, string>,
          query: req.query,
          body: req.body,
          headers: req.headers,
          address: req.ip,
          caller,
          log: req.log,
        });
      const key = retrySafe ? idempotency.keyOf(req.headers) : undefined;
      const reply =
        key && caller
          ? await idempotency.run(
              { account: caller.accountId, key, method: req.method, path: req.originalUrl, body: req.body },
              execute,
            )
          : await execute();
      if (reply.headers) res.set(reply.headers);
      if (reply.contentType) res.type(reply.contentType);
      res.status(reply.status);
      if (Buffer.isBuffer(reply.body) || typeof reply.body === 'string') res.send(reply.body);
      else res.json(reply.body);
    };
    const chain = definition.authenticated
      ? [named, noStore, authenticate, guard, mediaTypeCheck, ...bodyParsers(mediaTypes, true), handler]
      : [named, noStore, guard, mediaTypeCheck, ...bodyParsers(mediaTypes, false), handler];
    router[spec.method](path, ...chain);
    mounted.push({ operationId: definition.operationId, method: spec.method, path: spec.path });
    const methods = methodsByPath.get(path) ?? new Set<string>();
    methods.add(spec.method.toUpperCase());
    methodsByPath.set(path, methods);
  }
  // A known path with an unknown method is a 405 that names the allowed methods.
  for (const [path, methods] of methodsByPath) {
    router.all(path, (req, res) => {
      const allowed = [...methods].sort().join(', ');
      res.set('Allow', allowed);
      throw new HttpProblem(
        405,
        'method-not-allowed',
        'Method Not Allowed',
        `${req.method} is not allowed here; use ${allowed}.`,
      );
    });
  }
  return mounted;
}
