import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { LabCloudProvider } from '../../drivers/cloud/lab-provider';
import { configWorkflowId, serviceWorkflowId } from '../../db/repositories/network-service-config-repository';
import { settleConnections } from '../support/connections';
import { reaches } from '../support/exchange-lan';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import {
  connectionFor,
  CUSTOMERS,
  endsNow,
  roomiestFrankfurtOfferings,
  serviceOrder,
  vcConfig,
} from '../support/virtual-circuits';

/**
 * Clients delete a service and its configs in any order: the Terraform provider deletes the configs
 * first (they depend on the service), a script may delete the service first, and a client that
 * deletes in parallel sends both at once. Whatever the order, every DELETE answers the resource as
 * it goes (`decommission_requested`), and the service and its configs end on their day. Each type
 * of service a customer orders is deleted in each order, live and, for a cloud service, while it
 * still waits for its second handover.
 */

type Side = 'spree' | 'thames';
interface Ordered {
  service: string;
  configs: Array<{ id: string; side: Side }>;
}
type Order = 'before' | 'together with' | 'after';

describe('a network service deleted before, together with or after its configs', function () {
  this.timeout(180_000);
  after(() => settleConnections());

  const tokens = {} as Record<Side, string>;
  /** Spree's connections on two devices (a cloud service's handovers), and Thames's. */
  let spreeOn: [string, string];
  let thamesOn: string;
  const suffix = randomBytes(3).toString('hex');
  let made = 0;

  before(async () => {
    tokens.spree = (await login('customer', 0)).accessToken;
    tokens.thames = (await login('customer', 1)).accessToken;
    const [first, second] = await roomiestFrankfurtOfferings(2);
    spreeOn = [
      await connectionFor(tokens.spree, 'spree', first),
      await connectionFor(tokens.spree, 'spree', second),
    ];
    thamesOn = await connectionFor(tokens.thames, 'thames');
  });

  const create = async (side: Side, at: string, body: Record<string, unknown>): Promise<string> => {
    const response = await request('POST', at, { token: tokens[side], body });
    assert.equal(response.status, 201, `POST ${at}: ${response.text}`);
    return response.body.id as string;
  };
  const config = (
    side: Side,
    type: string,
    service: string,
    on: string,
    more: Record<string, unknown> = {},
  ) =>
    create(side, '/network-service-configs', vcConfig(side, type, service, on, more)).then((id) => ({
      id,
      side,
    }));

  /** Orders a service of `type` with its configs (`handovers` of a cloud service: 1 or both). */
  const orders: Record<string, (handovers?: 1 | 2) => Promise<Ordered>> = {
    async p2p_vc() {
      const service = await create(
        'spree',
        '/network-services',
        serviceOrder('spree', 'p2p_vc', {
          product_offering: 'po-p2p-vc-fra',
          joining_member_account: CUSTOMERS.thames.account,
        }),
      );
      return {
        service,
        configs: [
          await config('spree', 'p2p_vc', service, spreeOn[0]),
          await config('thames', 'p2p_vc', service, thamesOn),
        ],
      };
    },
    async mp2mp_vc() {
      const service = await create(
        'spree',
        '/network-services',
        serviceOrder('spree', 'mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra' }),
      );
      return { service, configs: [await config('spree', 'mp2mp_vc', service, spreeOn[0])] };
    },
    async p2mp_vc() {
      const service = await create(
        'spree',
        '/network-services',
        serviceOrder('spree', 'p2mp_vc', { product_offering: 'po-p2mp-vc-fra' }),
      );
      return {
        service,
        configs: [
          await config('spree', 'p2mp_vc', service, spreeOn[0], { role: 'root' }),
          await config('spree', 'p2mp_vc', service, spreeOn[1], { role: 'leaf' }),
        ],
      };
    },
    async cloud_vc(handovers = 2) {
      made += 1;
      const service = await create(
        'spree',
        '/network-services',
        serviceOrder('spree', 'cloud_vc', {
          product_offering: 'po-cloud-nimbus-fra',
          cloud_key: `nimbus-deletions-${suffix}-${made}`,
          capacity: 1000,
        }),
      );
      const configs = [await config('spree', 'cloud_vc', service, spreeOn[0], { handover: 1 })];
      if (handovers === 2)
        configs.push(await config('spree', 'cloud_vc', service, spreeOn[1], { handover: 2 }));
      return { service, configs };
    },
  };

  const servicePath = (id: string) => `/network-services/${id}`;
  const configPath = (id: string) => `/network-service-configs/${id}`;

  /** A DELETE as the Terraform provider sends it: `{}` for a service, JSON null for a config. */
  const deleteService = (ordered: Ordered) =>
    request('DELETE', servicePath(ordered.service), { token: tokens.spree, body: {} });
  const deleteConfigs = (ordered: Ordered) =>
    Promise.all(
      ordered.configs.map(({ id, side }) =>
        request('DELETE', configPath(id), { token: tokens[side], body: null }),
      ),
    );

  const assertGoing = (response: HttpResponse, what: string) => {
    assert.equal(response.status, 202, `DELETE ${what}: ${response.text}`);
    assert.equal(response.body.state, 'decommission_requested', `DELETE ${what}: ${response.text}`);
    assert.match(String(response.body.decommission_at), /^\d{4}-\d{2}-\d{2}$/, response.text);
  };

  /** Deletes the service and its configs in `order`; each answer says it goes. */
  async function deleteIn(order: Order, ordered: Ordered): Promise<void> {
    let service: HttpResponse;
    let configs: HttpResponse[];
    if (order === 'before') {
      service = await deleteService(ordered);
      configs = await deleteConfigs(ordered);
    } else if (order === 'after') {
      configs = await deleteConfigs(ordered);
      service = await deleteService(ordered);
    } else {
      [service, configs] = await Promise.all([deleteService(ordered), deleteConfigs(ordered)]);
    }
    assertGoing(service, ordered.service);
    configs.forEach((answer, index) => assertGoing(answer, ordered.configs[index].id));
    // What reads say afterwards: everything going, the service no earlier than its configs.
    const going = await request('GET', servicePath(ordered.service), { token: tokens.spree });
    assert.equal(going.body.state, 'decommission_requested', going.text);
    for (const { id, side } of ordered.configs) {
      const config = await request('GET', configPath(id), { token: tokens[side] });
      assert.equal(config.body.state, 'decommission_requested', config.text);
      assert.ok(String(going.body.decommission_at) >= String(config.body.decommission_at), going.text);
    }
  }

  /** Ends the configs and the service on their day (told to go ahead now): all decommissioned. */
  async function endAll(ordered: Ordered): Promise<void> {
    for (const { id, side } of ordered.configs)
      await endsNow(tokens[side], configPath(id), configWorkflowId(id));
    await endsNow(tokens.spree, servicePath(ordered.service), serviceWorkflowId(ordered.service));
  }

  for (const type of Object.keys(orders))
    for (const order of ['before', 'together with', 'after'] as const)
      it(`ends a ${type} service deleted ${order} its configs`, async () => {
        const ordered = await orders[type]();
        for (const { id, side } of ordered.configs) await reaches(tokens[side], configPath(id), 'production');
        await reaches(tokens.spree, servicePath(ordered.service), 'production');
        await deleteIn(order, ordered);
        await endAll(ordered);
      });

  for (const order of ['before', 'after'] as const)
    it(`ends a cloud service still waiting for its second handover, deleted ${order} its config`, async () => {
      const ordered = await orders.cloud_vc(1);
      await reaches(tokens.spree, configPath(ordered.configs[0].id), 'production');
      const waiting = await reaches(tokens.spree, servicePath(ordered.service), 'allocated');
      assert.ok(
        (waiting as { status?: Array<{ tag: string }> }).status?.some(
          (entry) => entry.tag === 'waiting_for_configs',
        ),
        JSON.stringify(waiting),
      );
      await deleteIn(order, ordered);
      await endAll(ordered);
      const workflow = stack().temporal.client.workflow.getHandle(serviceWorkflowId(ordered.service));
      assert.equal(await workflow.result(), 'decommissioned');
      const { provider_ref } = (await request('GET', servicePath(ordered.service), { token: tokens.spree }))
        .body;
      const circuit = await new LabCloudProvider(stack().db.sequelize).readCircuit(String(provider_ref));
      assert.equal(circuit?.state, 'released', 'the provider let the circuit go');
    });
});
