import assert from 'node:assert/strict';
import { ajvOf, toPropertyErrors } from '../../api/request-validation';
import { loadSpec, specOperations } from '../../spec';
import type { Json } from '../support/openapi';
import { resolve } from '../support/openapi';

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
