import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { LabDriver } from '../../drivers/lab/driver';
import type { Connection, NewConnection } from '../../db/repositories/connection-repository';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { UnableToFulfillError } from '../../domain/errors';
import { stack, withoutWorker } from '../support/stack';
import { startBuilt } from '../support/processes';
import { eventually } from '../support/wait';
import { dimOpticsOnce, settleConnections } from '../support/connections';
import { recordHistory } from '../support/histories';

const CUSTOMER = 'acc-spree-networks';
/** Temporal's PENDING_ACTIVITY_STATE_STARTED: a worker has the activity in hand. */
const PENDING_ACTIVITY_STARTED = 2;

const order = (extra: Partial<NewConnection> = {}): NewConnection => ({
  managing_account: CUSTOMER,
  consuming_account: CUSTOMER,
  billing_account: CUSTOMER,
  role_assignments: [],
  product_offering: 'po-connection-fra-10g',
  mode: 'lag_lacp',
  lacp_timeout: 'fast',
  port_quantity: 2,
  subscriber_side_demarcs: ['cage 3, panel 12, ports 1-2'],
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
  connecting_party: null,
  ...extra,
});

/** Orders a connection as the API will: stored with its ports, its start left to the relay. */
async function place(extra: Partial<NewConnection> = {}): Promise<Connection> {
  const { db } = stack();
  const input = order(extra);
  const offering = (await db.connections.offering(input.product_offering))!;
  return db.connections.create(input, offering);
}

const stateOf = async (id: string) => (await stack().db.connections.findById(id))!;

/** The subscriber's LOA, stored (the outbox announces it to the workflow). */
async function uploadLoa(id: string): Promise<void> {
  await stack().db.connections.storeLoa(id, Buffer.from('%PDF-1.4\n%%EOF\n'));
}
const reaches = (id: string, state: string) =>
  eventually(`${id} reaching ${state}`, async () => {
    const connection = await stateOf(id);
    return connection.state === state ? connection : undefined;
  });

describe('connection provisioning', function () {
  // Provisioning started here must not change collections under the tests that follow.
  after(() => settleConnections());
  this.timeout(60_000);
  const lab = () => new LabDriver(stack().db.sequelize);

  afterEach(() => lab().store.clearFaults());

  it('takes an LACP bundle from its order to production, configured on one device', async () => {
    const placed = await place();
    assert.equal(placed.state, 'requested');
    assert.equal(placed.ports.length, 2);
    const live = await reaches(placed.id, 'production');
    const placement = (await stack().db.connections.placement(placed.id))!;
    const [lag] = await lab().readLags(placement.device, [placement.lag_name!]);
    assert.deepEqual(
      { mode: lag.mode, lacpTimeout: lag.lacpTimeout, members: lag.members },
      { mode: 'lacp', lacpTimeout: 'fast', members: placement.ports.map((p) => p.name).sort() },
    );
    for (const port of await lab().readInterfaces(placement.device, lag.members))
      assert.deepEqual([port.enabled, port.lag], [true, lag.name]);
    const ports = await stack().db.sequelize.query<{ state: string; connection: string }>(
      'SELECT state, connection FROM ports WHERE id IN (:ids)',
      { replacements: { ids: live.ports }, type: QueryTypes.SELECT },
    );
    assert.deepEqual(
      ports.map((p) => [p.state, p.connection]),
      live.ports.map(() => ['production', placed.id]),
    );
    const events = await stack().db.events.listForAccount(CUSTOMER);
    const story = events
      .filter((e) => JSON.stringify(e.payload).includes(placed.id))
      .map((e) => (e.type === 'connection.state_changed' ? (e.payload as { to: string }).to : e.type));
    assert.deepEqual(story, ['connection.created', 'allocated', 'testing', 'production']);
    await recordHistory('provisionConnection', 'production', provisioningWorkflowId(placed.id));
  });

  it('runs a standalone port without a bundle', async () => {
    const placed = await place({ mode: 'standalone', lacp_timeout: null, port_quantity: 1 });
    await reaches(placed.id, 'production');
    const placement = (await stack().db.connections.placement(placed.id))!;
    assert.equal(placement.lag_name, null);
    const [port] = await lab().readInterfaces(placement.device, [placement.ports[0].name]);
    assert.deepEqual([port.enabled, port.lag], [true, null]);
  });

  it('waits where the subscriber makes the cross-connect, until its LOA is in and an operator confirms it', async () => {
    const placed = await place({
      product_offering: 'po-connection-ams-10g',
      mode: 'lag_static',
      lacp_timeout: null,
    });
    const waiting = await eventually('the cross-connect status', async () => {
      const connection = await stateOf(placed.id);
      return connection.status.some((s) => s.tag === 'cross_connect_pending') ? connection : undefined;
    });
    assert.equal(waiting.state, 'allocated');
    const handle = stack().temporal.client.workflow.getHandle(provisioningWorkflowId(placed.id));
    // The operator sees the cross-connect, but the subscriber's LOA is not in yet.
    await handle.signal('crossConnectCompleted');
    await eventually('the LOA asked for', async () =>
      (await stateOf(placed.id)).status.some((s) => s.tag === 'loa_missing') ? true : undefined,
    );
    assert.equal((await stateOf(placed.id)).state, 'allocated');
    await uploadLoa(placed.id);
    await reaches(placed.id, 'production');
  });

  it('hands a connection with bad optics to an operator, and goes live once retested', async () => {
    const offering = (await stack().db.connections.offering('po-connection-ham-10g'))!;
    const placed = await stack().db.connections.create(order({ product_offering: offering.id }), offering);
    // Injected long before the workflow (started by the relay) tests the port after the cross-connect.
    await dimOpticsOnce(placed.id);
    const stuck = await reaches(placed.id, 'operator');
    assert.ok(stuck.status.some((s) => s.tag === 'optics_out_of_range' && /retryTesting/.test(s.message)));
    await stack()
      .temporal.client.workflow.getHandle(provisioningWorkflowId(placed.id))
      .signal('retryTesting');
    await reaches(placed.id, 'production');
    await recordHistory('provisionConnection', 'operator-retest', provisioningWorkflowId(placed.id));
  });

  it('configures many connections on one device at once, each exactly once', async () => {
    const placed = await Promise.all(
      Array.from({ length: 6 }, () => place({ mode: 'standalone', lacp_timeout: null, port_quantity: 1 })),
    );
    for (const connection of placed) await reaches(connection.id, 'production');
    const placements = await Promise.all(placed.map((c) => stack().db.connections.placement(c.id)));
    for (const placement of placements) {
      const [port] = await lab().readInterfaces(placement!.device, [placement!.ports[0].name]);
      assert.deepEqual([port.enabled, port.description], [true, `ixapi ${placement!.id}`]);
    }
  });

  it('puts a connection the device refuses in error, and provisions it again when an operator asks', async () => {
    await lab().store.injectFault({
      operation: 'commit',
      code: 'rejected',
      message: 'commit refused: config locked',
    });
    const placed = await place({ mode: 'standalone', lacp_timeout: null, port_quantity: 1 });
    const failed = await reaches(placed.id, 'error');
    const [status] = failed.status;
    assert.equal(status.tag, 'configuration_failed');
    assert.match(status.message, /config locked.*retryProvisioning/);
    await stack()
      .temporal.client.workflow.getHandle(provisioningWorkflowId(placed.id))
      .signal('retryProvisioning');
    await reaches(placed.id, 'production');
    await recordHistory('provisionConnection', 'error-retry', provisioningWorkflowId(placed.id));
  });

  it('carries on from its history when the worker goes away in the middle and a new one starts', async () => {
    const placed = await place({
      product_offering: 'po-connection-ams-10g',
      mode: 'lag_static',
      lacp_timeout: null,
    });
    await eventually('the cross-connect wait', async () =>
      (await stateOf(placed.id)).status.some((s) => s.tag === 'cross_connect_pending') ? true : undefined,
    );
    await uploadLoa(placed.id);
    await withoutWorker(async () => {
      // Temporal keeps the signal until a worker runs the workflow again.
      await stack()
        .temporal.client.workflow.getHandle(provisioningWorkflowId(placed.id))
        .signal('crossConnectCompleted');
      assert.equal((await stateOf(placed.id)).state, 'allocated', 'nothing moves without a worker');
    });
    await reaches(placed.id, 'production');
    const placement = (await stack().db.connections.placement(placed.id))!;
    const [lag] = await lab().readLags(placement.device, [placement.lag_name!]);
    assert.equal(lag.members.length, 2, 'configured once, before the worker went away');
  });

  it('completes an order whose worker was killed outright in the middle of configuring its ports', async () => {
    let placed: Connection | undefined;
    await withoutWorker(async () => {
      // A worker of its own, whose devices answer slowly, so that the kill lands inside the activity.
      // The built worker, which starts with its workflows bundled (from source it bundles them first).
      const doomed = startBuilt('worker/main.js', {
        ...process.env,
        ...stack().env,
        LAB_DEVICE_LATENCY_MS: '4000',
        LOG_LEVEL: 'silent',
      });
      try {
        placed = await place({ mode: 'standalone', lacp_timeout: null, port_quantity: 1 });
        const handle = stack().temporal.client.workflow.getHandle(provisioningWorkflowId(placed.id));
        await eventually(
          'the ports being configured by the doomed worker',
          async () => {
            const description = await handle.describe().catch(() => undefined);
            const pending = description?.raw.pendingActivities ?? [];
            const started = pending.some(
              (activity) =>
                activity.activityType?.name === 'configureConnection' &&
                Number(activity.state) === PENDING_ACTIVITY_STARTED,
            );
            return started ? true : undefined;
          },
          30_000,
        );
      } finally {
        doomed.child.kill('SIGKILL');
      }
    });
    // Its heartbeats stopped: the attempt times out and a healthy worker configures the ports.
    await reaches(placed!.id, 'production');
    const placement = (await stack().db.connections.placement(placed!.id))!;
    const [port] = await lab().readInterfaces(placement.device, [placement.ports[0].name]);
    assert.equal(port.enabled, true);
  });

  it('refuses an order no device can hold, leaving nothing behind', async () => {
    const before = await stack().db.sequelize.query<{ n: number }>('SELECT COUNT(*) AS n FROM connections', {
      type: QueryTypes.SELECT,
    });
    await assert.rejects(
      place({ port_quantity: 400, mode: 'lag_static', lacp_timeout: null }),
      UnableToFulfillError,
    );
    const after = await stack().db.sequelize.query<{ n: number }>('SELECT COUNT(*) AS n FROM connections', {
      type: QueryTypes.SELECT,
    });
    assert.equal(Number(after[0].n), Number(before[0].n));
  });
});
