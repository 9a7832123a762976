import assert from 'node:assert/strict';
import { ajvOf } from '../../api/request-validation';
import { loadSpec, specOperations } from '../../spec';
import type { Json } from '../support/openapi';
import { resolve } from '../support/openapi';

/** The IX-API 2.6 operations the document must contain: operationId, method, path. */
const IXAPI_26_OPERATIONS: ReadonlyArray<readonly [string, string, string]> = [
  ['auth_token_create', 'POST', '/auth/token'],
  ['auth_token_refresh', 'POST', '/auth/refresh'],
  ['facilities_list', 'GET', '/facilities'],
  ['facilities_read', 'GET', '/facilities/{id}'],
  ['devices_list', 'GET', '/devices'],
  ['devices_read', 'GET', '/devices/{id}'],
  ['pops_list', 'GET', '/pops'],
  ['pops_read', 'GET', '/pops/{id}'],
  ['metro_area_networks_list', 'GET', '/metro-area-networks'],
  ['metro_area_networks_read', 'GET', '/metro-area-networks/{id}'],
  ['metro_areas_list', 'GET', '/metro-areas'],
  ['metro_areas_read', 'GET', '/metro-areas/{id}'],
  ['product_offerings_list', 'GET', '/product-offerings'],
  ['product_offerings_read', 'GET', '/product-offerings/{id}'],
  ['availability_zones_list', 'GET', '/availability-zones'],
  ['availability_zones_read', 'GET', '/availability-zones/{id}'],
  ['ports_list', 'GET', '/ports'],
  ['ports_read', 'GET', '/ports/{id}'],
  ['ports_statistics_read', 'GET', '/ports/{id}/statistics'],
  ['port_reservations_list', 'GET', '/port-reservations'],
  ['port_reservations_create', 'POST', '/port-reservations'],
  ['port_reservations_read', 'GET', '/port-reservations/{id}'],
  ['port_reservations_update', 'PUT', '/port-reservations/{id}'],
  ['port_reservations_partial_update', 'PATCH', '/port-reservations/{id}'],
  ['port_reservations_destroy', 'DELETE', '/port-reservations/{id}'],
  ['port_reservation_cancellation_policy_read', 'GET', '/port-reservations/{id}/cancellation-policy'],
  ['port_reservations_loa_download', 'GET', '/port-reservations/{id}/loa'],
  ['port_reservations_loa_upload', 'POST', '/port-reservations/{id}/loa'],
  ['connections_list', 'GET', '/connections'],
  ['connections_create', 'POST', '/connections'],
  ['connections_read', 'GET', '/connections/{id}'],
  ['connections_update', 'PUT', '/connections/{id}'],
  ['connections_partial_update', 'PATCH', '/connections/{id}'],
  ['connections_destroy', 'DELETE', '/connections/{id}'],
  ['connections_cancellation_policy_read', 'GET', '/connections/{id}/cancellation-policy'],
  ['connections_loa_download', 'GET', '/connections/{id}/loa'],
  ['connections_loa_upload', 'POST', '/connections/{id}/loa'],
  ['connections_statistics_read', 'GET', '/connections/{id}/statistics'],
  ['network_service_configs_list', 'GET', '/network-service-configs'],
  ['network_service_configs_create', 'POST', '/network-service-configs'],
  ['network_service_configs_read', 'GET', '/network-service-configs/{id}'],
  ['network_service_configs_update', 'PUT', '/network-service-configs/{id}'],
  ['network_service_configs_partial_update', 'PATCH', '/network-service-configs/{id}'],
  ['network_service_configs_destroy', 'DELETE', '/network-service-configs/{id}'],
  [
    'network_service_config_cancellation_policy_read',
    'GET',
    '/network-service-configs/{id}/cancellation-policy',
  ],
  ['network_service_configs_statistics_read', 'GET', '/network-service-configs/{id}/statistics'],
  ['network_services_list', 'GET', '/network-services'],
  ['network_services_create', 'POST', '/network-services'],
  ['network_services_read', 'GET', '/network-services/{id}'],
  ['network_services_update', 'PUT', '/network-services/{id}'],
  ['network_services_partial_update', 'PATCH', '/network-services/{id}'],
  ['network_services_destroy', 'DELETE', '/network-services/{id}'],
  ['network_service_cancellation_policy_read', 'GET', '/network-services/{id}/cancellation-policy'],
  ['network_service_change_request_read', 'GET', '/network-services/{id}/change-request'],
  ['network_service_change_request_create', 'POST', '/network-services/{id}/change-request'],
  ['network_service_change_request_destroy', 'DELETE', '/network-services/{id}/change-request'],
  ['network_services_statistics_read', 'GET', '/network-services/{id}/statistics'],
  ['network_features_list', 'GET', '/network-features'],
  ['network_features_read', 'GET', '/network-features/{id}'],
  ['network_feature_configs_list', 'GET', '/network-feature-configs'],
  ['network_feature_configs_create', 'POST', '/network-feature-configs'],
  ['network_feature_configs_read', 'GET', '/network-feature-configs/{id}'],
  ['network_feature_configs_update', 'PUT', '/network-feature-configs/{id}'],
  ['network_feature_configs_partial_update', 'PATCH', '/network-feature-configs/{id}'],
  ['network_feature_configs_destroy', 'DELETE', '/network-feature-configs/{id}'],
  ['member_joining_rules_list', 'GET', '/member-joining-rules'],
  ['member_joining_rules_create', 'POST', '/member-joining-rules'],
  ['member_joining_rules_read', 'GET', '/member-joining-rules/{id}'],
  ['member_joining_rules_update', 'PUT', '/member-joining-rules/{id}'],
  ['member_joining_rules_partial_update', 'PATCH', '/member-joining-rules/{id}'],
  ['member_joining_rules_destroy', 'DELETE', '/member-joining-rules/{id}'],
  ['accounts_list', 'GET', '/accounts'],
  ['accounts_create', 'POST', '/accounts'],
  ['accounts_read', 'GET', '/accounts/{id}'],
  ['accounts_update', 'PUT', '/accounts/{id}'],
  ['accounts_partial_update', 'PATCH', '/accounts/{id}'],
  ['accounts_destroy', 'DELETE', '/accounts/{id}'],
  ['account_read', 'GET', '/account'],
  ['contacts_list', 'GET', '/contacts'],
  ['contacts_create', 'POST', '/contacts'],
  ['contacts_read', 'GET', '/contacts/{id}'],
  ['contacts_update', 'PUT', '/contacts/{id}'],
  ['contacts_partial_update', 'PATCH', '/contacts/{id}'],
  ['contacts_destroy', 'DELETE', '/contacts/{id}'],
  ['roles_list', 'GET', '/roles'],
  ['roles_read', 'GET', '/roles/{id}'],
  ['role_assignments_list', 'GET', '/role-assignments'],
  ['role_assignments_create', 'POST', '/role-assignments'],
  ['role_assignments_read', 'GET', '/role-assignments/{id}'],
  ['role_assignments_destroy', 'DELETE', '/role-assignments/{id}'],
  ['ips_list', 'GET', '/ips'],
  ['ips_create', 'POST', '/ips'],
  ['ips_read', 'GET', '/ips/{id}'],
  ['ips_update', 'PUT', '/ips/{id}'],
  ['ips_partial_update', 'PATCH', '/ips/{id}'],
  ['macs_list', 'GET', '/macs'],
  ['macs_create', 'POST', '/macs'],
  ['macs_read', 'GET', '/macs/{id}'],
  ['macs_destroy', 'DELETE', '/macs/{id}'],
  ['api_health_read', 'GET', '/health'],
  ['api_implementation_read', 'GET', '/implementation'],
  ['api_extensions_list', 'GET', '/extensions'],
];

interface ExpectedOperation {
  operationId: string;
  method: string;
  path: string;
}

function expectedOperations(): ExpectedOperation[] {
  return IXAPI_26_OPERATIONS.map(([operationId, method, route]) => ({ operationId, method, path: route }));
}

const PAGINATION_HEADERS = [
  'X-Pagination-Limit',
  'X-Pagination-Offset',
  'X-Pagination-Items',
  'X-Pagination-Pages',
  'X-Pagination-Page',
  'X-Pagination-Token',
  'X-Pagination-Next',
];

describe('the OpenAPI document', function () {
  // Compiling every schema takes a few seconds alone, and longer beside the other tiers.
  this.timeout(120_000);
  const document = loadSpec();
  const operations = specOperations(document);
  const ajv = ajvOf(document);
  const parametersOf = (operation: Json) =>
    ((operation.parameters ?? []) as Json[]).map((p) => resolve(document, p));

  it('is OpenAPI 3.0.3 for IX-API 2.6.0 under /api/v2', () => {
    assert.equal(document.openapi, '3.0.3');
    assert.equal(document.info.version, '2.6.0');
    assert.deepEqual(document.servers, [{ url: '/api/v2' }]);
  });

  it('contains every IX-API 2.6 operation with its method and path', () => {
    const byId = new Map(operations.map((op) => [op.operationId, op]));
    const expected = expectedOperations();
    assert.equal(expected.length, 102);
    const missing = expected.filter((op) => !byId.has(op.operationId)).map((op) => op.operationId);
    assert.deepEqual(missing, []);
    for (const op of expected) {
      const actual = byId.get(op.operationId)!;
      assert.equal(
        `${actual.method.toUpperCase()} ${actual.path}`,
        `${op.method} ${op.path}`,
        op.operationId,
      );
    }
  });

  it('adds only the events extension, marked as such', () => {
    const known = new Set(expectedOperations().map((op) => op.operationId));
    const extra = operations.filter((op) => !known.has(op.operationId));
    assert.deepEqual(
      extra.map((op) => `${op.operationId} ${op.method} ${op.path}`),
      ['events_list get /events'],
    );
    assert.equal(extra[0].operation['x-ixapi-extension'], true);
    assert.deepEqual(extra[0].operation.tags, ['extensions']);
  });

  it('has unique operationIds, each with tags and a one-line summary', () => {
    const ids = operations.map((op) => op.operationId);
    assert.deepEqual(
      ids.filter((id, index) => ids.indexOf(id) !== index),
      [],
    );
    for (const { operationId, operation } of operations) {
      assert.ok(Array.isArray(operation.tags) && operation.tags.length > 0, `${operationId} has tags`);
      assert.match(String(operation.summary), /^[^\n]+$/, `${operationId} has a one-line summary`);
    }
  });

  it('requires a token everywhere except for the auth, health, implementation and extensions operations', () => {
    assert.deepEqual(document.security, [{ bearerAuth: [] }]);
    const open = operations.filter(
      (op) => Array.isArray(op.operation.security) && op.operation.security.length === 0,
    );
    assert.deepEqual(open.map((op) => op.operationId).sort(), [
      'api_extensions_list',
      'api_health_read',
      'api_implementation_read',
      'auth_token_create',
      'auth_token_refresh',
    ]);
    for (const { operationId, operation } of operations) {
      if (open.some((op) => op.operationId === operationId)) continue;
      assert.ok(operation.responses['401'], `${operationId} documents 401`);
      assert.ok(operation.responses['403'], `${operationId} documents 403`);
    }
  });

  it('paginates every list: 206 with the pagination headers, 200 unless page_limit has a default, id and page_* parameters', () => {
    const lists = operations.filter((op) => op.operationId.endsWith('_list'));
    assert.equal(lists.length, 23);
    const paged: string[] = [];
    for (const { operationId, operation } of lists) {
      const limit = parametersOf(operation).find((p) => p.name === 'page_limit');
      assert.ok(limit, `${operationId} takes page_limit`);
      const size = limit.schema.default as number | undefined;
      const ok = operation.responses['200'] ? resolve(document, operation.responses['200']) : undefined;
      const partial = resolve(document, operation.responses['206'] as Json);
      assert.ok(partial, `${operationId} documents 206`);
      if (size === undefined) assert.ok(ok, `${operationId} documents 200`);
      else {
        // A list with a default page size never answers whole.
        paged.push(operationId);
        assert.equal(ok, undefined, `${operationId} documents 200, yet pages by default`);
        assert.ok(Number.isInteger(size) && size >= limit.schema.minimum && size <= limit.schema.maximum);
      }
      const schema = (ok ?? partial).content['application/json'].schema;
      assert.equal(schema.type, 'array', `${operationId} returns an array`);
      assert.deepEqual(partial.content['application/json'].schema, schema, `${operationId} 206 schema`);
      assert.deepEqual(Object.keys(partial.headers ?? {}), PAGINATION_HEADERS, `${operationId} 206 headers`);
      for (const name of PAGINATION_HEADERS) {
        assert.equal(partial.headers[name].$ref, `#/components/headers/${name}`, `${operationId} ${name}`);
      }
      const names = parametersOf(operation).map((p) => `${p.in}:${p.name}`);
      for (const name of ['id', 'page_limit', 'page_offset', 'page_token']) {
        assert.ok(names.includes(`query:${name}`), `${operationId} takes ${name}`);
      }
      assert.ok(operation.responses['400'], `${operationId} documents 400`);
    }
    const headers = document.components.headers as Record<string, Json>;
    for (const name of PAGINATION_HEADERS) {
      assert.equal(
        headers[name].schema.type,
        name.endsWith('Token') || name.endsWith('Next') ? 'string' : 'integer',
      );
    }
    const limit = resolve(document, { $ref: '#/components/parameters/page_limit' });
    assert.deepEqual(limit.schema, { type: 'integer', minimum: 1, maximum: 1000 });
    // Only the event log, which may hold hundreds of thousands of events, pages by default.
    assert.deepEqual(paged, ['events_list']);
    const events = operations.find((op) => op.operationId === 'events_list')!.operation;
    const eventsLimit = parametersOf(events).find((p) => p.name === 'page_limit')!;
    assert.deepEqual(eventsLimit.schema, { type: 'integer', minimum: 1, maximum: 1000, default: 1000 });
  });

  it('declares every filter parameter completely and uses the State schema for state filters', () => {
    for (const { operationId, operation } of operations) {
      for (const parameter of parametersOf(operation)) {
        assert.ok(parameter.name && parameter.in && parameter.schema, `${operationId} ${parameter.name}`);
        if (parameter.in === 'query')
          assert.equal(parameter.required, false, `${operationId} ${parameter.name}`);
        if (parameter.name === 'state' || parameter.name === 'state__is_not') {
          assert.equal(
            parameter.schema.$ref,
            '#/components/schemas/State',
            `${operationId} ${parameter.name}`,
          );
        }
      }
    }
    const facilities = operations.find((op) => op.operationId === 'facilities_list')!;
    const names = parametersOf(facilities.operation).map((p) => String(p.name));
    for (const suffix of ['', '_lt', '_lte', '_gt', '_gte'])
      assert.ok(names.includes(`capability_speed${suffix}`));
  });

  it('addresses every resource by the shared id path parameter and answers 404 on reads', () => {
    for (const { operationId, method, path: route, operation } of operations) {
      if (!route.includes('{id}')) continue;
      const ids = ((operation.parameters ?? []) as Json[]).filter((p) => resolve(document, p).in === 'path');
      assert.deepEqual(ids, [{ $ref: '#/components/parameters/ResourceId' }], operationId);
      assert.ok(operation.responses['404'], `${operationId} documents 404`);
      if (method === 'get') assert.ok(operation.responses['200'], `${operationId} answers 200`);
    }
    const id = resolve(document, { $ref: '#/components/parameters/ResourceId' });
    assert.equal(id.required, true);
    assert.deepEqual(id.schema, { type: 'string', maxLength: 80, pattern: '^[A-Za-z0-9:_-]+$' });
  });

  it('documents 413 and 415 wherever a body is accepted, and both PATCH media types', () => {
    for (const { operationId, method, operation } of operations) {
      if (!operation.requestBody) continue;
      assert.ok(operation.responses['413'], `${operationId} documents 413`);
      assert.ok(operation.responses['415'], `${operationId} documents 415`);
      if (method === 'patch') {
        const content = operation.requestBody.content;
        assert.deepEqual(Object.keys(content).sort(), ['application/json', 'application/merge-patch+json']);
        assert.deepEqual(content['application/merge-patch+json'].schema, content['application/json'].schema);
      }
    }
  });

  it('answers writes with the statuses the project decided on', () => {
    const status = (operationId: string) => {
      const op = operations.find((o) => o.operationId === operationId)!;
      return Object.keys(op.operation.responses).filter((code) => code.startsWith('2'));
    };
    for (const family of [
      'connections',
      'port_reservations',
      'network_services',
      'network_service_configs',
    ]) {
      for (const verb of ['update', 'partial_update', 'destroy'])
        assert.deepEqual(status(`${family}_${verb}`), ['202']);
      const destroy = operations.find((o) => o.operationId === `${family}_destroy`)!.operation;
      assert.equal(destroy.requestBody?.required, false, `${family}_destroy body is optional`);
    }
    for (const verb of ['update', 'partial_update', 'destroy']) {
      assert.deepEqual(status(`network_feature_configs_${verb}`), ['202']);
      assert.deepEqual(status(`member_joining_rules_${verb}`), ['200']);
      assert.deepEqual(status(`contacts_${verb}`), ['200']);
    }
    assert.deepEqual(status('accounts_update'), ['202']);
    assert.deepEqual(status('accounts_partial_update'), ['202']);
    for (const id of ['accounts_destroy', 'role_assignments_destroy', 'macs_destroy', 'ips_update']) {
      assert.deepEqual(status(id), ['200'], id);
    }
    for (const { operationId, method } of operations) {
      if (method === 'post' && operationId.endsWith('_create') && !operationId.startsWith('auth_')) {
        assert.deepEqual(status(operationId), operationId.includes('change_request') ? ['202'] : ['201']);
      }
    }
  });

  it('describes conflicts as 400 unable-to-fulfill problems with what to change and a list of conflicts', () => {
    const responses = document.components.responses as Record<string, Json>;
    const oneOf = responses.ValidationOrConflict.content['application/json'].schema.oneOf as Json[];
    assert.deepEqual(
      oneOf.map((s) => String(s.$ref)),
      ['#/components/schemas/ValidationProblem', '#/components/schemas/UnableToFulfillProblem'],
    );
    const validate = ajv.compile({
      $ref: 'ixapi-openapi#/components/responses/ValidationOrConflict/content/application~1json/schema',
    });
    const problem = { title: 'Unable to fulfill your request.', status: 400 };
    const conflict = {
      resource_type: 'contacts',
      resource_id: 'c1',
      resource_property: null,
      remote_resource_type: 'role-assignments',
      remote_resource_id: 'ra1',
    };
    const unable = {
      ...problem,
      type: 'https://errors.ix-api.net/v2/unable-to-fulfill.html',
      properties: [{ name: 'id', reason: 'role-assignments ra1 still needs it' }],
      conflicts: [conflict],
    };
    assert.equal(validate(unable), true, ajv.errorsText(validate.errors));
    const invalid = {
      ...problem,
      type: 'https://errors.ix-api.net/v2/validation-error.html',
      properties: [{ name: 'name', reason: 'Give a name.' }],
    };
    assert.equal(validate(invalid), true, ajv.errorsText(validate.errors));
    // Every 400 says what to change: no problem without properties, none with an empty list.
    const { properties: _said, ...unexplained } = unable;
    assert.equal(validate(unexplained), false, 'an unable-to-fulfill problem without properties');
    assert.equal(validate({ ...invalid, properties: [] }), false, 'an empty list of properties');
    assert.equal(
      validate({ ...problem, type: unable.type }),
      false,
      'a problem without conflicts or properties',
    );
    assert.equal(validate({ ...unable, conflicts: [{ ...conflict, resource_type: 'things' }] }), false);
    const { resource_property: _property, ...incomplete } = conflict;
    assert.equal(validate({ ...unable, conflicts: [incomplete] }), false, 'resource_property is required');
    for (const id of ['contacts_destroy', 'connections_create', 'network_service_change_request_create']) {
      const op = operations.find((o) => o.operationId === id)!.operation;
      assert.equal((op.responses['400'] as Json).$ref, '#/components/responses/ValidationOrConflict', id);
    }
  });
});
