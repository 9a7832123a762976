import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { LabDriver } from '../../drivers/lab/driver';
import { createCustomerCircuit, LabCloudProvider } from '../../drivers/cloud/lab-provider';
import { settleConnections } from '../support/connections';
import { configOrder, deviceOf } from '../support/exchange-lan';
import { login, request } from '../support/http';
import { stack, startSecondApi } from '../support/stack';
import {
  CUSTOMERS,
  endsNow as endsNowOf,
  roomiestFrankfurtOfferings,
  serviceOrder,
  vcConfig,
} from '../support/virtual-circuits';
import { eventually } from '../support/wait';
import type { DeleteBody, Policy, Resource } from '../support/round-trip';
import { del, RS4, roundTripIds, SPREE, STRATUS, THAMES, THAMES_NOC } from '../support/round-trip';
import { describeTearingDown } from '../support/round-trip-teardown';

/**
 * What an infrastructure-as-code client does with one customer's configuration: `apply` creates
 * every resource in dependency order and waits for production, `destroy` deletes them in reverse
 * dependency order at once, sending the DELETE bodies the Terraform provider and pyixapi send
 * (JSON `null` for configs and port reservations, `{}` for services, none where the operation takes
 * none), without waiting for configs or services to be decommissioned in between. Spree Networks
 * applies; Thames Cloud is the B side of its circuit and a member of its multipoint service, and
 * leaves the latter (and then gives up its connection) on its own. Workflows that wait for a notice
 * period are told to go ahead, so that everything ends within the test.
 */

describe('an infrastructure-as-code configuration applied and destroyed over HTTP', function () {
  this.timeout(180_000);
  after(() => settleConnections());

  let spree: string;
  let thames: string;
  const lab = () => new LabDriver(stack().db.sequelize);
  const cloud = () => new LabCloudProvider(stack().db.sequelize);
  const suffix = randomBytes(3).toString('hex');

  const ids = roundTripIds(suffix);
  /** Everything that held something of the exchange's, to see it back at the end. */
  const held = {
    ports: [] as string[],
    ips: [] as string[],
    devices: new Map<string, string>(),
  };
  /** The decommission day each config and service was given. */
  const days = new Map<string, string>();

  const path = {
    connection: (id: string) => `/connections/${id}`,
    reservation: (id: string) => `/port-reservations/${id}`,
    config: (id: string) => `/network-service-configs/${id}`,
    session: (id: string) => `/network-feature-configs/${id}`,
    service: (id: string) => `/network-services/${id}`,
  };
  const read = async (token: string, at: string): Promise<Resource> => {
    const response = await request('GET', at, { token });
    assert.equal(response.status, 200, `${at}: ${response.text}`);
    return response.body as Resource;
  };
  const create = async (token: string, at: string, body: Record<string, unknown>): Promise<Resource> => {
    const response = await request('POST', at, { token, body });
    assert.equal(response.status, 201, `POST ${at}: ${response.text}`);
    return response.body as Resource;
  };
  const reaches = (token: string, at: string, state: string) =>
    eventually(
      `${at} ${state}`,
      async () => {
        const body = await read(token, at);
        return body.state === state ? body : undefined;
      },
      30_000,
    );
  const endsNow = async (token: string, at: string, workflowId: string) =>
    (await endsNowOf(token, at, workflowId)) as Resource;
  const policyOf = async (token: string, at: string): Promise<Policy> => {
    const policy = await request('GET', `${at}/cancellation-policy`, { token });
    assert.equal(policy.status, 200, policy.text);
    return policy.body as Policy;
  };
  /** A DELETE that asks the resource to go on its policy's first day: 202 with it going on that day. */
  const cancelled = async (token: string, at: string, body: DeleteBody): Promise<Resource> => {
    const policy = await policyOf(token, at);
    const response = await del(token, at, body);
    assert.equal(response.status, 202, `DELETE ${at}: ${response.text}`);
    const going = response.body as Resource;
    assert.equal(going.state, 'decommission_requested', `${at}: ${response.text}`);
    assert.equal(going.decommission_at, policy.decommission_at, `${at} goes on its policy's day`);
    assert.equal(going.charged_until, policy.charged_until, `${at} is charged as its policy says`);
    assert.ok(policy.charged_until >= policy.decommission_at, response.text);
    return going;
  };
  const spreeConfigs = () => [ids.lan, ids.p2pA, ids.mp2mpSpree, ids.nimbus1, ids.nimbus2, ids.stratusConfig];
  const thamesConfigs = () => [ids.p2pB, ids.mp2mpThames];
  const services = () => [ids.p2p, ids.mp2mp, ids.nimbus, ids.stratus];
  const assignments = () => [ids.implementation, ids.noc, ids.peering];

  before(async () => {
    spree = (await login('customer', 0)).accessToken;
    thames = (await login('customer', 1)).accessToken;
  });

  it('applies: contacts, role assignments, a MAC, a bundle of two ports, exchange-LAN access with a route-server session, a circuit, a multipoint service and two cloud services, all in production', async () => {
    // Contacts and their roles.
    const accounts = { managing_account: SPREE, consuming_account: SPREE };
    ids.opsContact = (
      await create(spree, '/contacts', {
        ...accounts,
        name: 'Spree Automation',
        email: `automation-${suffix}@spree-networks.example`,
        telephone: '+4930700990',
        external_ref: 'terraform',
      })
    ).id;
    ids.peeringContact = (
      await create(spree, '/contacts', {
        ...accounts,
        email: `peering-${suffix}@spree-networks.example`,
      })
    ).id;
    const assign = async (role: string, contact: string) => {
      const assignment = await create(spree, '/role-assignments', { role, contact });
      assert.deepEqual({ role: assignment.role, contact: assignment.contact }, { role, contact });
      return assignment.id;
    };
    ids.implementation = await assign('role-implementation', ids.opsContact);
    ids.noc = await assign('role-noc', ids.opsContact);
    ids.peering = await assign('role-peering', ids.peeringContact);

    const mac = await create(spree, '/macs', { ...accounts, address: ids.macAddress });
    ids.mac = mac.id;

    // The connections: a bundle at the roomiest Frankfurt PoP, a single port at another (a cloud
    // service's second handover must be on another device), and Thames's.
    const [roomiest, next] = await roomiestFrankfurtOfferings(2);
    const connectionOrder = (offering: string, extra: Record<string, unknown>) => ({
      ...accounts,
      billing_account: SPREE,
      role_assignments: [ids.implementation, ids.noc],
      product_offering: offering,
      port_quantity: 1,
      subscriber_side_demarcs: ['cage 7, panel 1, ports 1-2'],
      ...extra,
    });
    ids.bundle = (
      await create(
        spree,
        '/connections',
        connectionOrder(roomiest, { mode: 'lag_lacp', lacp_timeout: 'slow' }),
      )
    ).id;
    ids.single = (await create(spree, '/connections', connectionOrder(next, { mode: 'standalone' }))).id;
    ids.thamesConnection = (
      await create(thames, '/connections', {
        managing_account: THAMES,
        consuming_account: THAMES,
        billing_account: THAMES,
        role_assignments: [`ra-${CUSTOMERS.thames.prefix}-implementation`, THAMES_NOC],
        product_offering: 'po-connection-fra-10g',
        mode: 'standalone',
        port_quantity: 1,
        subscriber_side_demarcs: ['cage 4, panel 1, port 7'],
      })
    ).id;
    await reaches(spree, path.connection(ids.bundle), 'production');
    await reaches(spree, path.connection(ids.single), 'production');
    await reaches(thames, path.connection(ids.thamesConnection), 'production');
    const extra = await create(spree, '/port-reservations', {
      connection: ids.bundle,
      subscriber_side_demarc: 'cage 7, panel 1, ports 1-2',
    });
    ids.extraReservation = extra.id;
    // A client polls the connection until it has its ports.
    const bundle = await eventually(
      'the bundle with two ports in production',
      async () => {
        const now = await read(spree, path.connection(ids.bundle));
        return now.state === 'production' && now.ports!.length === 2 ? now : undefined;
      },
      30_000,
    );
    assert.equal(bundle.port_quantity, 2);
    assert.equal(bundle.port_reservations!.length, 2);
    ids.firstReservation = bundle.port_reservations!.find((id) => id !== ids.extraReservation)!;
    const reserved = await read(spree, path.reservation(ids.extraReservation));
    assert.equal(reserved.state, 'production');
    assert.ok(bundle.ports!.includes(reserved.port!), 'the reserved port is one of the bundle');
    held.ports.push(
      ...bundle.ports!,
      ...(await read(spree, path.connection(ids.single))).ports!,
      ...(await read(thames, path.connection(ids.thamesConnection))).ports!,
    );
    assert.equal(held.ports.length, 4);
    for (const connection of [ids.bundle, ids.single, ids.thamesConnection])
      held.devices.set(connection, await deviceOf(connection));

    // Exchange-LAN access with the MAC, and a route-server session once the addresses are there.
    ids.lan = (
      await create(
        spree,
        '/network-service-configs',
        configOrder(ids.bundle, { role_assignments: [ids.noc, ids.peering], macs: [ids.mac] }),
      )
    ).id;
    const addresses = await eventually(
      'the exchange-LAN addresses',
      async () => {
        const listed = await request('GET', `/ips?network_service_config=${ids.lan}`, { token: spree });
        const found = listed.body as Array<{ id: string; version: number }>;
        return found.length === 2 ? found : undefined;
      },
      30_000,
    );
    held.ips.push(...addresses.map((ip) => ip.id));
    ids.session = (
      await create(spree, '/network-feature-configs', {
        type: 'route_server',
        network_feature: RS4,
        network_service_config: ids.lan,
        ...accounts,
        billing_account: SPREE,
        role_assignments: [ids.noc],
        asn: 64511,
        as_set_v4: 'AS-SPREE@RIPE',
        session_mode: 'public',
        bgp_session_type: 'passive',
        ip: addresses.find((ip) => ip.version === 4)!.id,
        max_prefix_v4: 100,
      })
    ).id;

    // Spree's configs name Spree's new role assignment; Thames's its own.
    const ours = (type: string, service: string, connection: string, more: Record<string, unknown> = {}) =>
      vcConfig('spree', type, service, connection, { role_assignments: [ids.noc], ...more });
    const theirs = (type: string, service: string) =>
      vcConfig('thames', type, service, ids.thamesConnection, { role_assignments: [THAMES_NOC] });

    // A circuit to Thames.
    ids.p2p = (
      await create(
        spree,
        '/network-services',
        serviceOrder('spree', 'p2p_vc', {
          product_offering: 'po-p2p-vc-fra',
          joining_member_account: THAMES,
          display_name: 'Spree to Thames',
        }),
      )
    ).id;
    ids.p2pA = (await create(spree, '/network-service-configs', ours('p2p_vc', ids.p2p, ids.bundle))).id;
    ids.p2pB = (await create(thames, '/network-service-configs', theirs('p2p_vc', ids.p2p))).id;

    // A private multipoint service that admits Thames.
    ids.mp2mp = (
      await create(
        spree,
        '/network-services',
        serviceOrder('spree', 'mp2mp_vc', {
          product_offering: 'po-mp2mp-vc-fra',
          display_name: 'Spree VPLS',
        }),
      )
    ).id;
    ids.rule = (
      await create(spree, '/member-joining-rules', {
        type: 'allow',
        network_service: ids.mp2mp,
        consuming_account: THAMES,
        managing_account: SPREE,
      })
    ).id;
    ids.mp2mpSpree = (
      await create(
        spree,
        '/network-service-configs',
        ours('mp2mp_vc', ids.mp2mp, ids.bundle, { macs: [ids.mac] }),
      )
    ).id;
    ids.mp2mpThames = (await create(thames, '/network-service-configs', theirs('mp2mp_vc', ids.mp2mp))).id;

    // Cloud services of both workflows; the provider first: Spree made the circuit there itself.
    // Like the Terraform provider, the configs leave an unset cloud_vlan out.
    ids.nimbus = (
      await create(
        spree,
        '/network-services',
        serviceOrder('spree', 'cloud_vc', {
          product_offering: 'po-cloud-nimbus-fra',
          cloud_key: `nimbus-account-${suffix}`,
          capacity: 1000,
        }),
      )
    ).id;
    ids.nimbus1 = (
      await create(
        spree,
        '/network-service-configs',
        ours('cloud_vc', ids.nimbus, ids.bundle, { handover: 1 }),
      )
    ).id;
    ids.nimbus2 = (
      await create(
        spree,
        '/network-service-configs',
        ours('cloud_vc', ids.nimbus, ids.single, { handover: 2 }),
      )
    ).id;
    ids.stratusKey = (
      await createCustomerCircuit(stack().db.sequelize, { ...STRATUS, bandwidth: 1000, customer: SPREE })
    ).key;
    ids.stratus = (
      await create(
        spree,
        '/network-services',
        serviceOrder('spree', 'cloud_vc', {
          product_offering: 'po-cloud-stratus-fra',
          cloud_key: ids.stratusKey,
        }),
      )
    ).id;
    const stratusConfig = await create(
      spree,
      '/network-service-configs',
      ours('cloud_vc', ids.stratus, ids.bundle, { handover: 1 }),
    );
    assert.equal(stratusConfig.cloud_vlan, null);
    ids.stratusConfig = stratusConfig.id;

    for (const config of spreeConfigs()) await reaches(spree, path.config(config), 'production');
    for (const config of thamesConfigs()) await reaches(thames, path.config(config), 'production');
    await reaches(spree, path.session(ids.session), 'production');
    for (const service of services()) await reaches(spree, path.service(service), 'production');
    const nimbus = await read(spree, path.service(ids.nimbus));
    assert.deepEqual((await cloud().readCircuit(nimbus.provider_ref!))?.connected, [1, 2]);
    const stratus = await read(spree, path.service(ids.stratus));
    const circuit = await cloud().readCircuit(stratus.provider_ref!);
    assert.equal(circuit?.key, ids.stratusKey);
    assert.deepEqual(circuit?.connected, [1]);
  });

  it('changes the exchange-LAN config as the provider does (a purchase order, a second MAC), and what it wrote reads back in the order written', async () => {
    const second = await create(spree, '/macs', {
      managing_account: SPREE,
      consuming_account: SPREE,
      address: ids.secondMacAddress,
    });
    ids.secondMac = second.id;
    // Not in the order of their ids: a list sorted on the way back would show.
    const macs = [ids.mac, ids.secondMac].sort().reverse();
    const changed = await request('PATCH', path.config(ids.lan), {
      token: spree,
      body: { type: 'exchange_lan', purchase_order: `PO-${suffix}`, macs },
    });
    assert.equal(changed.status, 202, changed.text);
    assert.deepEqual(changed.body.macs, macs);
    await reaches(spree, path.config(ids.lan), 'production');
    const written: Array<[string, Record<string, unknown>]> = [
      [path.connection(ids.bundle), { role_assignments: [ids.implementation, ids.noc] }],
      [path.connection(ids.single), { subscriber_side_demarcs: ['cage 7, panel 1, ports 1-2'] }],
      [path.config(ids.lan), { role_assignments: [ids.noc, ids.peering], macs, asns: [64511] }],
      [path.config(ids.mp2mpSpree), { macs: [ids.mac] }],
      [path.session(ids.session), { role_assignments: [ids.noc] }],
    ];
    for (const [at, lists] of written) {
      const byId = await read(spree, at);
      const collection = at.slice(0, at.lastIndexOf('/'));
      const [listed] = (await request('GET', `${collection}?id=${byId.id}`, { token: spree }))
        .body as Resource[];
      for (const [name, value] of Object.entries(lists)) {
        assert.deepEqual(byId[name], value, `${at} ${name}`);
        assert.deepEqual(listed[name], value, `${name} of ${at} in its list`);
      }
    }
  });

  it('gives a token for each of the provider’s logins of one key within a minute, under the default limits', async () => {
    const defaults = await startSecondApi({
      RATE_LIMIT_AUTH_PER_ADDRESS: '',
      RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '',
      RATE_LIMIT_AUTH_FAILURES_PER_KEY: '',
    });
    try {
      const { apiKey, apiSecret } = stack().credentials.find((credential) => credential.accountId === SPREE)!;
      for (let login = 1; login <= 15; login += 1) {
        const answer = await request('POST', '/auth/token', {
          body: { api_key: apiKey, api_secret: apiSecret },
          baseUrl: defaults.url,
        });
        assert.equal(answer.status, 201, `login ${login}: ${answer.text}`);
      }
    } finally {
      await defaults.stop();
    }
  });

  describeTearingDown({
    get spree() {
      return spree;
    },
    get thames() {
      return thames;
    },
    lab,
    cloud,
    ids,
    held,
    days,
    path,
    read,
    reaches,
    endsNow,
    policyOf,
    cancelled,
    spreeConfigs,
    thamesConfigs,
    services,
    assignments,
  });
});
