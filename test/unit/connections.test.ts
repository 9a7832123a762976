import assert from 'node:assert/strict';
import type { ConnectionOffering, ConnectionOrder, OrderContext } from '../../domain/connections';
import {
  bundleName,
  connectionOrderProblems,
  connectionSpeed,
  effectiveLacpTimeout,
  lagNameOf,
} from '../../domain/connections';
import { ONBOARDED } from '../support/order-accounts';

const offering: ConnectionOffering = {
  id: 'po-connection-fra-100g',
  type: 'connection',
  cross_connect_initiator: 'exchange',
  maximum_port_quantity: 4,
  required_contact_roles: ['implementation', 'noc'],
};
const context: OrderContext = {
  assignedRoles: ['noc', 'implementation'],
  accounts: ONBOARDED,
  maxLagMembers: 8,
  now: new Date('2026-06-01T12:00:00Z'),
};
const order: ConnectionOrder = {
  mode: 'lag_lacp',
  lacp_timeout: 'fast',
  port_quantity: 2,
  subscriber_side_demarcs: ['rack 4, panel 2'],
};

const names = (
  o: Partial<ConnectionOrder>,
  f: Partial<ConnectionOffering> = {},
  c: Partial<OrderContext> = {},
) =>
  connectionOrderProblems({ ...order, ...o }, { ...offering, ...f }, { ...context, ...c }).map((p) => p.name);

describe('connection orders', () => {
  it('accepts an order that fits its offering', () => {
    assert.deepEqual(names({}), []);
    assert.deepEqual(names({ mode: 'standalone', lacp_timeout: null, port_quantity: 1 }), []);
    assert.deepEqual(names({ subscriber_side_demarcs: [] }, { cross_connect_initiator: 'subscriber' }), []);
  });

  it("takes orders within the offering's orderable window only", () => {
    const now = new Date('2026-11-23T12:00:00Z');
    const window = (before: string | null, after: string | null) =>
      names({}, { orderable_not_before: before, orderable_not_after: after }, { now });
    assert.deepEqual(window('2026-11-01T00:00:00Z', '2026-12-31T23:59:59Z'), []);
    assert.deepEqual(window(null, null), []);
    assert.deepEqual(window('2026-12-01T00:00:00Z', null), ['product_offering']);
    assert.deepEqual(window(null, '2026-11-23T11:59:59Z'), ['product_offering']);
  });

  it('refuses an offering of another type', () => {
    assert.deepEqual(names({}, { type: 'exchange_lan' }), ['product_offering']);
  });

  it('holds port_quantity to the offering, the mode and the bundle size', () => {
    assert.deepEqual(names({ port_quantity: 5, subscriber_side_demarcs: ['a'] }), ['port_quantity']);
    assert.deepEqual(names({ port_quantity: 5 }, { maximum_port_quantity: null }), []);
    assert.deepEqual(names({ port_quantity: 9 }, { maximum_port_quantity: null }), ['port_quantity']);
    assert.deepEqual(names({ mode: 'standalone', lacp_timeout: null, port_quantity: 2 }), ['port_quantity']);
  });

  it('allows an LACP timeout only on LACP bundles, and runs them slow by default', () => {
    assert.deepEqual(names({ mode: 'lag_static' }), ['lacp_timeout']);
    assert.deepEqual(names({ mode: 'lag_static', lacp_timeout: null }), []);
    assert.equal(effectiveLacpTimeout({ mode: 'lag_lacp', lacp_timeout: null }), 'slow');
    assert.equal(effectiveLacpTimeout({ mode: 'lag_lacp', lacp_timeout: 'fast' }), 'fast');
    assert.equal(effectiveLacpTimeout({ mode: 'standalone' }), null);
  });

  it('refuses modes the fabric does not provide', () => {
    assert.deepEqual(names({ mode: 'flex_ethernet', lacp_timeout: null }), ['mode']);
  });

  it('asks for demarcs when the exchange orders the cross-connect, one per port at most', () => {
    assert.deepEqual(names({ subscriber_side_demarcs: [] }), ['subscriber_side_demarcs']);
    assert.deepEqual(names({ subscriber_side_demarcs: null }), ['subscriber_side_demarcs']);
    assert.deepEqual(names({ subscriber_side_demarcs: ['a', 'b', 'c'] }), ['subscriber_side_demarcs']);
    assert.deepEqual(names({ subscriber_side_demarcs: [' '] }), ['subscriber_side_demarcs']);
  });

  it('needs every required contact role and a billing account that can pay', () => {
    const problems = connectionOrderProblems(order, offering, { ...context, assignedRoles: ['noc'] });
    assert.deepEqual(problems, [
      { name: 'role_assignments', reason: 'the offering needs contacts with the role(s) implementation' },
    ]);
    assert.deepEqual(names({}, {}, { accounts: { states: {}, billingAccountCanPay: false } }), [
      'billing_account',
    ]);
  });
});

describe('connection naming and sizing rules', () => {
  it('names the bundle of a LAG after the connection, and gives a standalone port none', () => {
    assert.equal(bundleName('conn-1'), 'ae-conn-1');
    assert.equal(lagNameOf('conn-1', 'lag_lacp'), 'ae-conn-1');
    assert.equal(lagNameOf('conn-1', 'lag_static'), 'ae-conn-1');
    assert.equal(lagNameOf('conn-1', 'standalone'), null);
  });

  it('gives a connection the speed of its ports times their number', () => {
    assert.equal(connectionSpeed(10_000, 4), 40_000);
    assert.equal(connectionSpeed(100_000, 1), 100_000);
  });
});
