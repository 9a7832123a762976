import type { OpenApiDocument } from '../../spec';
import { specOperations } from '../../spec';
import type { CheckContext, CheckDefinition } from '../runner';
import { cleanUp } from '../steps/cleanup';
import { listOperations } from '../steps/list-operations';
import { propertyNames } from '../steps/problems';

const UNKNOWN_ID = 'conformance-no-such-id';
const WITH_BODY = new Set(['post', 'put', 'patch']);

type Schema = { $ref?: string; required?: string[]; oneOf?: unknown[]; anyOf?: unknown[] };

/** The JSON request schema of an operation, with one level of `$ref` followed. */
function requestSchema(document: OpenApiDocument, operation: { requestBody?: unknown }): Schema | undefined {
  const content = (operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)
    ?.content;
  let schema = content?.['application/json']?.schema;
  if (schema?.$ref) {
    const name = schema.$ref.split('/').pop()!;
    schema = (document.components.schemas as Record<string, Schema>)[name];
  }
  return schema;
}

/**
 * Every operation on one resource answers 404 for an id that does not exist. Reads of collection
 * items are judged by the READ- checks; these cover the rest. Nothing can change, since nothing
 * with that id exists, so they are safe against production.
 */
function notFoundChecks(document: OpenApiDocument): CheckDefinition[] {
  const reads = new Set(listOperations(document).flatMap((op) => (op.read ? [op.read] : [])));
  return specOperations(document)
    .filter((op) => op.path.includes('{id}') && !reads.has(op.operationId))
    .map((op): CheckDefinition => {
      const method = op.method.toUpperCase();
      const withBody = WITH_BODY.has(op.method);
      // A body is validated before or after the lookup; either order is the server's choice.
      const allowed = withBody ? [404, 400, 415] : [404];
      return {
        id: `NF-${op.operationId}`,
        title: `${method} ${op.path} answers 404 for an unknown id`,
        clause: withBody
          ? 'Errors: a request about a resource that does not exist answers 404 not-found (or 400 when its body is refused first).'
          : 'Errors: a request about a resource that does not exist answers 404 not-found.',
        operations: [op.operationId],
        safety: 'read',
        async run(t) {
          const response = await t.call(op.operationId, {
            id: UNKNOWN_ID,
            body: withBody ? {} : undefined,
          });
          t.must(
            allowed.includes(response.status),
            `${method} of an unknown id answered ${response.status}, not ${allowed.join(' or ')}`,
          );
          if (response.status === 404) {
            const type = (response.body as { type?: unknown } | undefined)?.type;
            t.must(
              typeof type === 'string' && type.endsWith('/not-found.html'),
              `the 404 has the problem type ${JSON.stringify(type)}, not not-found`,
            );
          }
        },
      };
    });
}

/**
 * Creating from an empty body is a 400 naming what is missing. Mutating: a server that wrongly
 * accepts the body creates something, which the ledger then removes.
 */
function validationChecks(document: OpenApiDocument): CheckDefinition[] {
  const all = specOperations(document);
  return all
    .filter((op) => op.method === 'post' && !op.path.includes('{') && !op.path.startsWith('/auth/'))
    .map((op): CheckDefinition => {
      const schema = requestSchema(document, op.operation);
      const polymorphic = Boolean(schema?.oneOf ?? schema?.anyOf);
      const required = polymorphic ? [] : (schema?.required ?? []);
      const destroy = all.find((other) => other.method === 'delete' && other.path === `${op.path}/{id}`);
      return {
        id: `VAL-${op.operationId}`,
        title: `POST ${op.path} refuses an empty body with a 400 naming what is missing`,
        clause:
          'Errors: a body that does not satisfy the request schema answers 400 validation-error with properties naming each failing field; nothing is created.',
        operations: [op.operationId],
        safety: 'mutate',
        async run(t: CheckContext) {
          const seq = destroy
            ? t.suite.ledger.intend({ destroy: destroy.operationId, role: 'primary', marker: 'empty body' })
            : undefined;
          const response = await t.call(op.operationId, { body: {} });
          const created = (response.body as { id?: string | number } | undefined)?.id;
          if (response.status < 300 && seq !== undefined && created !== undefined) {
            t.suite.ledger.created(seq, String(created));
            await cleanUp(t);
          } else if (seq !== undefined) {
            t.suite.ledger.removed(seq);
          }
          if (!t.must(response.status === 400, `an empty body answered ${response.status}, not 400`)) return;
          const names = propertyNames(response.body);
          t.must(names.length > 0, 'the 400 names no property');
          const unnamed = required.filter((name) => !names.includes(name));
          t.must(
            unnamed.length === 0,
            `the 400 does not name the missing required ${unnamed.join(', ')} (it names ${names.join(', ')})`,
          );
        },
      };
    });
}

export function statusChecks(document: OpenApiDocument): CheckDefinition[] {
  return [...notFoundChecks(document), ...validationChecks(document)];
}
