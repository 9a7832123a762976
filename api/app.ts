import { randomUUID } from 'node:crypto';
import type Ajv from 'ajv';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parse as parseQuery } from 'node:querystring';
import express from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { NotFoundError } from '../domain/errors';
import type { OpenApiDocument } from '../spec';
import { DOCS_DIR, specText } from '../spec';
import type { CallerReads } from './authenticate';
import { createAuthenticate } from './authenticate';
import { renderDocsPage } from './docs-page';
import type { Idempotency } from './idempotency';
import type { MemberExport } from './ixf-member-export';
import { memberExportRouter } from './ixf-member-export';
import type { RequestMetrics } from './metrics';
import { measureRequests } from './metrics';
import type { MountedOperation, OperationDefinition, RequestGuards } from './operations';
import { mountOperations } from './operations';
import { problemHandler } from './problems';
import type { RequestValidators } from './request-validation';
import { compileRequestValidators } from './request-validation';
import type { TokenService } from './token-service';

export const API_BASE_PATH = '/api/v2';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * What the docs page may load: its own script and styles (Redoc sets styles inline and searches in a
 * worker it makes from a blob), nothing from elsewhere, and it may not be framed.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface AppOptions {
  logger: Logger;
  document: OpenApiDocument;
  /** The validator over `document`, shared by every part of the app. */
  ajv: Ajv;
  tokens: TokenService;
  /** The accounts each caller acts for, and whether its API key may still be used. */
  callers: CallerReads;
  /** Rate limits, before any body is read. */
  guards: RequestGuards;
  idempotency: Idempotency;
  /** Express `trust proxy`: which peers may name the client's address. */
  trustProxy?: string;
  publicBaseUrl: string;
  /** The document as served at /spec, where it is not the file's (families added to it); the file's by default. */
  specText?: string;
  /** Body and path validators over `document`; compiled here when not given. */
  validators?: RequestValidators;
  /** Request metrics (api/metrics.ts), when the metrics listener is on. */
  metrics?: RequestMetrics;
  /** Built from the mounted operations; receives what was routed so discovery can report it. */
  operations: (mounted: () => readonly MountedOperation[]) => OperationDefinition[];
  /**
   * The IX-F member export, served beside the base path at `/ixf/member-export`
   * (api/ixf-member-export.ts): how it is made, and how long caches may keep it.
   */
  memberExport?: { read: () => Promise<MemberExport>; maxAgeSeconds: number };
}

export function createApp(options: AppOptions) {
  const { logger, document } = options;
  const app = express();
  app.disable('x-powered-by');
  if (options.metrics) app.use(measureRequests(options.metrics));
  app.set('etag', false);
  if (options.trustProxy !== undefined) app.set('trust proxy', trustProxyValue(options.trustProxy));
  // Every parameter counts: the request line is bounded already (api/listener.ts), and a list longer
  // than the document allows must be refused, not cut short at querystring's default of 1000 keys.
  app.set('query parser', (text: string) => parseQuery(text, undefined, undefined, { maxKeys: 0 }));
  app.use((req, res, next) => {
    // No answer is ever to be read as another type than the one it declares.
    res.set('X-Content-Type-Options', 'nosniff');
    // Answers carry no validators (no ETag, no Last-Modified), so a conditional request has nothing
    // to match: it gets the answer, never a 304 no operation documents.
    delete req.headers['if-none-match'];
    delete req.headers['if-modified-since'];
    next();
  });

  app.use(
    pinoHttp({
      logger,
      genReqId(req, res) {
        const incoming = req.headers['x-request-id'];
        const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  const api = express.Router();
  // The document and its rendering are the same for everyone: they read no body and need no token,
  // but count against the address's limit like every other request without one.
  const publicGuard: express.RequestHandler = async (req, _res, next) => {
    await options.guards.anonymous(req, 'docs');
    next();
  };
  api.get('/spec', publicGuard, (_req, res) => {
    res.type('application/yaml').send(options.specText ?? specText());
  });
  // The Redoc page built by `npm run docs:build`, with its script beside it; without it, an overview
  // rendered from the document at start-up.
  const builtDocs = path.join(DOCS_DIR, 'index.html');
  const overview = renderDocsPage(document, options.publicBaseUrl);
  api.get('/docs', publicGuard, (_req, res) => {
    res.set('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
    if (existsSync(builtDocs)) res.sendFile(builtDocs);
    else res.type('html').send(overview);
  });
  api.use('/docs', publicGuard, express.static(DOCS_DIR, { index: false }));

  let mounted: MountedOperation[] = [];
  mounted = mountOperations({
    router: api,
    document,
    definitions: options.operations(() => mounted),
    validators: options.validators ?? compileRequestValidators(document, options.ajv),
    authenticate: createAuthenticate({
      tokens: options.tokens,
      callers: options.callers,
      rejected: (req) => options.guards.anonymous(req, 'rejected token'),
    }),
    guards: options.guards,
    idempotency: options.idempotency,
  });

  app.use(API_BASE_PATH, api);
  if (options.memberExport)
    app.use(
      memberExportRouter({
        ...options.memberExport,
        guard: (req) => options.guards.anonymous(req, 'ixf member export'),
      }),
    );
  app.use((req) => {
    throw new NotFoundError(`no resource at ${req.method} ${req.path}`);
  });
  app.use(problemHandler(logger));
  return { app, mounted: () => mounted };
}

/** `TRUST_PROXY` as Express takes it: a hop count, true/false, or addresses, subnets and names. */
function trustProxyValue(setting: string): number | boolean | string {
  if (/^\d+$/.test(setting)) return Number(setting);
  if (setting === 'true' || setting === 'false') return setting === 'true';
  return setting;
}
