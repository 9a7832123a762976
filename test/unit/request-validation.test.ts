import assert from 'node:assert/strict';
import { compileRequestValidators, createAjv, toPropertyErrors } from '../../api/request-validation';
import { ValidationError } from '../../domain/errors';
import { loadSpec } from '../../spec';

describe('request validation from the OpenAPI document', () => {
  const validators = compileRequestValidators(loadSpec());

  it('accepts a valid body', () => {
    validators.body('auth_token_create', { api_key: 'k'.repeat(16), api_secret: 's'.repeat(86) });
  });

  it('lists every failing property by name', () => {
    assert.throws(
      () => validators.body('auth_token_create', { api_key: 'short' }),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.properties
          .map((p) => p.name)
          .sort()
          .join() === 'api_key,api_secret',
    );
  });

  it('requires a body where the operation does', () => {
    assert.throws(() => validators.body('auth_token_refresh', undefined), ValidationError);
    assert.throws(() => validators.body('auth_token_refresh', null), ValidationError);
  });

  it('names nested properties with dots and understands nullable references', () => {
    const ajv = createAjv(loadSpec());
    const validate = ajv.compile({ $ref: 'ixapi-openapi#/components/schemas/Account' });
    const account = { id: 'a', name: 'A', metro_area_network_presence: [], billing_information: null };
    assert.equal(validate(account), true, ajv.errorsText(validate.errors));
    assert.equal(validate({ ...account, address: { country: 'Germany' } }), false);
    const names = toPropertyErrors(validate.errors).map((p) => p.name);
    assert.ok(names.includes('address.country'), names.join());
    assert.ok(names.includes('address.locality'), names.join());
  });
});

describe('bounded validation', () => {
  const document = loadSpec();
  const ajv = createAjv(document);
  const validators = compileRequestValidators(document, ajv);
  const failing = (operationId: string, body: unknown): ValidationError => {
    try {
      validators.body(operationId, body);
    } catch (error) {
      if (error instanceof ValidationError) return error;
      throw error;
    }
    assert.fail(`${operationId} accepted ${JSON.stringify(body).slice(0, 80)}`);
  };
  const connection = {
    managing_account: 'acc-1',
    consuming_account: 'acc-1',
    billing_account: 'acc-1',
    role_assignments: ['ra-1'],
    product_offering: 'po-1',
    port_quantity: 1,
    mode: 'standalone',
  };
  const exchangeLanConfig = {
    type: 'exchange_lan',
    network_service: 'ns-1',
    managing_account: 'acc-1',
    consuming_account: 'acc-1',
    billing_account: 'acc-1',
    role_assignments: ['ra-1'],
    connection: 'conn-1',
    vlan_config: { vlan_type: 'port' },
    asns: [64500],
    listed: true,
  };

  it('names at most 20 properties and says in the detail how many more failed', () => {
    const error = failing('connections_create', { ...connection, role_assignments: Array(100).fill(7) });
    assert.equal(error.properties.length, 20);
    assert.deepEqual(
      error.properties.map((p) => p.name),
      Array.from({ length: 20 }, (_, i) => `role_assignments.${i}`),
    );
    assert.match(error.message, /; and 80 more properties did not validate$/);
    assert.ok(error.message.length < 2000, `detail of ${error.message.length} characters`);
    const exactly = failing('connections_create', { ...connection, role_assignments: Array(20).fill(7) });
    assert.equal(exactly.properties.length, 20);
    assert.doesNotMatch(exactly.message, /more/);
  });

  it('refuses an array over its maxItems by its length alone, without looking at each item', () => {
    const validate = ajv.compile({
      $ref: 'ixapi-openapi#/components/schemas/ExchangeLanNetworkServiceConfigRequest',
    });
    const body = { ...exchangeLanConfig, asns: Array(100_000).fill(-1) };
    assert.equal(validate(body), false);
    assert.deepEqual(
      validate.errors?.map((e) => `${e.instancePath} ${e.keyword}`),
      ['/asns maxItems'],
    );
    const error = failing('network_service_configs_create', body);
    assert.deepEqual(error.properties, [{ name: 'asns', reason: 'Must NOT have more than 100 items.' }]);
    // Within the bound every bad item is still named.
    const some = failing('network_service_configs_create', { ...exchangeLanConfig, asns: [1, -1, 2, -2] });
    assert.deepEqual(
      some.properties.map((p) => p.name),
      ['asns.1', 'asns.3'],
    );
  });

  it('refuses a string over its maxLength without matching its pattern or format', () => {
    const validate = ajv.compile({ $ref: 'ixapi-openapi#/components/schemas/ContactRequest' });
    const contact = { managing_account: 'acc-1', consuming_account: 'acc-1' };
    assert.equal(validate({ ...contact, telephone: `+1${'2'.repeat(100_000)}` }), false);
    assert.deepEqual(
      validate.errors?.map((e) => `${e.instancePath} ${e.keyword}`),
      ['/telephone maxLength'],
    );
    assert.equal(validate({ ...contact, telephone: 'not a number' }), false);
    assert.deepEqual(
      validate.errors?.map((e) => `${e.instancePath} ${e.keyword}`),
      ['/telephone pattern', '/telephone if'],
    );
    assert.deepEqual(
      failing('contacts_create', { ...contact, telephone: 'not a number' }).properties.map((p) => p.name),
      ['telephone'],
    );
  });

  it('refuses integers beyond the bounds JavaScript holds exactly', () => {
    for (const capacity of [JSON.parse('1e400') as number, 2 ** 63, Number.MAX_SAFE_INTEGER + 2]) {
      const error = failing('network_service_configs_create', { ...exchangeLanConfig, capacity });
      assert.deepEqual(
        error.properties.map((p) => p.name),
        ['capacity'],
        String(capacity),
      );
    }
  });
});
