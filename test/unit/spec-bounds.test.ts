import assert from 'node:assert/strict';
import type { OpenApiDocument } from '../../spec';
import { loadSpec, specOperations } from '../../spec';

type Json = Record<string, any>;

/**
 * Places where the document may leave a string, array or integer without a bound, because only the
 * server writes them: nothing a client sends reaches them (the test checks that too). `Schema`
 * covers a whole schema, `Schema.path` one property, `*.path` that property of every schema.
 */
const RESPONSE_ONLY: readonly string[] = [
  // Error answers: written by the server, capped where they are built (at most 20 properties).
  'Problem',
  'UnableToFulfillProblem',
  'ProblemProperties',
  'Conflict',
  // Tokens the server issues, and what it says about itself.
  'AuthToken',
  'ApiHealth',
  'ApiImplementation',
  'ApiExtensions',
  // Traffic measurements.
  'AggregateStatistics',
  'PortStatistics',
  // Status entries the provisioning writes as a resource lives.
  'Status',
  '*.status',
  // What the exchange derives as resources live: the ports and reservations of a connection, the
  // addresses and feature configs of a config, the features and rules of a service.
  'Connection.ports',
  'Connection.port_reservations',
  'ExchangeLanNetworkServiceConfig.ips',
  '*.network_feature_configs',
  '*.network_features',
  '*.member_joining_rules',
  // The exchange's catalogue: how its places, devices, offerings and roles link to each other.
  'Facility.pops',
  'MetroAreaNetwork.pops',
  'PointOfPresence.devices',
  'MetroArea.facilities',
  'MetroArea.metro_area_networks',
  'Device.capabilities',
  'Role.required_fields',
  '*.required_contact_roles',
  '*.nsc_required_contact_roles',
  '*.nfc_required_contact_roles',
  '*.nsc_product_offerings',
];

interface Unbounded {
  /** `Schema.property[].sub`, `operationId?parameter` or `operationId body`. */
  location: string;
  /** The component schema the node belongs to, if any. */
  schema?: string;
  /** The location inside that schema, without its name. */
  inner?: string;
  problem: string;
}

function resolveRef(document: OpenApiDocument, ref: string): Json {
  let target: any = document;
  for (const segment of ref.slice(2).split('/'))
    target = target[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  assert.ok(target, `unresolved ${ref}`);
  return target as Json;
}

/** What is missing on a node: a maxLength, a maxItems, or a safe minimum and maximum. */
function missingBound(node: Json): string | undefined {
  if (node.enum) return undefined;
  if (node.type === 'string' && typeof node.maxLength !== 'number') return 'a string without maxLength';
  if (node.type === 'array' && typeof node.maxItems !== 'number') return 'an array without maxItems';
  if (node.type === 'integer') {
    if (typeof node.minimum !== 'number') return 'an integer without minimum';
    if (typeof node.maximum !== 'number') return 'an integer without maximum';
    if (node.maximum > Number.MAX_SAFE_INTEGER)
      return `an integer with maximum ${node.maximum}, beyond the safe range`;
    if (node.minimum < Number.MIN_SAFE_INTEGER)
      return `an integer with minimum ${node.minimum}, beyond the safe range`;
  }
  return undefined;
}

/**
 * Walks a schema and the component schemas it references, reporting every unbounded node and
 * collecting the names of the component schemas it reaches.
 */
function walk(
  document: OpenApiDocument,
  node: unknown,
  location: string,
  out: { unbounded: Map<string, Unbounded>; reached: Set<string> },
  schema?: { name: string; inner: string },
): void {
  if (typeof node !== 'object' || node === null) return;
  const json = node as Json;
  if (typeof json.$ref === 'string') {
    const name = json.$ref.split('/').pop()!;
    if (out.reached.has(name)) return;
    out.reached.add(name);
    walk(document, resolveRef(document, json.$ref), name, out, { name, inner: '' });
    return;
  }
  const problem = missingBound(json);
  if (problem && !out.unbounded.has(location))
    out.unbounded.set(location, { location, schema: schema?.name, inner: schema?.inner, problem });
  const step = (child: unknown, suffix: string) =>
    walk(
      document,
      child,
      `${location}${suffix}`,
      out,
      schema && { name: schema.name, inner: `${schema.inner}${suffix}` },
    );
  for (const keyword of ['allOf', 'oneOf', 'anyOf'])
    for (const part of (json[keyword] ?? []) as unknown[]) step(part, '');
  for (const [name, property] of Object.entries((json.properties ?? {}) as Record<string, unknown>))
    step(property, `.${name}`);
  if (json.items) step(json.items, '[]');
  if (typeof json.additionalProperties === 'object') step(json.additionalProperties, '{}');
}

function allowedBy(entry: string, found: Unbounded): boolean {
  if (!found.schema) return false;
  const [schema, ...rest] = entry.split('.');
  const inner = rest.length ? `.${rest.join('.')}` : '';
  if (schema !== '*' && schema !== found.schema) return false;
  if (schema === '*' && !inner) return false;
  return (
    !inner ||
    found.inner === inner ||
    found.inner!.startsWith(`${inner}[`) ||
    found.inner!.startsWith(`${inner}.`)
  );
}

describe('the bounds of the OpenAPI document', () => {
  const document = loadSpec();
  const operations = specOperations(document);

  /** Everything a client can send: parameters and request bodies, with the schemas they reach. */
  function inputs() {
    const out = { unbounded: new Map<string, Unbounded>(), reached: new Set<string>() };
    for (const { operationId, operation } of operations) {
      for (const declared of (operation.parameters ?? []) as Json[]) {
        const parameter = typeof declared.$ref === 'string' ? resolveRef(document, declared.$ref) : declared;
        walk(document, parameter.schema, `${operationId}?${String(parameter.name)}`, out);
      }
      for (const [mediaType, content] of Object.entries(operation.requestBody?.content ?? {}))
        walk(document, content.schema, `${operationId} body (${mediaType})`, out);
    }
    return out;
  }

  /** Every component schema, whether requests or responses use it. */
  function components() {
    const out = { unbounded: new Map<string, Unbounded>(), reached: new Set<string>() };
    for (const name of Object.keys(document.components.schemas))
      walk(document, { $ref: `#/components/schemas/${name}` }, name, out);
    return out;
  }

  it('bounds every string, array and integer a client can send', () => {
    const { unbounded } = inputs();
    assert.deepEqual(
      [...unbounded.values()].map((u) => `${u.location}: ${u.problem}`),
      [],
    );
  });

  it('bounds every schema shared with responses, except what only the server writes', () => {
    const { unbounded } = components();
    const left = [...unbounded.values()].filter((u) => !RESPONSE_ONLY.some((entry) => allowedBy(entry, u)));
    assert.deepEqual(
      left.map((u) => `${u.location}: ${u.problem}`),
      [],
    );
  });

  it('keeps its response-only exceptions out of everything a client sends, and each of them in use', () => {
    const { reached } = inputs();
    const { unbounded } = components();
    for (const entry of RESPONSE_ONLY) {
      const covered = [...unbounded.values()].filter((u) => allowedBy(entry, u));
      assert.ok(covered.length > 0, `${entry} excuses nothing; remove it`);
      for (const found of covered)
        assert.ok(
          !reached.has(found.schema!),
          `${found.location} is excused but a request reaches ${found.schema}`,
        );
    }
  });

  it('takes at least 500 ids in the id filter and ids of at most 80 characters', () => {
    const id = resolveRef(document, '#/components/parameters/id').schema as Json;
    assert.ok(id.maxItems >= 500, `id takes ${id.maxItems} ids`);
    assert.equal(id.items.maxLength, 80);
    for (const name of ['role_assignments', 'contacts']) {
      const filter = resolveRef(document, `#/components/parameters/${name}`).schema as Json;
      assert.ok(filter.maxItems >= 500, `${name} takes ${filter.maxItems} ids`);
    }
  });

  it('finds an unbounded string, array or integer when there is one', () => {
    const broken = structuredClone<OpenApiDocument>(document);
    const request = broken.components.schemas.ContactRequest as Json;
    delete request.properties.name.maxLength;
    const config = broken.components.schemas.ExchangeLanNetworkServiceConfigRequest as Json;
    delete config.properties.macs.maxItems;
    config.properties.capacity.maximum = 2 ** 63;
    const out = { unbounded: new Map<string, Unbounded>(), reached: new Set<string>() };
    for (const name of ['ContactRequest', 'ExchangeLanNetworkServiceConfigRequest'])
      walk(broken, { $ref: `#/components/schemas/${name}` }, name, out);
    assert.deepEqual([...out.unbounded.keys()].sort(), [
      'ContactRequest.name',
      'ExchangeLanNetworkServiceConfigRequest.capacity',
      'ExchangeLanNetworkServiceConfigRequest.macs',
    ]);
  });
});
