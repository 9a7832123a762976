import assert from 'node:assert/strict';
import {
  MAX_BODY_DEPTH,
  compileRequestValidators,
  ajvOf,
  toPropertyErrors,
} from '../../api/request-validation';
import { ValidationError } from '../../domain/errors';
import { loadSpec, specOperations } from '../../spec';

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
    const ajv = ajvOf(loadSpec());
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
  const ajv = ajvOf(document);
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

  describe('characters no text may hold', () => {
    const contact = { managing_account: 'acc-1', consuming_account: 'acc-1' };
    const unsafe = [
      '\u0000',
      '\u0007',
      '\t',
      '\n',
      '\r',
      '\u001f',
      '\u007f',
      '\u0085',
      '\u009f',
      '\u202a',
      '\u202e',
      '\u2066',
      '\u2069',
    ];

    it('refuses each control or bidirectional formatting character in a name', () => {
      for (const character of unsafe) {
        const error = failing('contacts_create', { ...contact, name: `Eve${character}Mallory` });
        assert.deepEqual(
          error.properties.map((p) => p.name),
          ['name'],
          JSON.stringify(character),
        );
        assert.match(error.properties[0].reason, /control characters/);
      }
    });

    it('accepts letters of every script, emoji and the bidirectional marks that are not overrides', () => {
      for (const name of [
        'Zoë Ünal',
        'Łódź IX',
        'インターネット',
        'مرحبا',
        'Peering 🚀',
        'a\u200fb',
        'x\u00a0y',
      ])
        validators.body('contacts_create', { ...contact, name });
    });

    it('refuses unpaired surrogates', () => {
      const error = failing('contacts_create', { ...contact, name: 'broken \ud800 text' });
      assert.deepEqual(error.properties, [{ name: 'name', reason: 'Must be well-formed Unicode text.' }]);
    });

    it('names nested properties, array items and properties the schema does not know', () => {
      const address = {
        country: 'DE',
        locality: 'Köln',
        postal_code: '50667',
        street_address: 'Dom\u2066platz 1',
      };
      const account = failing('accounts_create', { name: 'Ok', address });
      assert.deepEqual(
        account.properties.map((p) => p.name),
        ['address.street_address'],
      );
      const config = failing('network_service_configs_create', {
        ...exchangeLanConfig,
        role_assignments: ['ra-1', 'ra\u00002'],
        comment: { note: 'x\u202ey' },
      });
      assert.deepEqual(
        config.properties.map((p) => p.name),
        ['role_assignments.1', 'comment.note'],
      );
      const key = failing('contacts_create', { ...contact, extra: { 'bad\u0000key': 1 } });
      assert.deepEqual(key.properties, [
        { name: 'extra', reason: 'Property names must be well-formed text without control characters.' },
      ]);
    });

    it('reports the characters together with what the schema refuses, once per property', () => {
      const error = failing('contacts_create', { managing_account: 'acc\u0000', telephone: 'x' });
      assert.deepEqual(
        error.properties.map((p) => p.name),
        ['managing_account', 'consuming_account', 'telephone'],
      );
      assert.match(error.properties[0].reason, /control characters/);
    });

    it('refuses them in every body of every operation', () => {
      let checked = 0;
      for (const { operationId, operation } of specOperations(document)) {
        const content = operation.requestBody?.content ?? {};
        if (!Object.keys(content).some((type) => type.includes('json'))) continue;
        const error = failing(operationId, { junk: 'a\u0000b' });
        assert.ok(
          error.properties.some((p) => p.name === 'junk' && /control characters/.test(p.reason)),
          operationId,
        );
        checked++;
      }
      assert.ok(checked >= 30, `${checked} operations take a JSON body`);
    });

    it('refuses nesting deeper than the deepest IX-API body, without exhausting the stack', () => {
      let deep: unknown = 'leaf';
      for (let i = 0; i < 200_000; i++) deep = [deep];
      const error = failing('contacts_create', { ...contact, extra: deep });
      assert.deepEqual(error.properties, [
        { name: `extra${'.0'.repeat(31)}`, reason: `Must not nest more than ${MAX_BODY_DEPTH} levels deep.` },
      ]);
    });
  });
});
