import assert from 'node:assert/strict';
import { compileQueryParser } from '../../api/query-parameters';
import { ajvOf } from '../../api/request-validation';
import { ValidationError } from '../../domain/errors';
import { loadSpec, specOperations } from '../../spec';

describe('query parameters', () => {
  const document = loadSpec();
  const ajv = ajvOf(document);
  const parser = (operationId: string) => {
    const op = specOperations(document).find((o) => o.operationId === operationId)!;
    return compileQueryParser(ajv, document, op.path, op.method, op.operation).parse;
  };
  const refused = (operationId: string, query: Record<string, unknown>) => {
    try {
      parser(operationId)(query);
    } catch (error) {
      if (error instanceof ValidationError) return error.properties;
      throw error;
    }
    return assert.fail(`${operationId} took ${JSON.stringify(query).slice(0, 80)}`);
  };

  it('refuses integers beyond their bounds, however many digits, naming the parameter and its range', () => {
    const huge = '9'.repeat(309);
    assert.deepEqual(refused('events_list', { serial_gt: huge }), [
      { name: 'serial_gt', reason: 'Must be an integer from 0 to 9007199254740991.' },
    ]);
    for (const value of [huge, '9223372036854775808', '9007199254740993', '2147483648', '-1', '1.5', 'ten']) {
      assert.deepEqual(refused('devices_list', { capability_speed: value }), [
        { name: 'capability_speed', reason: 'Must be an integer from 0 to 2147483647.' },
      ]);
    }
    assert.deepEqual(refused('facilities_list', { capability_speed__gte: huge }), [
      { name: 'capability_speed_gte', reason: 'Must be an integer from 0 to 2147483647.' },
    ]);
    assert.deepEqual(refused('ips_list', { version: '5' }), [
      { name: 'version', reason: 'Must be one of: 4, 6.' },
    ]);
    assert.deepEqual(parser('events_list')({ serial_gt: '9007199254740991' }), {
      serial_gt: 9007199254740991,
    });
    assert.deepEqual(parser('devices_list')({ capability_speed: '400000' }), { capability_speed: 400000 });
  });

  it('refuses control and bidirectional formatting characters in any declared parameter', () => {
    for (const value of ['\u0000', 'a\u0007', 'x\u202e', 'y\u2066', 'z\ud800']) {
      const names = refused('accounts_list', {
        name: value,
        external_ref: ['ok', value],
        id: `a,${value}`,
      }).map((p) => p.name);
      assert.deepEqual(names.sort(), ['external_ref', 'id', 'name'], JSON.stringify(value));
    }
    // Undeclared parameters are still ignored, whatever they hold.
    assert.deepEqual(parser('accounts_list')({ consuming_customer: '\u0000' }), {});
  });

  it('takes 1000 ids in the id filter and refuses more by their number alone', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `acc-${i}`);
    assert.equal((parser('accounts_list')({ id: ids.join(',') }).id as string[]).length, 1000);
    assert.deepEqual(refused('accounts_list', { id: [...ids, 'one-more'] }), [
      { name: 'id', reason: 'Must NOT have more than 1000 items.' },
    ]);
    assert.deepEqual(refused('accounts_list', { id: 'x'.repeat(81) }), [
      { name: 'id', reason: 'Must NOT have more than 80 characters.' },
    ]);
  });

  it('names at most 20 parameters', () => {
    const op = specOperations(document).find((o) => o.operationId === 'product_offerings_list')!;
    const query = Object.fromEntries(
      (op.operation.parameters as Array<{ $ref?: string; name?: string }>)
        .map((p) => p.name ?? p.$ref!.split('/').pop()!)
        .map((name) => [name, '\u0000']),
    );
    const properties = refused('product_offerings_list', query);
    assert.ok(Object.keys(query).length > 20);
    assert.equal(properties.length, 20);
  });
});
