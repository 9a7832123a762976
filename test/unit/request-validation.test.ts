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
