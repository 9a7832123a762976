import assert from 'node:assert/strict';
import type { ApiService } from '../../api/server';
import { startApi } from '../../api/server';
import { openDatabase } from '../../db';
import type { Database } from '../../db';
import { configOrder, liveConnection, orderConnection, reaches, SPREE } from '../support/exchange-lan';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';
import { stack } from '../support/stack';
import { serviceOrder, vcConfig } from '../support/virtual-circuits';

/**
 * Every array a client writes reads back in the order the client gave it: in the answer to the
 * write, by id, in a list, in the event the write appended, and from an API that has just started
 * (nothing of it in memory). Clients that model these arrays as ordered lists (the Terraform
 * provider does) otherwise see a change in every later plan. Each list is written in an order that
 * is neither its sorted order nor the order of its ids, then written again reordered.
 */

const RS4 = 'nf-rs1-fra';
const ROLES = {
  implementation: 'ra-spree-networks-implementation',
  noc: 'ra-spree-networks-noc',
  peering: 'ra-spree-networks-peering',
};

interface Written {
  /** Where the resource is read by id, e.g. `/connections/conn-…`. */
  at: string;
  /** The list it is listed in, filtered down to it. */
  list: string;
  /** The event type the write appends, and the payload property holding the resource. */
  event: string;
  holder: string;
}

describe('arrays a client writes keep the client’s order', function () {
  this.timeout(120_000);

  let token: string;
  /** An API started after the writes, on a database handle of its own: a restarted service. */
  let restarted: { api: ApiService; db: Database } | undefined;
  const macs: string[] = [];

  before(async () => {
    token = (await login('customer', 0)).accessToken;
    // Two MACs, named below in the order opposite to their ids'.
    for (const suffix of ['01', '02']) {
      const mac = await request('POST', '/macs', {
        token,
        body: {
          managing_account: SPREE,
          consuming_account: SPREE,
          address: `02:5a:${Date.now()
            .toString(16)
            .slice(-6)
            .replace(/(..)(?=.)/g, '$1:')}:${suffix}`,
        },
      });
      assert.equal(mac.status, 201, mac.text);
      macs.push(mac.body.id as string);
    }
    macs.sort().reverse();
  });

  after(async () => {
    if (!restarted) return;
    await restarted.api.stop();
    await restarted.db.close();
  });

  /** The newest event of `type` about the resource `id`: its payload's resource. */
  async function lastEvent(written: Written, id: string): Promise<Record<string, unknown>> {
    const events = await readEvents<{ payload: Record<string, Record<string, unknown>> }>(
      token,
      `?type=${written.event}`,
    );
    const about = events
      .map((event) => event.payload[written.holder])
      .filter((resource) => resource?.id === id);
    assert.ok(about.length, `a ${written.event} event about ${id}`);
    return about[about.length - 1];
  }

  /** Asserts `expected` for each property everywhere the resource is read, but after a restart. */
  async function readsBack(
    written: Written,
    answer: Record<string, unknown>,
    expected: Record<string, unknown>,
  ): Promise<void> {
    const id = answer.id as string;
    const byId = await request('GET', written.at, { token });
    assert.equal(byId.status, 200, byId.text);
    const listed = await request('GET', written.list, { token });
    assert.equal(listed.status, 200, listed.text);
    const inList = (listed.body as Array<Record<string, unknown>>).find((item) => item.id === id);
    assert.ok(inList, `${id} in ${written.list}`);
    const event = await lastEvent(written, id);
    for (const [property, value] of Object.entries(expected)) {
      assert.deepEqual(answer[property], value, `${property} in the answer to the write`);
      assert.deepEqual(byId.body[property], value, `${property} read by id`);
      assert.deepEqual(inList[property], value, `${property} in ${written.list}`);
      assert.deepEqual(event[property], value, `${property} in the ${written.event} event`);
    }
  }

  /** Writes `body` with `method` and checks that its lists read back as written. */
  async function write(
    method: 'POST' | 'PATCH',
    path: string,
    body: Record<string, unknown>,
    where: (id: string) => Written,
    lists: readonly string[],
  ): Promise<string> {
    const response = await request(method, path, { token, body });
    assert.equal(response.status, method === 'POST' ? 201 : 202, response.text);
    const id = response.body.id as string;
    const expected = Object.fromEntries(lists.map((name) => [name, body[name]]));
    await readsBack(where(id), response.body, expected);
    return id;
  }

  const connection = (id: string): Written => ({
    at: `/connections/${id}`,
    list: `/connections?id=${id}`,
    event: 'connection.changed',
    holder: 'connection',
  });
  const config = (id: string): Written => ({
    at: `/network-service-configs/${id}`,
    list: `/network-service-configs?id=${id}`,
    event: 'network_service_config.changed',
    holder: 'network_service_config',
  });
  const session = (id: string): Written => ({
    at: `/network-feature-configs/${id}`,
    list: `/network-feature-configs?id=${id}`,
    event: 'network_feature_config.changed',
    holder: 'network_feature_config',
  });
  const account = (id: string): Written => ({
    at: `/accounts/${id}`,
    list: `/accounts?id=${id}`,
    event: 'account.updated',
    holder: 'account',
  });
  const created = (written: Written): Written => ({
    ...written,
    event: written.event.replace(/\.(changed|updated)$/, '.created'),
  });

  /** What was written last, to read again from a restarted API. */
  const last = new Map<string, Record<string, unknown>>();

  it('a connection’s role assignments and subscriber-side demarcs', async () => {
    const order = {
      mode: 'lag_lacp',
      lacp_timeout: 'slow',
      port_quantity: 2,
      role_assignments: [ROLES.noc, ROLES.implementation],
      subscriber_side_demarcs: ['cage 9, panel 2, port 1', 'cage 1, panel 1, port 9'],
    };
    const id = await orderConnection(token, order);
    const answer = (await request('GET', `/connections/${id}`, { token })).body;
    await readsBack(created(connection(id)), answer, {
      role_assignments: order.role_assignments,
      subscriber_side_demarcs: order.subscriber_side_demarcs,
    });
    await reaches(token, `/connections/${id}`, 'production');
    // The demarcs are written with the order only.
    const change = { role_assignments: [ROLES.peering, ROLES.noc, ROLES.implementation] };
    await write('PATCH', `/connections/${id}`, change, connection, ['role_assignments']);
    last.set(`/connections/${id}`, { ...change, subscriber_side_demarcs: order.subscriber_side_demarcs });
  });

  it('an exchange-LAN config’s role assignments, MACs and ASNs', async () => {
    const lists = ['role_assignments', 'macs', 'asns'] as const;
    const on = await liveConnection(token);
    const order = configOrder(on, {
      role_assignments: [ROLES.peering, ROLES.noc],
      macs: [...macs],
      asns: [64512, 64511],
    });
    const id = await write('POST', '/network-service-configs', order, (x) => created(config(x)), lists);
    await reaches(token, `/network-service-configs/${id}`, 'production');
    const change = {
      type: 'exchange_lan',
      role_assignments: [ROLES.noc, ROLES.peering],
      macs: [...macs].reverse(),
      asns: [64513, 64511, 64512],
    };
    await write('PATCH', `/network-service-configs/${id}`, change, config, lists);
    await write('PATCH', `/network-service-configs/${id}`, { ...change, macs: [...macs] }, config, lists);
    last.set(`/network-service-configs/${id}`, { ...change, macs: [...macs] });

    // A route-server session on it: its role assignments and flags.
    const ips = await request('GET', `/ips?network_service_config=${id}`, { token });
    const v4 = (ips.body as Array<{ id: string; version: number }>).find((ip) => ip.version === 4);
    assert.ok(v4, ips.text);
    const flagged = [
      { name: 'rpki-strict', enabled: true },
      { name: 'no-export', enabled: false },
    ];
    const sessionId = await write(
      'POST',
      '/network-feature-configs',
      {
        type: 'route_server',
        network_feature: RS4,
        network_service_config: id,
        managing_account: SPREE,
        consuming_account: SPREE,
        billing_account: SPREE,
        role_assignments: [ROLES.peering, ROLES.noc],
        asn: 64511,
        as_set_v4: 'AS-SPREE',
        session_mode: 'public',
        bgp_session_type: 'passive',
        ip: v4.id,
        flags: flagged,
      },
      (x) => created(session(x)),
      ['role_assignments', 'flags'],
    );
    await reaches(token, `/network-feature-configs/${sessionId}`, 'production');
    const sessionChange = {
      type: 'route_server',
      role_assignments: [ROLES.noc, ROLES.peering],
      flags: [flagged[1], flagged[0]],
    };
    await write('PATCH', `/network-feature-configs/${sessionId}`, sessionChange, session, [
      'role_assignments',
      'flags',
    ]);
    last.set(`/network-feature-configs/${sessionId}`, sessionChange);
  });

  it('a multipoint config’s MACs and role assignments', async () => {
    const lists = ['role_assignments', 'macs'] as const;
    const on = await liveConnection(token);
    const service = await request('POST', '/network-services', {
      token,
      body: serviceOrder('spree', 'mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra', public: true }),
    });
    assert.equal(service.status, 201, service.text);
    const order = vcConfig('spree', 'mp2mp_vc', service.body.id as string, on, {
      role_assignments: [ROLES.peering, ROLES.noc],
      macs: [...macs],
    });
    const id = await write('POST', '/network-service-configs', order, (x) => created(config(x)), lists);
    const change = {
      type: 'mp2mp_vc',
      macs: [...macs].reverse(),
      role_assignments: [ROLES.noc, ROLES.peering],
    };
    await write('PATCH', `/network-service-configs/${id}`, change, config, lists);
    last.set(`/network-service-configs/${id}`, change);
  });

  it('an account’s metro-area-network presence', async () => {
    const reseller = (await login('reseller')).accessToken;
    const body = {
      name: `Ordered Lists ${Date.now().toString(36)}`,
      address: { country: 'DE', locality: 'Hamburg', postal_code: '20095', street_address: 'Hafenstraße 1' },
      metro_area_network_presence: ['man-ham', 'man-fra', 'man-ams'],
    };
    const response = await request('POST', '/accounts', { token: reseller, body });
    assert.equal(response.status, 201, response.text);
    const id = response.body.id as string;
    const asReseller = async (written: Written, answer: Record<string, unknown>, presence: string[]) => {
      const saved = token;
      token = reseller;
      try {
        await readsBack(written, answer, { metro_area_network_presence: presence });
      } finally {
        token = saved;
      }
    };
    await asReseller(created(account(id)), response.body, body.metro_area_network_presence);
    const change = { metro_area_network_presence: ['man-fra', 'man-ham'] };
    const patched = await request('PATCH', `/accounts/${id}`, { token: reseller, body: change });
    assert.equal(patched.status, 202, patched.text);
    await asReseller(account(id), patched.body, change.metro_area_network_presence);
    last.set(`reseller:/accounts/${id}`, change);
  });

  it('reads every list back in the written order from a restarted API', async () => {
    const { config, logger } = stack();
    const db = openDatabase({
      url: config.databaseUrl,
      apiSecretHashKey: config.apiSecretHashKey,
      quotas: config.quotas,
    });
    restarted = { db, api: await startApi({ config, logger, db, port: 0 }) };
    const reseller = (await login('reseller')).accessToken;
    assert.ok(last.size >= 5, 'every write above is read again');
    for (const [key, written] of last) {
      const [caller, at] = key.startsWith('reseller:') ? [reseller, key.slice(9)] : [token, key];
      const read = await request('GET', at, { token: caller, baseUrl: restarted.api.url });
      assert.equal(read.status, 200, read.text);
      for (const [property, value] of Object.entries(written))
        if (Array.isArray(value)) assert.deepEqual(read.body[property], value, `${at} ${property}`);
    }
  });
});
