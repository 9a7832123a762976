import { QueryTypes } from 'sequelize';
import { LabDriver } from '../../drivers/lab/driver';
import { stack } from './stack';
import { eventually } from './wait';

/** States in which a connection's workflow is still changing it (and its ports) by itself. */
const MOVING = ['requested', 'allocated', 'testing'];

/**
 * Waits until the provisioning of every connection and service config has come to rest, so that tests after this one see
 * collections that do not change under them (a changing collection rightly refuses page tokens).
 */
export async function settleConnections(): Promise<void> {
  await eventually(
    'connections coming to rest',
    async () => {
      // Service configs move by themselves too, once their connection is in production.
      const [row] = await stack().db.sequelize.query<{ moving: number }>(
        `SELECT (SELECT COUNT(*) FROM connections WHERE state IN (:moving))
           + (SELECT COUNT(*) FROM network_service_configs n JOIN connections c ON c.id = n.connection
               WHERE n.state IN (:moving) AND c.state = 'production') AS moving`,
        { replacements: { moving: MOVING }, type: QueryTypes.SELECT },
      );
      return Number(row.moving) === 0 ? true : undefined;
    },
    30_000,
    200,
  );
}

/**
 * Makes sure an account has at least `count` connections in production (standalone, one 10G port
 * in Frankfurt), so that checks of connection collections have items to judge.
 */
export async function ensureConnectionsOf(accountId: string, count = 2): Promise<void> {
  const { db } = stack();
  const [row] = await db.sequelize.query<{ n: number }>(
    'SELECT COUNT(*) AS n FROM connections WHERE managing_account = :accountId',
    { replacements: { accountId }, type: QueryTypes.SELECT },
  );
  const offering = (await db.connections.offering('po-connection-fra-10g'))!;
  for (let i = Number(row.n); i < count; i += 1) {
    await db.connections.create(
      {
        managing_account: accountId,
        consuming_account: accountId,
        billing_account: accountId,
        role_assignments: [],
        product_offering: offering.id,
        mode: 'standalone',
        lacp_timeout: null,
        port_quantity: 1,
        subscriber_side_demarcs: [`demarc ${i + 1}`],
        external_ref: `conformance-data-${i + 1}`,
        purchase_order: '',
        contract_ref: null,
        connecting_party: null,
      },
      offering,
    );
  }
  await settleConnections();
}

/**
 * Makes sure an account has a connection in production (standalone, one 10G port in Frankfurt,
 * whose metro area network has an exchange LAN), so that checks ordering exchange-LAN access on
 * one have where to order it, whatever became of the account's other connections.
 */
export async function ensureLiveConnectionOf(accountId: string): Promise<void> {
  const [row] = await stack().db.sequelize.query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM connections
      WHERE managing_account = :accountId AND state = 'production' AND product_offering = 'po-connection-fra-10g'`,
    { replacements: { accountId }, type: QueryTypes.SELECT },
  );
  if (Number(row.n) > 0) return;
  const { db } = stack();
  const offering = (await db.connections.offering('po-connection-fra-10g'))!;
  await db.connections.create(
    {
      managing_account: accountId,
      consuming_account: accountId,
      billing_account: accountId,
      role_assignments: [],
      product_offering: offering.id,
      mode: 'standalone',
      lacp_timeout: null,
      port_quantity: 1,
      subscriber_side_demarcs: ['demarc for exchange-LAN access'],
      external_ref: 'conformance-data-live',
      purchase_order: '',
      contract_ref: null,
      connecting_party: null,
    },
    offering,
  );
  await eventually(
    `a connection of ${accountId} in production`,
    async () => {
      const [live] = await db.sequelize.query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM connections WHERE managing_account = :accountId AND state = 'production'`,
        { replacements: { accountId }, type: QueryTypes.SELECT },
      );
      return Number(live.n) > 0 ? true : undefined;
    },
    30_000,
    200,
  );
  await settleConnections();
}

/**
 * Low light on a connection's first port for its next optics reading only: its workflow, testing
 * the link after the cross-connect, finds the optics out of range and waits for an operator. (The
 * traffic collector reads only ports in service, so it cannot take the fault first.)
 */
export async function dimOpticsOnce(connectionId: string): Promise<void> {
  const placement = (await stack().db.connections.placement(connectionId))!;
  await new LabDriver(stack().db.sequelize).store.injectFault({
    device: placement.device,
    interface: placement.ports[0].name,
    operation: 'readOptics',
    code: 'optics-low',
    times: 1,
  });
}
