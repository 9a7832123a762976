import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { request } from './http';
import { stack } from './stack';
import { eventually } from './wait';

/** Spree Networks, the demo customer the exchange-LAN tests order for. */
export const SPREE = 'acc-spree-networks';
export const FRA_LAN = 'ns-exchange-lan-fra';
const CONNECTION_ROLES = ['ra-spree-networks-implementation', 'ra-spree-networks-noc'];
const CONFIG_ROLES = ['ra-spree-networks-noc', 'ra-spree-networks-peering'];

/** The order of a standalone connection of Spree's in Frankfurt, with `extra` over it. */
export const connectionOrder = (extra: Record<string, unknown> = {}) => ({
  managing_account: SPREE,
  consuming_account: SPREE,
  billing_account: SPREE,
  role_assignments: CONNECTION_ROLES,
  product_offering: 'po-connection-fra-10g',
  mode: 'standalone',
  port_quantity: 1,
  subscriber_side_demarcs: ['cage 9, panel 2, port 1'],
  ...extra,
});

/**
 * A standalone connection of Spree's (Frankfurt unless the offering says otherwise), ordered from
 * the stack's API or the one at `baseUrl`.
 */
export async function orderConnection(
  token: string,
  extra: Record<string, unknown> = {},
  baseUrl?: string,
): Promise<string> {
  const created = await request('POST', '/connections', { token, baseUrl, body: connectionOrder(extra) });
  assert.equal(created.status, 201, created.text);
  return created.body.id as string;
}

/** A connection of Spree's in production in Frankfurt. */
export async function liveConnection(token: string): Promise<string> {
  const id = await orderConnection(token);
  await eventually('connection in production', async () =>
    (await request('GET', `/connections/${id}`, { token })).body.state === 'production' ? true : undefined,
  );
  return id;
}

/** An exchange-LAN config order of Spree's on `connection`. */
export const configOrder = (connection: string, extra: Record<string, unknown> = {}) => ({
  type: 'exchange_lan',
  network_service: FRA_LAN,
  managing_account: SPREE,
  consuming_account: SPREE,
  billing_account: SPREE,
  role_assignments: CONFIG_ROLES,
  connection,
  vlan_config: { vlan_type: 'dot1q' },
  asns: [64511],
  listed: true,
  ...extra,
});

/** Waits until the resource at `path` is in `state`, and answers it. */
export const reaches = (token: string, path: string, state: string) =>
  eventually(
    `${path} ${state}`,
    async () => {
      const body = (await request('GET', path, { token })).body as { state: string };
      return body.state === state ? body : undefined;
    },
    30_000,
  );

/** An exchange-LAN config of Spree's on `connection`, ordered and in production: its id. */
export async function liveConfig(token: string, connection: string): Promise<string> {
  const created = await request('POST', '/network-service-configs', { token, body: configOrder(connection) });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  await reaches(token, `/network-service-configs/${id}`, 'production');
  return id;
}

/** The device a connection's ports are on. */
export async function deviceOf(connection: string): Promise<string> {
  const [row] = await stack().db.sequelize.query<{ device: string }>(
    'SELECT device FROM connections WHERE id = :connection',
    { replacements: { connection }, type: QueryTypes.SELECT },
  );
  return row.device;
}

export const propertyNames = (response: { body: { properties?: Array<{ name: string }> } }) =>
  (response.body.properties ?? []).map((p) => p.name);
