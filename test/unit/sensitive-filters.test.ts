import assert from 'node:assert/strict';
import type { Sequelize } from 'sequelize';
import type { CollectionEntry } from '../../api/collections';
import { collectionOperations } from '../../api/collections';
import { sensitivePropertiesOf } from '../../api/redaction-plans';
import { collectionRegistry } from '../../api/registry';
import { ajvOf } from '../../api/request-validation';
import { filteredProperty, sensitiveFiltersOf } from '../../api/sensitive-filters';
import { SqlParams } from '../../db/collection';
import { loadSpec, operationParameters, specOperations } from '../../spec';

describe('filters on sensitive properties', () => {
  const document = loadSpec();
  const ajv = ajvOf(document);
  const registry = collectionRegistry(document);
  // Building operations reads no data: a database that answers nothing is enough.
  const sequelize = {} as Sequelize;
  const build = (entries: readonly CollectionEntry[]) =>
    collectionOperations({
      sequelize,
      document,
      ajv,
      entries,
      visibility: () => Promise.reject(new Error('no caller here')),
    });

  it('come from the x-sensitive marks of the items each list answers', () => {
    assert.deepEqual(sensitiveFiltersOf(document, 'network_services_list'), ['external_ref']);
    assert.deepEqual(sensitiveFiltersOf(document, 'accounts_list').sort(), [
      'external_ref',
      'managing_account',
    ]);
    assert.deepEqual(sensitiveFiltersOf(document, 'facilities_list'), []);
    assert.ok(sensitivePropertiesOf(document, 'NetworkService').includes('purchase_order'), 'oneOf types');
    assert.equal(filteredProperty('state__is_not'), 'state');
    assert.equal(filteredProperty('capability_speed_gte'), 'capability_speed');
    assert.equal(filteredProperty('external_ref'), 'external_ref');
  });

  it('are every filter of a list on a property its items mark sensitive', () => {
    let seen = 0;
    for (const op of specOperations(document).filter((candidate) =>
      candidate.operationId.endsWith('_list'),
    )) {
      const schema = (
        (op.operation.responses['200'] ?? op.operation.responses['206']) as {
          content?: Record<string, { schema?: { items?: { $ref?: string } } }>;
        }
      ).content?.['application/json']?.schema?.items?.$ref
        ?.split('/')
        .pop();
      const marked = schema ? sensitivePropertiesOf(document, schema) : [];
      const expected = operationParameters(document, op.path, op.method, op.operation, 'query')
        .map(([parameter]) => parameter.name)
        .filter((name) => marked.includes(name));
      assert.deepEqual(sensitiveFiltersOf(document, op.operationId), expected, op.operationId);
      seen += expected.length;
    }
    assert.ok(seen >= 7, `only ${seen} sensitive filters in the document`);
  });

  it('are held to the items each registered collection shows whole', () => {
    assert.doesNotThrow(() => build(registry));
    for (const entry of registry) {
      if (!sensitiveFiltersOf(document, entry.list).length) continue;
      // Whatever a collection presents redacted to some callers, it says who sees whole.
      const fullView = entry.fullView ?? (entry.present ? undefined : entry.scope);
      assert.ok(fullView, `${entry.list} does not say who sees its items whole`);
      const params = new SqlParams();
      const sql = fullView({ accountId: 'acc-a', accounts: ['acc-a'] })(undefined, params);
      assert.ok(
        Object.values(params.values).some((value) => JSON.stringify(value).includes('acc-a')),
        `${entry.list}: ${sql} does not look at the caller's accounts`,
      );
    }
  });

  it('stop start-up where a collection with a presentation does not say who sees its items whole', () => {
    const services = registry.find((entry) => entry.list === 'network_services_list')!;
    assert.throws(
      () => build([{ ...services, fullView: undefined }]),
      /network_services_list filters on sensitive properties \(external_ref\)/,
    );
    const ports = registry.find((entry) => entry.list === 'ports_list')!;
    assert.throws(
      () => build([{ ...ports, scope: undefined }]),
      /ports_list filters on sensitive properties/,
      'an unscoped collection with sensitive filters',
    );
  });
});
