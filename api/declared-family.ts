import type { DeclaredResource } from '../db/declared-store';
import { declaredCollection } from '../db/declared-store';
import { ownedScope } from '../db/scope';
import { accessToOwned, actsFor } from '../domain/authority';
import type { DeclaredFamily, DeclaredWrite } from '../domain/declared-family';
import { DECLARED_HAPPENINGS, declaredEventType, declaredWrites } from '../domain/declared-family';
import { redact } from '../domain/redaction';
import type { DocumentFragment, ResourceFamily } from './families';
import { generatedWrites } from './family-writes';
import { redactionPlanFor } from './redaction-plans';

type Schema = Record<string, unknown>;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const ACCOUNT = { type: 'string', maxLength: 80 };
const json = (schema: Schema) => ({ 'application/json': { schema } });

/** The answers every write documents beside its success, by status. */
const WRITE_ANSWERS = {
  '400': ref('responses', 'ValidationOrConflict'),
  '401': ref('responses', 'AuthenticationFailed'),
  '403': ref('responses', 'PermissionDenied'),
  '409': ref('responses', 'IdempotencyKeyInUse'),
  '413': ref('responses', 'PayloadTooLarge'),
  '415': ref('responses', 'UnsupportedMediaType'),
  '422': ref('responses', 'IdempotencyKeyReused'),
  '429': ref('responses', 'TooManyRequests'),
  '503': ref('responses', 'ServiceUnavailable'),
};
const PAGINATION_HEADERS = ['Limit', 'Offset', 'Items', 'Pages', 'Page', 'Token', 'Next'].map(
  (name) => `X-Pagination-${name}`,
);

/**
 * The part of the document a declared family adds: its read schema (sensitive properties marked),
 * its request schemas, and its six operations with the parameters and answers every collection of
 * the document has.
 */
export function declaredDocument(family: DeclaredFamily): DocumentFragment {
  const { schema: name, noun } = family.title;
  const prefix = family.collection.replace(/-/g, '_');
  const tags = [family.collection];
  const own = Object.fromEntries(
    Object.entries(family.properties).map(([property, declared]) => [
      property,
      declared.sensitive ? { ...declared.schema, 'x-sensitive': true } : { ...declared.schema },
    ]),
  );
  const required = Object.entries(family.properties)
    .filter(([, declared]) => declared.required)
    .map(([property]) => property);
  const writable = { managing_account: ACCOUNT, consuming_account: ACCOUNT, ...own };
  const request = { type: 'object', required: ['managing_account', 'consuming_account', ...required] };
  const item = ref('schemas', name);
  const one = (description: string) => ({ description, content: json(item) });
  const list = (description: string) => ({ description, content: json({ type: 'array', items: item }) });
  const body = (schema: string, patch = false) => ({
    required: true,
    content: {
      ...json(ref('schemas', schema)),
      ...(patch ? { 'application/merge-patch+json': { schema: ref('schemas', schema) } } : {}),
    },
  });
  const byId = [ref('parameters', 'IdempotencyKey'), ref('parameters', 'ResourceId')];
  /** What a write to one resource answers: the resource, or that there is none, or a write's problems. */
  const changedAnswers = (description: string) => ({
    '200': one(description),
    '404': ref('responses', 'NotFound'),
    ...WRITE_ANSWERS,
  });
  const filters = Object.entries(family.properties)
    .filter(([, declared]) => declared.filter)
    .map(([property, declared]) => {
      const { nullable: _nullable, ...schema } = declared.schema;
      return {
        name: property,
        in: 'query',
        required: false,
        description: `Only ${family.collection} of this ${property}.`,
        schema,
      };
    });
  const writes = declaredWrites(family);
  const without = (item: Record<string, unknown>, methods: Record<string, DeclaredWrite>) =>
    Object.fromEntries(
      Object.entries(item).filter(([method]) => !(method in methods) || writes.includes(methods[method])),
    );
  const schemas = {
    [name]: {
      type: 'object',
      required: ['id', 'managing_account', 'consuming_account', ...required],
      properties: { id: { ...ACCOUNT, readOnly: true }, ...writable },
    },
    [`${name}Request`]: { ...request, properties: writable },
    ...(writes.includes('change') ? { [`${name}Patch`]: { type: 'object', properties: writable } } : {}),
  };
  return {
    schemas,
    paths: {
      [`/${family.collection}`]: without(
        {
          get: {
            operationId: `${prefix}_list`,
            tags,
            summary: `List ${noun}s.`,
            parameters: [
              ...[
                'id',
                'page_limit',
                'page_offset',
                'page_token',
                'managing_account',
                'consuming_account',
              ].map((parameter) => ref('parameters', parameter)),
              ...filters,
            ],
            responses: {
              '200': list('The whole collection (without page_limit).'),
              '206': {
                ...list('One page of the collection (with page_limit).'),
                headers: Object.fromEntries(
                  PAGINATION_HEADERS.map((header) => [header, ref('headers', header)]),
                ),
              },
              '400': ref('responses', 'ValidationError'),
              '401': ref('responses', 'AuthenticationFailed'),
              '403': ref('responses', 'PermissionDenied'),
              '429': ref('responses', 'TooManyRequests'),
              '503': ref('responses', 'ServiceUnavailable'),
            },
          },
          post: {
            operationId: `${prefix}_create`,
            tags,
            summary: `Create a ${noun}.`,
            parameters: [ref('parameters', 'IdempotencyKey')],
            requestBody: body(`${name}Request`),
            responses: { '201': one('The new resource.'), ...WRITE_ANSWERS },
          },
        },
        { post: 'create' },
      ),
      [`/${family.collection}/{id}`]: without(
        {
          get: {
            operationId: `${prefix}_read`,
            tags,
            summary: `Read a ${noun}.`,
            parameters: [ref('parameters', 'ResourceId')],
            responses: {
              '200': one('The resource.'),
              '401': ref('responses', 'AuthenticationFailed'),
              '403': ref('responses', 'PermissionDenied'),
              '404': ref('responses', 'NotFound'),
              '429': ref('responses', 'TooManyRequests'),
              '503': ref('responses', 'ServiceUnavailable'),
            },
          },
          put: {
            operationId: `${prefix}_update`,
            tags,
            summary: `Replace a ${noun}.`,
            parameters: byId,
            requestBody: body(`${name}Request`),
            responses: changedAnswers('The updated resource.'),
          },
          patch: {
            operationId: `${prefix}_partial_update`,
            tags,
            summary: `Change some properties of a ${noun}.`,
            parameters: byId,
            requestBody: body(`${name}Patch`, true),
            responses: changedAnswers('The updated resource.'),
          },
          delete: {
            operationId: `${prefix}_destroy`,
            tags,
            summary: `Delete a ${noun}.`,
            parameters: byId,
            responses: changedAnswers('The deleted resource.'),
          },
        },
        { put: 'change', patch: 'change', delete: 'destroy' },
      ),
    },
  };
}

/**
 * The resource family of a declaration (domain/declared-family.ts): its collection, scoped to the
 * resources' two sides (or public, redacted for everybody else), the writes generated for it (the
 * managing side creates, changes and deletes, for accounts it acts for, under the family's own
 * rule), its events, whose payloads show the resource as a read does, and its part of the document.
 */
export function declaredFamily(family: DeclaredFamily): ResourceFamily {
  const collection = declaredCollection(family);
  const prefix = family.collection.replace(/-/g, '_');
  const writes = declaredWrites(family);
  const layout = { resources: { [family.resource]: { family: family.collection } } };
  const owners =
    (visibility: { accounts: readonly string[] }) =>
    (_value: unknown, params: { bind(value: unknown): string }) =>
      ownedScope(params.bind(visibility.accounts));
  return {
    name: family.collection,
    asynchronous: false,
    // IX-API's own families are in the document and the list of kinds of event already.
    ...(family.standard
      ? {}
      : {
          document: declaredDocument(family),
          events: Object.fromEntries(
            writes.map((write) => [declaredEventType(family, DECLARED_HAPPENINGS[write]), layout]),
          ),
        }),
    versioned: [family.table],
    collections: (document) => {
      const plan = redactionPlanFor(document, family.title.schema);
      return [
        {
          collection,
          list: `${prefix}_list`,
          read: `${prefix}_read`,
          ...(family.visibility === 'owned'
            ? { scope: owners }
            : {
                present: (item, visibility) =>
                  actsFor(visibility, item.managing_account as string) ||
                  actsFor(visibility, item.consuming_account as string)
                    ? item
                    : redact(item, plan),
                fullView: owners,
              }),
        },
      ];
    },
    operations(deps) {
      // The store is asked for at the first request: building the operations uses nothing of the database.
      const store = () => deps.db.declared(family);
      return {
        handlers: generatedWrites<Record<string, unknown>, [DeclaredResource]>(this, deps, {
          // A public resource is there for everybody, so changing another's is forbidden, not unknown.
          access: (scope, resource) => {
            const access = accessToOwned(resource, scope);
            return access === 'none' && family.visibility === 'public' ? 'discover' : access;
          },
          references: ['managing_account', 'consuming_account'],
          problems: (input, { scope, now }) => family.problems?.(input, { scope, now }) ?? [],
          ...(writes.includes('create')
            ? {
                create: async (input: Record<string, unknown>) => ({ resource: await store().create(input) }),
              }
            : {}),
          ...(writes.includes('change')
            ? {
                change: async (
                  id: string,
                  decide: (current?: DeclaredResource) => Promise<Record<string, unknown>>,
                ) => ({
                  resource: await store().change(id, (current) => decide(current)),
                }),
              }
            : {}),
          ...(writes.includes('destroy')
            ? {
                destroy: async (id: string, allow: (resource: DeclaredResource) => void) => ({
                  resource: await store().destroy(id, allow),
                }),
              }
            : {}),
        }),
      };
    },
  };
}
