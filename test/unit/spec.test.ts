import assert from 'node:assert/strict';
import { ajvOf, toPropertyErrors } from '../../api/request-validation';
import type { OpenApiDocument } from '../../spec';
import { loadSpec, specOperations } from '../../spec';

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

type Json = Record<string, any>;

const PAGINATION_HEADERS = [
  'X-Pagination-Limit',
  'X-Pagination-Offset',
  'X-Pagination-Items',
  'X-Pagination-Pages',
  'X-Pagination-Page',
  'X-Pagination-Token',
  'X-Pagination-Next',
];
const SERVICE_SENSITIVE = [
  'external_ref',
  'contract_ref',
  'purchase_order',
  'billing_account',
  'charged_until',
  'current_billing_start_date',
];

/** Which discriminated unions the document must have, with every value of their discriminator. */
const UNIONS: Record<string, { property: string; values: string[] }> = {
  ProductOffering: {
    property: 'type',
    values: ['connection', 'exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'],
  },
  NetworkService: { property: 'type', values: ['exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'] },
  NetworkServiceRequest: { property: 'type', values: ['p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'] },
  NetworkServiceUpdate: {
    property: 'type',
    values: ['exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'],
  },
  NetworkServicePatch: {
    property: 'type',
    values: ['exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'],
  },
  NetworkFeature: { property: 'type', values: ['route_server'] },
  VlanConfig: { property: 'vlan_type', values: ['port', 'dot1q', 'qinq'] },
};
for (const form of ['', 'Request', 'Update', 'Patch']) {
  UNIONS[`NetworkServiceConfig${form}`] = {
    property: 'type',
    values: ['exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc'],
  };
  UNIONS[`NetworkFeatureConfig${form}`] = { property: 'type', values: ['route_server'] };
  UNIONS[`MemberJoiningRule${form}`] = { property: 'type', values: ['allow', 'deny'] };
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Follows a local `$ref` (one level) inside the document. */
function resolve(document: OpenApiDocument, node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  let target: any = document;
  for (const segment of node.$ref.slice(2).split('/')) {
    target = target[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  assert.ok(target, `unresolved ${node.$ref}`);
  return target as Json;
}

describe('the OpenAPI document', function () {
  // Compiling every schema takes a few seconds alone, and longer beside the other tiers.
  this.timeout(120_000);
  const document = loadSpec();
  const operations = specOperations(document);
  const schemas = document.components.schemas as Record<string, Json>;
  const ajv = ajvOf(document);
  const validator = (name: string) => {
    assert.ok(schemas[name], `schema ${name} exists`);
    return ajv.compile({ $ref: `ixapi-openapi#/components/schemas/${name}` });
  };
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

  it('compiles the schema of every JSON request body and response', () => {
    let compiled = 0;
    for (const { operationId, method, path: route, operation } of operations) {
      const base = ['', 'paths', route, method].map(escapePointer).join('/');
      const pointers: string[] = [];
      for (const mediaType of Object.keys(operation.requestBody?.content ?? {})) {
        if (mediaType.includes('json'))
          pointers.push(`${base}/requestBody/content/${escapePointer(mediaType)}/schema`);
      }
      for (const [code, declared] of Object.entries(operation.responses as Record<string, Json>)) {
        const target = declared.$ref ? (declared.$ref as string).slice(1) : `${base}/responses/${code}`;
        if (resolve(document, declared).content?.['application/json']) {
          pointers.push(`${target}/content/application~1json/schema`);
        }
      }
      for (const pointer of pointers) {
        assert.doesNotThrow(
          () => ajv.compile({ $ref: `ixapi-openapi#${pointer}` }),
          `${operationId}: ${pointer}`,
        );
        compiled++;
      }
    }
    assert.ok(compiled > 400, `compiled ${compiled}`);
  });

  it('discriminates every polymorphic schema by a required single-valued property', () => {
    for (const [name, { property, values }] of Object.entries(UNIONS)) {
      const union = schemas[name];
      assert.ok(union, `schema ${name} exists`);
      assert.equal(union.discriminator?.propertyName, property, `${name} discriminator`);
      const seen: string[] = [];
      for (const variant of union.oneOf as Json[]) {
        const target = resolve(document, variant);
        assert.ok(target.required?.includes(property), `${variant.$ref} requires ${property}`);
        const tag = target.properties?.[property];
        assert.ok(
          tag?.type === 'string' && tag.enum?.length === 1,
          `${variant.$ref}: ${property} has one value`,
        );
        seen.push(tag.enum[0]);
      }
      assert.deepEqual(seen.sort(), [...values].sort(), `${name} variants`);
      for (const [value, target] of Object.entries(
        (union.discriminator?.mapping ?? {}) as Record<string, string>,
      )) {
        const schemaName = target.replace('#/components/schemas/', '');
        assert.ok(schemas[schemaName], `${name} maps ${value} to an existing schema`);
        assert.deepEqual(
          schemas[schemaName].properties[property].enum,
          [value],
          `${name} mapping of ${value}`,
        );
      }
    }
  });

  it('marks the sensitive properties, and only those', () => {
    const expected: Record<string, string[]> = {
      Account: ['external_ref', 'legal_name', 'managing_account', 'address', 'billing_information'],
    };
    const serviceLike = [
      'Connection',
      'PortReservation',
      ...['ExchangeLan', 'P2P', 'MP2MP', 'P2MP', 'Cloud'].flatMap((t) => [
        `${t}NetworkService`,
        `${t}NetworkServiceConfig`,
      ]),
      'RouteServerNetworkFeatureConfig',
    ];
    for (const name of serviceLike) {
      expected[name] = SERVICE_SENSITIVE.filter((field) => schemas[name].properties[field]);
    }
    assert.deepEqual(expected.Connection, SERVICE_SENSITIVE);
    assert.deepEqual(expected.CloudNetworkServiceConfig, SERVICE_SENSITIVE);
    assert.deepEqual(expected.ExchangeLanNetworkService, ['external_ref']);
    for (const [name, fields] of Object.entries(expected)) {
      const flagged = Object.entries(schemas[name].properties as Record<string, Json>)
        .filter(([, property]) => property['x-sensitive'] === true)
        .map(([field]) => field);
      assert.deepEqual(flagged.sort(), [...fields].sort(), name);
    }
  });

  it('keeps read-only properties out of the write forms', () => {
    for (const [name, schema] of Object.entries(schemas)) {
      if (!/(Request|Update|Patch)$/.test(name) || !schema.properties) continue;
      for (const field of ['id', 'state', 'status'])
        assert.equal(schema.properties[field], undefined, `${name}.${field}`);
      for (const [field, property] of Object.entries(schema.properties as Record<string, Json>)) {
        assert.notEqual(property.readOnly, true, `${name}.${field} is read-only`);
      }
    }
  });

  describe('validates sample objects', () => {
    const connection = {
      id: 'conn-1',
      state: 'production',
      name: 'FRA-1',
      managing_account: 'acc-1',
      consuming_account: 'acc-1',
      billing_account: 'acc-1',
      role_assignments: ['ra-1'],
      mode: 'lag_lacp',
      lacp_timeout: null,
      product_offering: 'po-conn-10g',
      pop: 'pop-fra-1',
      port_quantity: 2,
      ports: ['port-1', 'port-2'],
      port_reservations: ['pr-1', 'pr-2'],
      speed: 20000,
      capacity_allocated: 0,
      capacity_allocation_limit: null,
      vlan_types: ['dot1q', 'qinq'],
      outer_vlan_ethertypes: ['0x8100'],
      purchase_order: '',
      external_ref: null,
      decommission_at: null,
    };

    it('accepts a valid Connection and refuses a broken one', () => {
      const validate = validator('Connection');
      assert.equal(validate(connection), true, ajv.errorsText(validate.errors));
      assert.equal(validate({ ...connection, mode: 'bundle' }), false);
      assert.equal(validate({ ...connection, port_quantity: 0 }), false);
      assert.equal(validate({ ...connection, state: 'unknown' }), false);
    });

    it('names `mode` when a ConnectionRequest lacks it', () => {
      const validate = validator('ConnectionRequest');
      const request = {
        managing_account: 'acc-1',
        consuming_account: 'acc-1',
        billing_account: 'acc-1',
        role_assignments: ['ra-1'],
        product_offering: 'po-conn-10g',
        port_quantity: 1,
        mode: 'standalone',
      };
      assert.equal(validate(request), true, ajv.errorsText(validate.errors));
      const { mode: _mode, ...withoutMode } = request;
      assert.equal(validate(withoutMode), false);
      assert.deepEqual(
        toPropertyErrors(validate.errors).map((p) => p.name),
        ['mode'],
      );
    });

    it('accepts a cloud_vc ProductOffering and partial offerings that keep `type`', () => {
      const offering = {
        id: 'po-cloud-1',
        type: 'cloud_vc',
        name: 'Cloud 1G',
        display_name: 'Cloud connect 1G',
        resource_type: 'network_service',
        handover_metro_area: 'ma-fra',
        handover_metro_area_network: 'man-fra',
        service_metro_area: 'ma-fra',
        service_metro_area_network: 'man-fra',
        service_provider: 'Example Cloud',
        physical_port_speed: null,
        downgrade_allowed: true,
        upgrade_allowed: true,
        bandwidth_min: 50,
        bandwidth_max: 1000,
        provider_vlans: 'multi',
        service_provider_region: 'eu-central-1',
        service_provider_pop: null,
        service_provider_workflow: 'provider_first',
        delivery_method: 'shared',
        diversity: 2,
      };
      const validate = validator('ProductOffering');
      assert.equal(validate(offering), true, ajv.errorsText(validate.errors));
      const { diversity: _diversity, ...withoutDiversity } = offering;
      assert.equal(validate(withoutDiversity), false, 'cloud offerings require diversity');
      assert.equal(validate({ ...offering, type: 'cloud' }), false);
      const partial = validator('ProductOfferingPartial');
      assert.equal(partial({ type: 'cloud_vc', name: 'Cloud 1G' }), true, ajv.errorsText(partial.errors));
      assert.equal(partial({ name: 'Cloud 1G' }), false);
    });

    it('accepts an exchange_lan NetworkServiceConfig with a dot1q vlan_config', () => {
      const config = {
        id: 'nsc-1',
        type: 'exchange_lan',
        state: 'requested',
        network_service: 'ns-fra-peering',
        managing_account: 'acc-1',
        consuming_account: 'acc-1',
        billing_account: 'acc-1',
        role_assignments: ['ra-1'],
        connection: 'conn-1',
        vlan_config: { vlan_type: 'dot1q', vlan: 100, vlan_ethertype: '0x8100' },
        asns: [64500],
        macs: [],
        ips: [],
        listed: true,
        capacity: null,
      };
      const validate = validator('NetworkServiceConfig');
      assert.equal(validate(config), true, ajv.errorsText(validate.errors));
      assert.equal(validate({ ...config, vlan_config: { vlan_type: 'dot1q', vlan: 4095 } }), false);
      assert.equal(validate({ ...config, vlan_config: { vlan_type: 'qinq', outer_vlan: 10 } }), false);
      assert.equal(validate({ ...config, asns: [4294967296] }), false);
      const request = validator('NetworkServiceConfigRequest');
      const { id: _id, state: _state, ips: _ips, ...body } = config;
      assert.equal(request(body), true, ajv.errorsText(request.errors));
      const { network_service: _service, ...withoutService } = body;
      assert.equal(request(withoutService), false);
    });
  });
});
