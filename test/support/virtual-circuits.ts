import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { eventually } from './wait';
import { request } from './http';
import { stack } from './stack';

/** The demo customers that order circuits between each other, with their contacts' assignments. */
export const CUSTOMERS = {
  spree: { account: 'acc-spree-networks', prefix: 'spree-networks' },
  thames: { account: 'acc-thames-cloud', prefix: 'thames-cloud' },
} as const;
export type Customer = keyof typeof CUSTOMERS;

const accountsOf = (customer: Customer) => {
  const { account } = CUSTOMERS[customer];
  return { managing_account: account, consuming_account: account, billing_account: account };
};

/** A standalone 10G connection of `customer` in Frankfurt (at a given PoP when `offering` says so). */
export async function connectionFor(
  token: string,
  customer: Customer,
  offering = 'po-connection-fra-10g',
): Promise<string> {
  const { prefix } = CUSTOMERS[customer];
  const created = await request('POST', '/connections', {
    token,
    body: {
      ...accountsOf(customer),
      role_assignments: [`ra-${prefix}-implementation`, `ra-${prefix}-noc`],
      product_offering: offering,
      mode: 'standalone',
      port_quantity: 1,
      subscriber_side_demarcs: ['cage 4, panel 1, port 7'],
    },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  await eventually(
    `${id} in production`,
    async () =>
      (await request('GET', `/connections/${id}`, { token })).body.state === 'production' ? true : undefined,
    30_000,
  );
  return id;
}

/**
 * Connection offerings at the Frankfurt PoPs with the most free 10G ports, roomiest first: two
 * connections ordered from two of them sit on different devices, however full earlier orders left
 * the others.
 */
export async function roomiestFrankfurtOfferings(count = 2): Promise<string[]> {
  const pops = await stack().db.sequelize.query<{ pop: string }>(
    `SELECT pop FROM ports WHERE connection IS NULL AND speed = 10000 AND state = 'production'
       AND pop LIKE 'pop-fra-%' GROUP BY pop ORDER BY COUNT(*) DESC, pop LIMIT :count`,
    { replacements: { count }, type: QueryTypes.SELECT },
  );
  assert.equal(pops.length, count, 'Frankfurt has too few PoPs with free 10G ports');
  return pops.map(({ pop }) => `po-connection-fra${pop.slice('pop-fra-'.length)}-10g`);
}

/** A config order of `customer` on `service` over `connection`, of the service's type. */
export const vcConfig = (
  customer: Customer,
  type: string,
  service: string,
  connection: string,
  extra: Record<string, unknown> = {},
) => ({
  type,
  network_service: service,
  ...accountsOf(customer),
  role_assignments: [`ra-${CUSTOMERS[customer].prefix}-noc`],
  connection,
  vlan_config: { vlan_type: 'dot1q' },
  ...extra,
});

/** A service order of `customer`. */
export const serviceOrder = (customer: Customer, type: string, extra: Record<string, unknown> = {}) => ({
  type,
  ...accountsOf(customer),
  ...extra,
});

/** Signals `decommissionNow` to a workflow once it waits for its decommission day. */
export async function decommissionNow(workflowId: string): Promise<void> {
  const handle = stack().temporal.client.workflow.getHandle(workflowId);
  await eventually(
    `${workflowId} waiting for its day`,
    async () =>
      String(await handle.query('provisioningStep')).startsWith('decommissioning on') ? true : undefined,
    30_000,
  );
  await handle.signal('decommissionNow');
}

/**
 * Ends a going resource now: once its workflow waits for the decommission day, it is told to go
 * ahead (one that had no day to wait for ends by itself). Answers the resource decommissioned.
 */
export function endsNow(token: string, at: string, workflowId: string): Promise<Record<string, unknown>> {
  const handle = stack().temporal.client.workflow.getHandle(workflowId);
  let told = false;
  return eventually(
    `${at} decommissioned`,
    async () => {
      const read = await request('GET', at, { token });
      assert.equal(read.status, 200, `${at}: ${read.text}`);
      if (read.body.state === 'decommissioned') return read.body as Record<string, unknown>;
      if (!told) {
        const step = String(await handle.query<string>('provisioningStep').catch(() => ''));
        if (step.startsWith('decommissioning on')) {
          await handle.signal('decommissionNow');
          told = true;
        }
      }
      return undefined;
    },
    30_000,
  );
}
