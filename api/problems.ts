import type { ErrorRequestHandler, Response } from 'express';
import { RequestProblem } from './request-problems';
import type { Logger } from 'pino';
import { isConflict, isUnavailable } from '../db/unit-of-work';
import type { ProblemTypeName } from '../domain/errors';
import { ConnectionAcquireTimeoutError, ForeignKeyConstraintError, UniqueConstraintError } from 'sequelize';
import {
  DomainError,
  HttpProblem,
  NotFoundError,
  problemTypeUri,
  UnableToFulfillError,
  ValidationError,
} from '../domain/errors';

/** Seconds a client waits before it asks again while the database is unavailable. */
const DATABASE_RETRY_AFTER_S = 5;

/** Writes an IX-API problem response. */
export function sendProblem(res: Response, error: DomainError): void {
  // Read by the request metrics (api/metrics.ts) once the answer is sent.
  res.locals.problemType = error.typeName;
  res
    .status(error.status)
    .type('application/json')
    .json({
      type: problemTypeUri(error.typeName),
      title: error.title,
      status: error.status,
      detail: error.message,
      ...error.extensions(),
    });
}

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  message?: string;
}

/** Errors raised by Express's body parser, in IX-API's vocabulary. */
function fromBodyParser(error: BodyParserError): DomainError | undefined {
  const problem = (status: number, type: ProblemTypeName, title: string, detail: string) =>
    new HttpProblem(status, type, title, detail);
  switch (error.type) {
    case 'entity.parse.failed':
      return new ValidationError([{ name: 'body', reason: 'The request body is not valid JSON.' }]);
    case 'entity.too.large':
      return problem(
        413,
        'payload-too-large',
        'Payload Too Large',
        'The request body exceeds the size limit.',
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return problem(
        415,
        'unsupported-media-type',
        'Unsupported Media Type',
        error.message ?? 'Unsupported encoding.',
      );
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new ValidationError([{ name: 'body', reason: 'The request body could not be read.' }]);
    default:
      // Anything else the parser refused as the client's fault (a body whose Content-Encoding it is
      // not in, say) changed nothing: a 400 naming the body.
      return error.status !== undefined && error.status >= 400 && error.status < 500
        ? new ValidationError([
            { name: 'body', reason: 'The request body could not be read as its headers describe it.' },
          ])
        : undefined;
  }
}

/** The one place where errors become HTTP responses. Anything unexpected is logged and answered 500. */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof DomainError) {
      sendProblem(res, error);
      return;
    }
    if (error instanceof RequestProblem) {
      res.locals.problemType = error.type;
      res.set(error.headers).status(error.status).type('application/json').json(error.body());
      return;
    }
    // The checks before a write see the database as it was; a concurrent write can still make the
    // write itself collide (a new reference, the same role twice, a deadlock that outlasted its
    // retries). Nothing changed: say so.
    if (
      error instanceof ForeignKeyConstraintError ||
      error instanceof UniqueConstraintError ||
      isConflict(error)
    ) {
      (req.log ?? logger).warn({ err: (error as Error).message }, 'write collided with a concurrent change');
      sendProblem(
        res,
        new UnableToFulfillError(
          'body',
          'a concurrent change got in the way; nothing was changed, try again',
        ),
      );
      return;
    }
    // Every database connection stayed busy for longer than a request may wait for one; or the
    // database (on a Galera cluster, this replica's node) is down or not part of the cluster yet,
    // and another replica, or this one a little later, can serve. A write whose connection went
    // while it committed may have been taken, which the answer cannot know: the client looks first.
    const unavailable =
      error instanceof ConnectionAcquireTimeoutError
        ? {
            log: 'no database connection free in time',
            retryAfterS: 2,
            detail:
              'The service is too busy to take this request now; nothing was changed, try again shortly.',
          }
        : isUnavailable(error)
          ? {
              log: 'the database is unavailable',
              retryAfterS: DATABASE_RETRY_AFTER_S,
              detail:
                'The database is unavailable for a moment; try again shortly. A change sent just now may have been taken: read it back before you send it again.',
            }
          : undefined;
    if (unavailable) {
      (req.log ?? logger).warn({ err: (error as Error).message }, unavailable.log);
      res.set('Retry-After', String(unavailable.retryAfterS));
      sendProblem(res, new HttpProblem(503, 'server-error', 'Service Unavailable', unavailable.detail));
      return;
    }
    // A path whose percent-encoding does not decode names nothing this server has.
    if (error instanceof URIError) {
      sendProblem(res, new NotFoundError(`no resource at ${req.method} ${req.originalUrl.split('?')[0]}`));
      return;
    }
    const parserProblem = typeof error === 'object' && error !== null ? fromBodyParser(error) : undefined;
    if (parserProblem) {
      sendProblem(res, parserProblem);
      return;
    }
    (req.log ?? logger).error({ err: error }, 'unhandled error');
    sendProblem(
      res,
      new HttpProblem(
        500,
        'server-error',
        'Internal Server Error',
        'The server could not complete the request.',
      ),
    );
  };
}
