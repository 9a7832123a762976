import assert from 'node:assert/strict';
import type { Connection, NewConnection } from '../../db/repositories/connection-repository';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { onboardingWorkflowId } from '../../domain/onboarding';
import type { WaitingResource } from '../../domain/operator-queue';
import { nextCommand, waitingQuery } from '../../domain/operator-queue';
import type { WaitingKind } from '../../domain/search-attributes';
import { WAITING_KINDS } from '../../domain/search-attributes';
import { LabDriver } from '../../drivers/lab/driver';
import { dimOpticsOnce, settleConnections } from '../support/connections';
import { login, request } from '../support/http';
import { runAdmin } from '../support/admin';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const SPREE = 'acc-spree-networks';

const order = (extra: Partial<NewConnection>): NewConnection => ({
  managing_account: SPREE,
  consuming_account: SPREE,
  billing_account: SPREE,
  role_assignments: [],
  product_offering: 'po-connection-fra-10g',
  mode: 'standalone',
  lacp_timeout: null,
  port_quantity: 1,
  subscriber_side_demarcs: ['cage 5, panel 1, port 1'],
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
  connecting_party: null,
  ...extra,
});

/** Orders a connection as the API does: stored with its ports, its workflow started by the relay. */
async function place(extra: Partial<NewConnection>): Promise<Connection> {
  const { db } = stack();
  const input = order(extra);
  const offering = (await db.connections.offering(input.product_offering))!;
  return db.connections.create(input, offering);
}

const lab = () => new LabDriver(stack().db.sequelize);
const stateOf = async (id: string) => (await stack().db.connections.findById(id))!;
const reaches = (id: string, state: string) =>
  eventually(`${id} reaching ${state}`, async () => {
    const connection = await stateOf(id);
    return connection.state === state ? connection : undefined;
  });

/** The running workflows the Temporal UI lists for a kind of waiting (every kind: none given). */
async function listedByTemporal(kind?: WaitingKind): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of stack().temporal.client.workflow.list({ query: waitingQuery(kind) }))
    ids.push(execution.workflowId);
  return ids;
}

describe('the operator’s queue: what waits on the exchange', function () {
  this.timeout(180_000);
  after(() => settleConnections());
  const waiting = {} as Record<WaitingKind, { id: string; workflowId: string }>;
  let customer: string;

  before(async function () {
    this.timeout(180_000);
    customer = (await login('customer', 0)).accessToken;
    // A device refusing a commit: the connection waits in error for retryProvisioning.
    await lab().store.injectFault({
      operation: 'commit',
      code: 'rejected',
      message: 'commit refused: config locked',
    });
    const failed = await place({});
    await reaches(failed.id, 'error');
    // Low light at the first test: the connection waits in operator for retryTesting.
    const dim = await place({ product_offering: 'po-connection-ham-10g' });
    await dimOpticsOnce(dim.id);
    // Where the subscriber makes the cross-connect, it waits for the LOA and an operator's word.
    const crossConnect = await place({ product_offering: 'po-connection-ams-10g' });
    // A live connection with a month's notice, cancelled: it waits for its decommission day.
    const going = await place({ product_offering: 'po-connection-fra-100g' });
    await reaches(going.id, 'production');
    const cancelled = await request('DELETE', `/connections/${going.id}`, { token: customer });
    assert.equal(cancelled.status, 202, cancelled.text);
    assert.equal(cancelled.body.state, 'decommission_requested');
    // A new sub-account with no contacts: its on-boarding waits for its member.
    const account = await request('POST', '/accounts', {
      token: customer,
      body: {
        name: `Queue sub-account ${Date.now().toString(36)}`,
        address: { country: 'DE', locality: 'Berlin', postal_code: '10115', street_address: 'Queue 1' },
      },
    });
    assert.equal(account.status, 201, account.text);
    await reaches(dim.id, 'operator');
    const connections = {
      retry_provisioning: failed.id,
      retry_testing: dim.id,
      cross_connect: crossConnect.id,
      decommission_day: going.id,
    };
    for (const [kind, id] of Object.entries(connections))
      waiting[kind as WaitingKind] = { id, workflowId: provisioningWorkflowId(id) };
    waiting.onboarding = {
      id: account.body.id as string,
      workflowId: onboardingWorkflowId(account.body.id as string),
    };
    await eventually('the cross-connect and the on-boarding waiting', async () =>
      (await stateOf(crossConnect.id)).status.some((s) => s.tag === 'cross_connect_pending') &&
      (await request('GET', `/accounts/${waiting.onboarding.id}`, { token: customer })).body.status.length
        ? true
        : undefined,
    );
  });

  it('lists each waiting resource with its account, since when, why and what moves it on', async () => {
    const queue = await stack().db.operatorQueue.waiting();
    const found = (kind: WaitingKind) => queue.find((item) => item.id === waiting[kind].id);
    for (const kind of WAITING_KINDS) {
      const item = found(kind);
      assert.ok(item, `${kind}: ${waiting[kind].id} is not in the queue`);
      assert.equal(item.kind, kind);
      assert.equal(item.account, kind === 'onboarding' ? waiting[kind].id : SPREE);
      assert.equal(item.workflowId, waiting[kind].workflowId);
      assert.ok(Date.parse(item.since) <= Date.now(), item.since);
      assert.ok(item.why.length > 0);
    }
    assert.match(found('retry_provisioning')!.why, /config locked.*retryProvisioning/);
    assert.match(found('retry_testing')!.why, /retryTesting/);
    assert.match(found('cross_connect')!.why, /cross-connect/);
    assert.match(found('decommission_day')!.why, /^goes on \d{4}-\d{2}-\d{2}$/);
    assert.match(found('onboarding')!.why, /role/);
    // Oldest first.
    const times = queue.map((item: WaitingResource) => Date.parse(item.since));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
  });

  it('finds the same waiting workflows in Temporal by the IxapiWaiting search attribute', async () => {
    for (const kind of WAITING_KINDS)
      await eventually(`${kind} listed by Temporal`, async () =>
        (await listedByTemporal(kind)).includes(waiting[kind].workflowId) ? true : undefined,
      );
    const all = await listedByTemporal();
    for (const kind of WAITING_KINDS) assert.ok(all.includes(waiting[kind].workflowId), kind);
  });

  it('prints the queue with the exact commands, and each command moves its resource on', async () => {
    const { namespace } = { namespace: stack().config.temporalNamespace };
    const printed = await runAdmin(['queue']);
    assert.equal(printed.code, 0, printed.stderr);
    for (const kind of WAITING_KINDS) assert.ok(printed.stdout.includes(waiting[kind].id), `${kind} printed`);
    assert.match(printed.stdout, /IxapiWaiting IS NOT NULL/);
    const json = await runAdmin(['queue', '--kind', 'cross_connect', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const items = JSON.parse(json.stdout) as Array<WaitingResource & { command: string | null }>;
    assert.ok(items.every((item) => item.kind === 'cross_connect'));
    const crossConnect = items.find((item) => item.id === waiting.cross_connect.id)!;
    assert.equal(crossConnect.command, nextCommand(crossConnect, namespace));
    const refused = await runAdmin(['queue', '--kind', 'soon']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--kind must be one of/);

    // Each signal the queue names moves its resource on (the cross-connect also needs the LOA).
    await stack().db.connections.storeLoa(waiting.cross_connect.id, Buffer.from('%PDF-1.4\n%%EOF\n'));
    for (const kind of [
      'retry_provisioning',
      'retry_testing',
      'cross_connect',
      'decommission_day',
    ] as const) {
      const command = nextCommand({ kind, workflowId: waiting[kind].workflowId }, namespace)!;
      const signal = /--name (\w+)$/.exec(command)![1];
      await stack().temporal.client.workflow.getHandle(waiting[kind].workflowId).signal(signal);
    }
    for (const kind of ['retry_provisioning', 'retry_testing', 'cross_connect'] as const)
      await reaches(waiting[kind].id, 'production');
    await reaches(waiting.decommission_day.id, 'decommissioned');
    const left = (await stack().db.operatorQueue.waiting()).map((item) => item.id);
    assert.deepEqual(
      WAITING_KINDS.filter((kind) => left.includes(waiting[kind].id)),
      ['onboarding'],
      'only the account still waits',
    );
    for (const kind of ['retry_provisioning', 'retry_testing', 'cross_connect', 'decommission_day'] as const)
      await eventually(`${kind} no longer listed by Temporal`, async () =>
        (await listedByTemporal(kind)).includes(waiting[kind].workflowId) ? undefined : true,
      );
  });
});
