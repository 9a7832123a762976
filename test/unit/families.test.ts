import assert from 'node:assert/strict';
import type { Database } from '../../db';
import type { Contact, ContactInput } from '../../db/repositories/contact-repository';
import { accessToOwned } from '../../domain/authority';
import { NotFoundError, PermissionDeniedError, ValidationError } from '../../domain/errors';
import type { FamilyDeps, ResourceFamily } from '../../api/families';
import { documentedWrites, operationsOf, requestSchemas, writableDefaults } from '../../api/families';
import { generatedWrites } from '../../api/family-writes';
import type { OperationContext } from '../../api/operations';
import { RESOURCE_FAMILIES, familyOperations } from '../../api/registry';
import { compileRequestValidators, ajvOf, DOCUMENT_ID } from '../../api/request-validation';
import type { WriteContext } from '../../api/writes';
import type { OpenApiDocument } from '../../spec';
import { loadSpec, specOperations } from '../../spec';

const document = loadSpec();
const validators = compileRequestValidators(document);

/** Stands in for whatever a family's operations are built from: nothing of it is used until a request. */
const anything: any = new Proxy({}, { get: (): unknown => anything });
const stubDeps = (): FamilyDeps => ({
  db: anything as Database,
  document,
  validators,
  writes: anything as WriteContext,
  settings: { ipQuarantineSeconds: 0, statsSampleIntervalSeconds: 60 },
});

/** The name of a `$ref`'s schema, or of each variant of a body that depends on its `type`. */
function requestSchemaNames(doc: OpenApiDocument, operationId: string): string[] {
  const op = specOperations(doc).find((candidate) => candidate.operationId === operationId)!;
  const nameOf = (ref: string) => ref.split('/').pop()!;
  const body = op.operation.requestBody!.content['application/json'].schema as { $ref: string };
  const schema = doc.components.schemas[nameOf(body.$ref)] as { oneOf?: Array<{ $ref: string }> };
  return schema.oneOf ? schema.oneOf.map((variant) => nameOf(variant.$ref)) : [nameOf(body.$ref)];
}

/** The documented writes of `methods` that take a JSON body. */
const jsonWrites = (doc: OpenApiDocument, methods: readonly string[] = ['post', 'put', 'patch']) =>
  specOperations(doc)
    .filter((op) => documentedWrites(doc).includes(op.operationId) && methods.includes(op.method))
    .filter((op) => op.operation.requestBody?.content['application/json'])
    .map((op) => op.operationId);

describe('the registry of resource families', () => {
  const operationIds = familyOperations(stubDeps()).map((operation) => operation.operationId);

  it('handles every documented write operation exactly once', () => {
    const writes = documentedWrites(document);
    assert.ok(writes.length > 30, `only ${writes.length} writes documented`);
    for (const id of writes)
      assert.equal(operationIds.filter((routed) => routed === id).length, 1, `${id} routed once`);
  });

  it('refuses to start without a handler for a documented write, or with one the document lacks', () => {
    for (const family of RESOURCE_FAMILIES.filter((candidate) => candidate.name !== 'catalogue')) {
      const others = RESOURCE_FAMILIES.filter((candidate) => candidate !== family);
      assert.throws(
        () => familyOperations(stubDeps(), others),
        /has no handler in the registry/,
        family.name,
      );
    }
    const stray: ResourceFamily = {
      name: 'strays',
      collections: () => [],
      asynchronous: false,
      operations: () => ({
        handlers: [{ operationId: 'strays_create', authenticated: true, handle: anything }],
      }),
    };
    assert.throws(
      () => familyOperations(stubDeps(), [...RESOURCE_FAMILIES, stray]),
      /strays_create is not in/,
    );
    assert.throws(
      () => familyOperations(stubDeps(), [...RESOURCE_FAMILIES, RESOURCE_FAMILIES[1]]),
      /routed twice/,
    );
  });

  it('names each family by the path of its collections, and lists and reads what the document has', () => {
    const paths = new Map(specOperations(document).map((op) => [op.operationId, op.path]));
    for (const family of RESOURCE_FAMILIES) {
      for (const entry of family.collections(document)) {
        assert.ok(paths.has(entry.list), entry.list);
        if (entry.read) assert.ok(paths.has(entry.read), entry.read);
        if (family.name !== 'catalogue' && family.name !== 'contacts')
          assert.equal(paths.get(entry.list), `/${family.name}`, entry.list);
      }
    }
  });

  it('makes the stateful families the ones whose writes go by a cancellation policy', () => {
    const deps = stubDeps();
    for (const family of RESOURCE_FAMILIES) {
      const { cancellation = [] } = family.operations(deps);
      const documented = specOperations(document).some(
        (op) => op.path === `/${family.name}/{id}/cancellation-policy`,
      );
      assert.equal(cancellation.length > 0, documented, `${family.name}: cancellation`);
      if (documented) assert.ok(family.asynchronous, `${family.name} is stateful`);
    }
    const stateless = RESOURCE_FAMILIES.filter((family) => !family.asynchronous).map((family) => family.name);
    assert.deepEqual(stateless.sort(), [
      'accounts',
      'catalogue',
      'contacts',
      'ips',
      'macs',
      'member-joining-rules',
    ]);
  });

  it('routes every family operation once it is built', () => {
    const deps = stubDeps();
    const all = RESOURCE_FAMILIES.flatMap((family) => operationsOf(family, deps).map((op) => op.operationId));
    assert.equal(new Set(all).size, all.length);
  });
});

describe('writable properties from the document', () => {
  const ajv = ajvOf(document);

  it('are the properties of the request schema, every variant of it', () => {
    for (const operationId of jsonWrites(document)) {
      const properties = new Set(
        requestSchemas(document, operationId).flatMap((schema) =>
          Object.keys((schema.properties ?? {}) as Record<string, unknown>),
        ),
      );
      assert.deepEqual(
        Object.keys(writableDefaults(document, operationId)).sort(),
        [...properties].sort(),
        operationId,
      );
    }
  });

  // A partial update leaves out what stays as stored: only creates and replacements take defaults.
  it('take defaults the document allows for every property a create or replacement may leave out', () => {
    for (const operationId of jsonWrites(document, ['post', 'put'])) {
      for (const name of requestSchemaNames(document, operationId)) {
        const schema = document.components.schemas[name] as {
          required?: string[];
          properties?: Record<string, { enum?: string[] }>;
        };
        const defaults = writableDefaults(document, operationId, schema.properties?.type?.enum?.[0]);
        for (const property of Object.keys(schema.properties ?? {})) {
          if (schema.required?.includes(property) || property === 'type') continue;
          const validate = ajv.getSchema(
            `${DOCUMENT_ID}#/components/schemas/${name}/properties/${property}`,
          )!;
          assert.ok(
            validate(defaults[property]),
            `${operationId} ${name}.${property}: ${JSON.stringify(defaults[property])} ${JSON.stringify(validate.errors)}`,
          );
        }
      }
    }
  });

  it('take the document default, then null, then the zero of the type', () => {
    assert.deepEqual(writableDefaults(document, 'macs_create'), {
      managing_account: '',
      consuming_account: '',
      external_ref: null,
      address: '',
      valid_not_before: null,
      valid_not_after: null,
    });
    const account = writableDefaults(document, 'accounts_create');
    assert.equal(account.discoverable, false);
    assert.deepEqual(account.metro_area_network_presence, []);
    assert.equal(writableDefaults(document, 'member_joining_rules_create').type, 'allow');
    assert.equal(writableDefaults(document, 'port_reservations_create').purchase_order, '');
  });

  it('let a generated change keep to what its create may set', () => {
    for (const family of ['contacts', 'ips', 'member_joining_rules']) {
      const create = Object.keys(writableDefaults(document, `${family}_create`));
      const update = Object.keys(writableDefaults(document, `${family}_update`));
      assert.deepEqual(
        update.filter((name) => !create.includes(name)),
        [],
        family,
      );
    }
  });
});

describe('generated writes', () => {
  const owner = 'acc-owner';
  const consumer = 'acc-consumer';
  const stranger = 'acc-stranger';
  const scopes: Record<string, string[]> = {
    [owner]: [owner, consumer],
    [consumer]: [consumer],
    [stranger]: [stranger],
  };
  const stored = new Map<string, Contact>();
  const deps: FamilyDeps = {
    ...stubDeps(),
    writes: {
      scope: (caller) =>
        Promise.resolve({ accountId: caller!.accountId, accounts: scopes[caller!.accountId] }),
    },
  };
  const family = { name: 'contacts', asynchronous: false };
  const operations = generatedWrites<ContactInput, [Contact]>(family, deps, {
    access: (scope, contact) => accessToOwned(contact, scope),
    references: ['managing_account', 'consuming_account'],
    problems: (input) => (input.name === 'nobody' ? [{ name: 'name', reason: 'a name, please' }] : []),
    create(input) {
      const contact = { ...input, id: `con-${stored.size + 1}` };
      stored.set(contact.id, contact);
      return Promise.resolve({ resource: contact });
    },
    async change(id, decide) {
      const next = await decide(stored.get(id));
      stored.set(id, { ...next, id });
      return { resource: stored.get(id) };
    },
    destroy(id, allow) {
      const contact = stored.get(id);
      if (!contact) throw new NotFoundError(`no contacts with id ${id}`);
      allow(contact);
      stored.delete(id);
      return Promise.resolve({ resource: contact });
    },
  });
  const run = (operationId: string, accountId: string, context: Partial<OperationContext> = {}) =>
    operations
      .find((operation) => operation.operationId === operationId)!
      .handle({
        params: {},
        query: {},
        headers: {},
        log: anything,
        body: undefined,
        ...context,
        caller: { accountId, apiKey: 'k', accounts: [accountId] },
      });

  it('are the operations the family has a store for, named after it', () => {
    assert.deepEqual(
      operations.map((operation) => operation.operationId),
      ['contacts_create', 'contacts_update', 'contacts_partial_update', 'contacts_destroy'],
    );
  });

  it('create with the defaults filled in, for accounts the caller acts for, by the family rule', async () => {
    const created = await run('contacts_create', owner, {
      body: { managing_account: owner, consuming_account: owner, name: 'Ada' },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body, {
      managing_account: owner,
      consuming_account: owner,
      external_ref: null,
      name: 'Ada',
      email: null,
      telephone: null,
      id: 'con-1',
    });
    await assert.rejects(
      run('contacts_create', owner, { body: { managing_account: stranger, consuming_account: owner } }),
      (error: unknown) => error instanceof ValidationError && error.properties[0].name === 'managing_account',
    );
    await assert.rejects(
      run('contacts_create', owner, {
        body: { managing_account: owner, consuming_account: owner, name: 'nobody' },
      }),
      (error: unknown) => error instanceof ValidationError && error.properties[0].name === 'name',
    );
  });

  it('replace with PUT, merge with PATCH, and let only the managing side change', async () => {
    const { body } = await run('contacts_create', owner, {
      body: { managing_account: owner, consuming_account: consumer, name: 'Ada', email: 'ada@example.com' },
    });
    const id = (body as Contact).id;
    const patched = await run('contacts_partial_update', owner, { params: { id }, body: { name: 'Grace' } });
    assert.equal(patched.status, 200);
    assert.deepEqual(
      [(patched.body as Contact).name, (patched.body as Contact).email],
      ['Grace', 'ada@example.com'],
    );
    const put = await run('contacts_update', owner, {
      params: { id },
      body: { managing_account: owner, consuming_account: consumer },
    });
    assert.deepEqual([(put.body as Contact).name, (put.body as Contact).email], [null, null]);
    await assert.rejects(
      run('contacts_update', consumer, { params: { id }, body: {} }),
      PermissionDeniedError,
    );
    await assert.rejects(
      run('contacts_partial_update', stranger, { params: { id }, body: {} }),
      NotFoundError,
    );
    await assert.rejects(
      run('contacts_partial_update', owner, { params: { id: 'con-none' }, body: {} }),
      NotFoundError,
    );
    await assert.rejects(run('contacts_destroy', consumer, { params: { id } }), PermissionDeniedError);
    const destroyed = await run('contacts_destroy', owner, { params: { id } });
    assert.equal(destroyed.status, 200);
    assert.equal(stored.has(id), false);
  });
});
