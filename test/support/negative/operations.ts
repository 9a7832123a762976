import type { OpenApiDocument } from '../../../spec';
import { operationParameters, specOperations } from '../../../spec';
import type { Schema } from './schema-values';
import { SchemaReader } from './schema-values';

/** What the campaign needs to know of one operation, all from the document. */
export interface CampaignOperation {
  operationId: string;
  method: string;
  path: string;
  /** The first segment of the path (`network-services`), which names the resource family. */
  family: string;
  /** Whether it needs a bearer token (everything but the two auth operations and discovery). */
  authenticated: boolean;
  /** A write: POST, PUT, PATCH or DELETE. */
  write: boolean;
  /** The media types of its request body; none when it takes no body. */
  mediaTypes: string[];
  /** The schema of its JSON body, if it takes one. */
  bodySchema?: Schema;
  bodyRequired: boolean;
  /**
   * A change of a polymorphic resource (`type` decides its schema): the server takes `type` from
   * the stored resource when the body leaves it out, as pyixapi sends it.
   */
  typedUpdate: boolean;
  pathParameter?: Schema;
  queryParameters: Array<{ name: string; schema: Schema }>;
  /** Matches the operation's path, as Express does (case aside): one segment per parameter. */
  matcher: RegExp;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function segmentPattern(path: string): RegExp {
  const pattern = path
    .split('/')
    .map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${pattern}/?$`, 'i');
}

/** The operations of the document the server declares, in the document's order. */
export function campaignOperations(
  document: OpenApiDocument,
  declared: readonly string[],
): CampaignOperation[] {
  const reader = new SchemaReader(document);
  return specOperations(document)
    .filter((op) => declared.includes(op.operationId))
    .map((op) => {
      const content = (op.operation.requestBody?.content ?? {}) as Record<string, { schema?: Schema }>;
      const json = Object.keys(content).find((type) => type.includes('json'));
      const bodySchema = json ? content[json].schema : undefined;
      const method = op.method.toUpperCase();
      const [pathParameter] = operationParameters(document, op.path, op.method, op.operation, 'path');
      return {
        operationId: op.operationId,
        method,
        path: op.path,
        family: op.path.split('/')[1],
        authenticated: !(Array.isArray(op.operation.security) && op.operation.security.length === 0),
        write: WRITES.has(method),
        mediaTypes: Object.keys(content),
        ...(bodySchema ? { bodySchema } : {}),
        bodyRequired: op.operation.requestBody?.required ?? false,
        typedUpdate:
          (method === 'PUT' || method === 'PATCH') &&
          Array.isArray(reader.resolve(bodySchema).oneOf) &&
          op.path.includes('{id}'),
        ...(pathParameter ? { pathParameter: reader.resolve(pathParameter[0].schema) } : {}),
        queryParameters: operationParameters(document, op.path, op.method, op.operation, 'query').map(
          ([parameter]) => ({ name: parameter.name, schema: reader.resolve(parameter.schema) }),
        ),
        matcher: segmentPattern(op.path),
      };
    });
}

/** The operation a method and path reach on the server, if any (paths without `/api/v2` or query). */
export function routedOperation(
  operations: readonly CampaignOperation[],
  method: string,
  path: string,
): CampaignOperation | undefined {
  return operations.find((op) => op.method === method && op.matcher.test(path));
}
