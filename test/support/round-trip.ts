import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import type { LabCloudProvider } from '../../drivers/cloud/lab-provider';
import type { LabDriver } from '../../drivers/lab/driver';
import { dayOf } from '../../domain/cancellation';
import type { HttpResponse } from './http';
import { request } from './http';
import { stack } from './stack';
import { CUSTOMERS } from './virtual-circuits';

/**
 * The customers, resources and checks of the infrastructure-as-code round trip
 * (test/integration/client-round-trips.test.ts), and what its tests share.
 */

export const SPREE = CUSTOMERS.spree.account;
export const THAMES = CUSTOMERS.thames.account;
export const RS4 = 'nf-rs1-fra';
export const STRATUS = { provider: 'Stratus Compute', pop: 'stratus-fra1' };
/** Thames's own role assignment for its configs (its configuration is not under test). */
export const THAMES_NOC = `ra-${CUSTOMERS.thames.prefix}-noc`;

export const GOING = ['decommission_requested', 'decommissioned', 'cancelled', 'archived'];

export interface Resource {
  id: string;
  state: string;
  status?: Array<{ tag: string }>;
  decommission_at?: string | null;
  charged_until?: string | null;
  role_assignments?: string[];
  macs?: string[];
  ips?: string[];
  ports?: string[];
  port_reservations?: string[];
  port_quantity?: number;
  member_joining_rules?: string[];
  provider_ref?: string | null;
  port?: string | null;
  [property: string]: unknown;
}

export interface Policy {
  decommission_at: string;
  charged_until: string;
}

export const sql = <T extends object>(query: string, replacements: Record<string, unknown> = {}) =>
  stack().db.sequelize.query<T>(query, { replacements, type: QueryTypes.SELECT });

export const today = () => dayOf(new Date());
export const latest = (days: Array<string | null | undefined>) =>
  days.filter((day): day is string => typeof day === 'string').reduce((a, b) => (a > b ? a : b));

/** A DELETE body as a client sends it: JSON null, an empty object, or nothing at all. */
export type DeleteBody = null | Record<string, unknown> | 'none';
export const del = (token: string, path: string, body: DeleteBody) =>
  request('DELETE', path, body === 'none' ? { token } : { token, body });

/**
 * A refusal that leaves things as they are: 400 unable-to-fulfill whose conflicts name each of
 * `holders` (of `remoteType`, through `property` where given), with properties naming what to change.
 */
export function assertRefused(
  response: HttpResponse,
  holders: readonly string[],
  expected: { remoteType: string; property?: string },
): void {
  assert.equal(response.status, 400, response.text);
  assert.match(response.body.type as string, /unable-to-fulfill/, response.text);
  const conflicts = (response.body.conflicts ?? []) as Array<{
    resource_property: string | null;
    remote_resource_type: string;
    remote_resource_id: string;
  }>;
  for (const holder of holders) {
    const conflict = conflicts.find((c) => c.remote_resource_id === holder);
    assert.ok(conflict, `conflicts name ${holder}: ${response.text}`);
    assert.equal(conflict.remote_resource_type, expected.remoteType, response.text);
    if (expected.property !== undefined) assert.equal(conflict.resource_property, expected.property);
  }
  assertProperties(response);
}

/** Every 400 carries `properties`: at least one `{name, reason}`. */
export function assertProperties(response: HttpResponse, name?: string): void {
  const properties = response.body.properties as Array<{ name: unknown; reason: unknown }> | undefined;
  assert.ok(Array.isArray(properties) && properties.length > 0, `properties: ${response.text}`);
  for (const property of properties) {
    assert.equal(typeof property.name, 'string', response.text);
    assert.ok(typeof property.reason === 'string' && property.reason.length > 0, response.text);
  }
  if (name !== undefined)
    assert.ok(
      properties.some((p) => p.name === name),
      `properties name ${name}: ${response.text}`,
    );
}

/** What the configuration holds, by its role in it. */
export const roundTripIds = (suffix: string) => ({
  opsContact: '',
  peeringContact: '',
  implementation: '',
  noc: '',
  peering: '',
  mac: '',
  macAddress: `02:7e:${suffix.slice(0, 2)}:${suffix.slice(2, 4)}:${suffix.slice(4, 6)}:01`,
  secondMac: '',
  secondMacAddress: `02:7e:${suffix.slice(0, 2)}:${suffix.slice(2, 4)}:${suffix.slice(4, 6)}:02`,
  /** A bundle of two ports: one ordered with it, one reserved afterwards. */
  bundle: '',
  firstReservation: '',
  extraReservation: '',
  /** A standalone connection on another device, for the second cloud handover. */
  single: '',
  thamesConnection: '',
  lan: '',
  session: '',
  p2p: '',
  p2pA: '',
  p2pB: '',
  mp2mp: '',
  rule: '',
  mp2mpSpree: '',
  mp2mpThames: '',
  nimbus: '',
  nimbus1: '',
  nimbus2: '',
  stratus: '',
  stratusConfig: '',
  stratusKey: '',
});

export type RoundTripIds = ReturnType<typeof roundTripIds>;

/** What the round trip's tests share: the two customers' tokens (once logged in), what they made and how they act. */
export interface RoundTrip {
  readonly spree: string;
  readonly thames: string;
  readonly lab: () => LabDriver;
  readonly cloud: () => LabCloudProvider;
  readonly ids: RoundTripIds;
  readonly held: { ports: string[]; ips: string[]; devices: Map<string, string> };
  readonly days: Map<string, string>;
  readonly path: Record<
    'connection' | 'reservation' | 'config' | 'session' | 'service',
    (id: string) => string
  >;
  readonly read: (token: string, at: string) => Promise<Resource>;
  readonly reaches: (token: string, at: string, state: string) => Promise<Resource>;
  readonly endsNow: (token: string, at: string, workflowId: string) => Promise<Resource>;
  readonly policyOf: (token: string, at: string) => Promise<Policy>;
  readonly cancelled: (token: string, at: string, body: DeleteBody) => Promise<Resource>;
  readonly spreeConfigs: () => string[];
  readonly thamesConfigs: () => string[];
  readonly services: () => string[];
  readonly assignments: () => string[];
}
