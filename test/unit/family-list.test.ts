import assert from 'node:assert/strict';
import { collectionRegistry, RESOURCE_FAMILIES } from '../../api/registry';
import { VERSIONED_TABLES } from '../../db/migrations/0022-collection-versions';
import { EVENT_TYPES, EVENT_RESOURCE_PROPERTIES } from '../../domain/events';
import type { FamilyResource } from '../../domain/families';
import {
  BILLED_KINDS,
  FAMILIES,
  FAMILY_RESOURCES,
  RESOURCE_KINDS,
  workflowIdOf,
  workflowStartOf,
} from '../../domain/families';
import { DECLARED_HAPPENINGS, declaredEventType, declaredWrites } from '../../domain/declared-family';
import { MAC_FAMILY } from '../../domain/macs';
import { loadSpec } from '../../spec';
import * as workflows from '../../workflows';

const document = loadSpec();
const registered = collectionRegistry(document);

/**
 * The families of domain/families.ts are the one list the layers go by: the API routes each, the
 * store keeps each in its table, events name each, and each stateful one has its workflow.
 */
describe('the list of resource families', () => {
  it('is routed whole by the API, each family under its collection and nothing else besides the catalogue', () => {
    const routed = RESOURCE_FAMILIES.map((family) => family.name).filter((name) => name !== 'catalogue');
    const families = FAMILY_RESOURCES.map((resource) => FAMILIES[resource].collection);
    // Role assignments are routed with their contacts.
    assert.deepEqual(
      [...routed].sort(),
      families.filter((collection) => collection !== 'role-assignments').sort(),
    );
  });

  it('names the table each collection reads, and each table keeps reads by its version', () => {
    for (const resource of FAMILY_RESOURCES) {
      const { collection, table } = FAMILIES[resource];
      const entry = registered.find((candidate) => candidate.collection.name === collection);
      assert.ok(entry, `a collection lists ${collection}`);
      assert.equal(entry.collection.table, table, `${collection} reads ${table}`);
      assert.ok((VERSIONED_TABLES as readonly string[]).includes(table), `${table} has a version`);
    }
  });

  it('agrees with the families declared whole: their names, tables and the kinds of their events', () => {
    for (const declared of [MAC_FAMILY]) {
      const resource = declared.resource as FamilyResource;
      assert.deepEqual(
        { collection: FAMILIES[resource].collection, table: FAMILIES[resource].table },
        { collection: declared.collection, table: declared.table },
      );
      assert.equal(FAMILIES[resource].eventProperty, declared.resource, 'payloads hold it under its name');
      const kinds = declaredWrites(declared).map((write) =>
        declaredEventType(declared, DECLARED_HAPPENINGS[write]),
      );
      assert.deepEqual(
        kinds,
        EVENT_TYPES.filter((type) => type.startsWith(`${declared.resource}.`)),
      );
    }
  });

  it('is what every event is about, and tells where each payload holds its resource', () => {
    const about = new Set(EVENT_TYPES.map((type) => type.slice(0, type.indexOf('.'))));
    assert.deepEqual([...about].sort(), [...FAMILY_RESOURCES].sort());
    for (const resource of FAMILY_RESOURCES)
      assert.equal(EVENT_RESOURCE_PROPERTIES[resource], FAMILIES[resource].eventProperty);
  });

  it('gives each family with a workflow a workflow type the worker runs', () => {
    const withWorkflows = FAMILY_RESOURCES.filter((resource) => 'workflow' in FAMILIES[resource]);
    assert.deepEqual(withWorkflows, [
      'account',
      'connection',
      'network_service',
      'network_service_config',
      'network_feature_config',
    ]);
    for (const resource of withWorkflows) {
      const { type } = (FAMILIES[resource] as { workflow: { type: string } }).workflow;
      assert.equal(
        typeof (workflows as Record<string, unknown>)[type],
        'function',
        `the worker runs ${type}`,
      );
    }
  });

  it('keeps the workflow ids and starts that runs in flight were begun with', () => {
    assert.equal(workflowIdOf('network_service_config', 'nsc-1'), 'ixapi:network-service-config:nsc-1');
    assert.equal(workflowIdOf('account', 'acc-1'), 'ixapi:account:acc-1');
    assert.deepEqual(workflowStartOf('network_feature_config', { id: 'nfc-1', managing_account: 'acc-1' }), {
      workflowType: 'provisionNetworkFeatureConfig',
      workflowId: 'ixapi:network-feature-config:nfc-1',
      args: [{ featureConfigId: 'nfc-1' }],
      searchAttributes: {
        IxapiResourceType: 'network_feature_config',
        IxapiResourceId: 'nfc-1',
        IxapiAccount: 'acc-1',
      },
    });
  });

  it('knows which families carry a state and which are billed', () => {
    const stateful: FamilyResource[] = [
      'account',
      'connection',
      'port_reservation',
      'network_service',
      'network_service_config',
      'network_feature_config',
    ];
    assert.deepEqual(RESOURCE_KINDS, stateful);
    assert.deepEqual(
      [...BILLED_KINDS],
      stateful.filter((kind) => kind !== 'account'),
    );
  });
});
