import type { Request, RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import { HttpProblem, NotFoundError } from '../domain/errors';
import type { HttpMethod, OpenApiDocument } from '../spec';
import { specOperations } from '../spec';
import { mediaTypeOf } from './media-types';
import type { RequestValidators } from './request-validation';

/** Who is calling, once the bearer token has been verified. */
export interface Caller {
  accountId: string;
  apiKey: string;
}

export interface OperationContext {
  params: Record<string, string>;
  query: Request['query'];
  body: unknown;
  headers: Request['headers'];
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

/**
 * Routes every definition at the method and path the document gives its operationId. Throws at
 * start-up for an operationId the document does not know, so nothing is routed off-contract.
 */
export function mountOperations(options: {
  router: Router;
  document: OpenApiDocument;
  definitions: readonly OperationDefinition[];
  validators: RequestValidators;
  authenticate: RequestHandler;
}): MountedOperation[] {
  const { router, document, definitions, validators, authenticate } = options;
  const byId = new Map(specOperations(document).map((op) => [op.operationId, op]));
  const mounted: MountedOperation[] = [];
  const methodsByPath = new Map<string, Set<string>>();
  for (const definition of definitions) {
    const spec = byId.get(definition.operationId);
    if (!spec) throw new Error(`operation ${definition.operationId} is not in the OpenAPI document`);
    const path = expressPath(spec.path);
    const mediaTypes = Object.keys(spec.operation.requestBody?.content ?? {});
    const handler: RequestHandler = async (req, res) => {
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
      if (!validators.pathMatches(definition.operationId, req.params as Record<string, string>)) {
        throw new NotFoundError(`no ${spec.path.split('/')[1]} at ${req.path}`);
      }
      if (!definition.validatesBody) validators.body(definition.operationId, req.body);
      const reply = await definition.handle({
        params: req.params as Record<string, string>,
        query: req.query,
        body: req.body,
        headers: req.headers,
        caller: res.locals.caller as Caller | undefined,
        log: req.log,
      });
      if (reply.headers) res.set(reply.headers);
      if (reply.contentType) res.type(reply.contentType);
      res.status(reply.status);
      if (Buffer.isBuffer(reply.body) || typeof reply.body === 'string') res.send(reply.body);
      else res.json(reply.body);
    };
    const chain = definition.authenticated ? [authenticate, handler] : [handler];
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
