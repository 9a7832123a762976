import type { OpenApiDocument } from '../spec';

/**
 * The schema revisions the suite can judge a server by. `2.6.0` is the document this project
 * ships; `older` is the revision before it, which exchanges in the field still run. A server picks
 * one through the `schema_version` it claims in GET /implementation.
 */
export type RevisionName = '2.6.0' | 'older';

export interface Revision {
  name: RevisionName;
  /** What the report says about the choice, when there is something to say. */
  note?: string;
}

export const CURRENT_SCHEMA_VERSION = '2.6.0';

type Version = [number, number, number];

function parseVersion(text: string): Version | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : undefined;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i += 1) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** The revision to judge a server by, from the schema version it claims. */
export function revisionFor(schemaVersion: string | null): Revision {
  if (schemaVersion === null)
    return { name: '2.6.0', note: 'the server claims no schema version; judged by 2.6.0' };
  const claimed = parseVersion(schemaVersion);
  if (!claimed)
    return {
      name: '2.6.0',
      note: `the claimed schema version ${JSON.stringify(schemaVersion)} is not a version number; judged by 2.6.0`,
    };
  const current = parseVersion(CURRENT_SCHEMA_VERSION)!;
  const order = compare(claimed, current);
  if (order < 0)
    return {
      name: 'older',
      note: `the server claims schema version ${schemaVersion}, older than ${CURRENT_SCHEMA_VERSION}: judged by the older revision's schemas (no cancelled state, no sensitive properties, demarc offerings, the older connection)`,
    };
  if (claimed[0] !== current[0] || claimed[1] !== current[1])
    return {
      name: '2.6.0',
      note: `the server claims schema version ${schemaVersion}, newer than ${CURRENT_SCHEMA_VERSION}; judged by 2.6.0`,
    };
  return { name: '2.6.0' };
}

type Schema = Record<string, unknown> & {
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
};

/** Visits every object of a JSON tree, parents before children. */
function visit(node: unknown, action: (object: Record<string, unknown>) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item, action);
  } else if (typeof node === 'object' && node !== null) {
    action(node as Record<string, unknown>);
    for (const value of Object.values(node)) visit(value, action);
  }
}

/** Connection properties the older revision does not have. */
const CONNECTION_ADDITIONS = [
  'product_offering',
  'pop',
  'port_quantity',
  'capacity_allocated',
  'capacity_allocation_limit',
  'port_reservations',
  'subscriber_side_demarcs',
];
const OLDER_CONNECTION_REQUIRED = [
  'id',
  'managing_account',
  'consuming_account',
  'billing_account',
  'role_assignments',
  'mode',
  'vlan_types',
  'outer_vlan_ethertypes',
];
/** What the older revision's connection create and update payloads carry, and what they require. */
const OLDER_CONNECTION_PAYLOAD = [
  'billing_account',
  'consuming_account',
  'contract_ref',
  'external_ref',
  'lacp_timeout',
  'managing_account',
  'mode',
  'purchase_order',
  'role_assignments',
  'speed',
];
const OLDER_CONNECTION_PAYLOAD_REQUIRED = [
  'managing_account',
  'consuming_account',
  'billing_account',
  'role_assignments',
  'mode',
];
const OLDER_CLOUD_SERVICE_REQUIRED = [
  'id',
  'type',
  'nsc_required_contact_roles',
  'managing_account',
  'consuming_account',
  'billing_account',
  'product_offering',
  'cloud_key',
  'diversity',
];

const isStateEnum = (values: unknown[]) => values.includes('requested') && values.includes('cancelled');
const isResourceTypeEnum = (values: unknown[]) =>
  values.includes('connection') && values.includes('port_reservation') && values.includes('network_service');

/**
 * The older revision's document, derived from the 2.6.0 one by the differences between the two:
 * the same operations, with the schemas as the older revision has them.
 */
export function olderRevision(document: OpenApiDocument): OpenApiDocument {
  const older = structuredClone(document);
  const schemas = older.components.schemas as Record<string, Schema>;

  visit(older, (node) => {
    delete node['x-sensitive'];
    if (!Array.isArray(node.enum)) return;
    const values: unknown[] = node.enum;
    if (isStateEnum(values)) node.enum = values.filter((value) => value !== 'cancelled');
    if (isResourceTypeEnum(values))
      node.enum = values.map((value) => (value === 'port_reservation' ? 'demarc' : value));
  });
  schemas.State = { ...schemas.State, readOnly: true };

  for (const [name, schema] of Object.entries(schemas)) {
    const pop = schema.properties?.service_provider_pop;
    if (pop && /^(CloudNetworkProductOffering|ProductOfferingPartial)$/.test(name)) pop.maxLength = 16;
  }

  const connection = schemas.Connection;
  for (const property of CONNECTION_ADDITIONS) delete connection.properties?.[property];
  connection.required = [...OLDER_CONNECTION_REQUIRED];

  for (const name of ['ConnectionRequest', 'ConnectionUpdate', 'ConnectionPatch']) {
    const payload = schemas[name];
    const properties: Record<string, Schema> = {};
    for (const property of OLDER_CONNECTION_PAYLOAD) {
      properties[property] = payload.properties?.[property] ??
        connection.properties?.[property] ?? { type: 'integer', minimum: 0, nullable: true };
    }
    payload.properties = properties;
    if (name === 'ConnectionPatch') delete payload.required;
    else payload.required = [...OLDER_CONNECTION_PAYLOAD_REQUIRED];
  }

  schemas.CloudNetworkService.required = [...OLDER_CLOUD_SERVICE_REQUIRED];
  return older;
}
