import { randomUUID } from 'node:crypto';
import type Ajv from 'ajv';
import { existsSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { NotFoundError } from '../domain/errors';
import type { OpenApiDocument } from '../spec';
import { DOCS_DIR, specText } from '../spec';
import { createAuthenticate } from './authenticate';
import { renderDocsPage } from './docs-page';
import type { MountedOperation, OperationDefinition } from './operations';
import { mountOperations } from './operations';
import { isJsonRequest } from './media-types';
import { problemHandler } from './problems';
import type { RequestValidators } from './request-validation';
import { compileRequestValidators } from './request-validation';
import type { TokenService } from './token-service';

export const API_BASE_PATH = '/api/v2';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const BODY_LIMIT = '1mb';
/** The largest letter of authorisation taken (a scanned, signed page or two). */
export const LOA_LIMIT = '8mb';

export interface AppOptions {
  logger: Logger;
  document: OpenApiDocument;
  /** The validator over `document`, shared by every part of the app. */
  ajv: Ajv;
  tokens: TokenService;
  publicBaseUrl: string;
  /** Body and path validators over `document`; compiled here when not given. */
  validators?: RequestValidators;
  /** Built from the mounted operations; receives what was routed so discovery can report it. */
  operations: (mounted: () => readonly MountedOperation[]) => OperationDefinition[];
}

export function createApp(options: AppOptions) {
  const { logger, document } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

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
  api.use(
    express.json({
      limit: BODY_LIMIT,
      strict: false,
      type: (req) => isJsonRequest(req),
    }),
  );
  // Letters of authorisation arrive as raw PDF bytes.
  api.use(express.raw({ limit: LOA_LIMIT, type: ['application/pdf', 'application/octet-stream'] }));
  api.get('/spec', (_req, res) => {
    res.type('application/yaml').send(specText());
  });
  // The Redoc page built by `npm run docs:build`, with its script beside it; without it, an overview
  // rendered from the document at start-up.
  const builtDocs = path.join(DOCS_DIR, 'index.html');
  const overview = renderDocsPage(document, options.publicBaseUrl);
  api.get('/docs', (_req, res) => {
    if (existsSync(builtDocs)) res.sendFile(builtDocs);
    else res.type('html').send(overview);
  });
  api.use('/docs', express.static(DOCS_DIR, { index: false }));

  let mounted: MountedOperation[] = [];
  mounted = mountOperations({
    router: api,
    document,
    definitions: options.operations(() => mounted),
    validators: options.validators ?? compileRequestValidators(document, options.ajv),
    authenticate: createAuthenticate(options.tokens),
  });

  app.use(API_BASE_PATH, api);
  app.use((req) => {
    throw new NotFoundError(`no resource at ${req.method} ${req.path}`);
  });
  app.use(problemHandler(logger));
  return { app, mounted: () => mounted };
}
