import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { LabDriver } from '../../drivers/lab/driver';
import { createCustomerCircuit, LabCloudProvider } from '../../drivers/cloud/lab-provider';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { configWorkflowId, serviceWorkflowId } from '../../db/repositories/network-service-config-repository';
import { dayOf } from '../../domain/cancellation';
import { settleConnections } from '../support/connections';
import { configOrder, deviceOf } from '../support/exchange-lan';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';
import { unreadableReferences } from '../support/references';
import { stack, startSecondApi } from '../support/stack';
import {
  CUSTOMERS,
  endsNow as endsNowOf,
  roomiestFrankfurtOfferings,
  serviceOrder,
  vcConfig,
} from '../support/virtual-circuits';
import { eventually } from '../support/wait';

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

const SPREE = CUSTOMERS.spree.account;
const THAMES = CUSTOMERS.thames.account;
const RS4 = 'nf-rs1-fra';
const STRATUS = { provider: 'Stratus Compute', pop: 'stratus-fra1' };
/** Thames's own role assignment for its configs (its configuration is not under test). */
const THAMES_NOC = `ra-${CUSTOMERS.thames.prefix}-noc`;

const GOING = ['decommission_requested', 'decommissioned', 'cancelled', 'archived'];

interface Resource {
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

interface Policy {
  decommission_at: string;
  charged_until: string;
}

const sql = <T extends object>(query: string, replacements: Record<string, unknown> = {}) =>
  stack().db.sequelize.query<T>(query, { replacements, type: QueryTypes.SELECT });

const today = () => dayOf(new Date());
const latest = (days: Array<string | null | undefined>) =>
  days.filter((day): day is string => typeof day === 'string').reduce((a, b) => (a > b ? a : b));

/** A DELETE body as a client sends it: JSON null, an empty object, or nothing at all. */
type DeleteBody = null | Record<string, unknown> | 'none';
const del = (token: string, path: string, body: DeleteBody) =>
  request('DELETE', path, body === 'none' ? { token } : { token, body });

/**
 * A refusal that leaves things as they are: 400 unable-to-fulfill whose conflicts name each of
 * `holders` (of `remoteType`, through `property` where given), with properties naming what to change.
 */
function assertRefused(
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
function assertProperties(response: HttpResponse, name?: string): void {
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

describe('an infrastructure-as-code configuration applied and destroyed over HTTP', function () {
  this.timeout(180_000);
  after(() => settleConnections());

  let spree: string;
  let thames: string;
  const lab = () => new LabDriver(stack().db.sequelize);
  const cloud = () => new LabCloudProvider(stack().db.sequelize);
  const suffix = randomBytes(3).toString('hex');

  /** What the configuration holds, by its role in it. */
  const ids = {
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
  };
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

  it('refuses to take away what live resources stand on, and changes nothing', async () => {
    assertRefused(await del(spree, `/macs/${ids.mac}`, 'none'), [ids.lan, ids.mp2mpSpree], {
      remoteType: 'network-service-configs',
    });
    assertRefused(
      await del(spree, path.connection(ids.bundle), null),
      [ids.lan, ids.p2pA, ids.mp2mpSpree, ids.nimbus1, ids.stratusConfig],
      { remoteType: 'network-service-configs' },
    );
    assertRefused(await del(spree, `/member-joining-rules/${ids.rule}`, 'none'), [ids.mp2mpThames], {
      remoteType: 'network-service-configs',
    });
    assertRefused(
      await del(spree, `/role-assignments/${ids.implementation}`, 'none'),
      [ids.bundle, ids.single],
      { remoteType: 'connections', property: 'role_assignments' },
    );
    assertRefused(await del(spree, `/contacts/${ids.peeringContact}`, 'none'), [ids.lan], {
      remoteType: 'network-service-configs',
      property: 'role_assignments',
    });
    assert.equal((await read(spree, `/macs/${ids.mac}`)).id, ids.mac);
    assert.equal((await read(spree, path.connection(ids.bundle))).state, 'production');
    assert.equal((await read(spree, `/member-joining-rules/${ids.rule}`)).id, ids.rule);
    assert.equal((await read(spree, `/role-assignments/${ids.implementation}`)).id, ids.implementation);
    assert.equal((await read(spree, `/contacts/${ids.peeringContact}`)).id, ids.peeringContact);
  });

  it('destroys the route-server session and the configs, each going on its policy’s day', async () => {
    const session = await del(spree, path.session(ids.session), 'none');
    assert.equal(session.status, 202, session.text);
    assert.equal(session.body.state, 'decommission_requested');
    for (const config of spreeConfigs()) {
      const going = await cancelled(spree, path.config(config), null);
      days.set(config, going.decommission_at!);
    }
    // A session has no notice period of its own: it goes at once.
    await reaches(spree, path.session(ids.session), 'decommissioned');
    assert.deepEqual(await lab().readBgpSessions(RS4, [ids.session]), []);
  });

  it('deletes the MACs once the configs using them are going; they leave their lists and stay on the device until they are gone', async () => {
    for (const [mac, address] of [
      [ids.mac, ids.macAddress],
      [ids.secondMac, ids.secondMacAddress],
    ]) {
      const deleted = await del(spree, `/macs/${mac}`, 'none');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.id, mac);
      assert.equal(deleted.body.address, address);
      assert.equal((await request('GET', `/macs/${mac}`, { token: spree })).status, 404);
    }
    for (const config of [ids.lan, ids.mp2mpSpree]) {
      const going = await read(spree, path.config(config));
      assert.equal(going.state, 'decommission_requested');
      assert.deepEqual(going.macs, [], `${config} no longer names the MACs`);
    }
    const [carried] = await lab().readServices(held.devices.get(ids.bundle)!, [ids.lan]);
    assert.deepEqual(
      [...(carried?.macs ?? [])].sort(),
      [ids.macAddress, ids.secondMacAddress].sort(),
      'the device filters the MACs until the config is gone',
    );
  });

  it('deletes the member joining rule once the member has left the service', async () => {
    const left = await cancelled(thames, path.config(ids.mp2mpThames), null);
    days.set(ids.mp2mpThames, left.decommission_at!);
    const deleted = await del(spree, `/member-joining-rules/${ids.rule}`, 'none');
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.id, ids.rule);
    assert.equal(deleted.body.consuming_account, THAMES);
    assert.equal((await request('GET', `/member-joining-rules/${ids.rule}`, { token: spree })).status, 404);
    assert.deepEqual((await read(spree, path.service(ids.mp2mp))).member_joining_rules, []);
  });

  it('decommissions the services on their policy’s day, with the live configs of the other side', async () => {
    for (const service of services()) {
      const going = await cancelled(spree, path.service(service), {});
      days.set(service, going.decommission_at!);
      assert.ok(
        !(going.status ?? []).some((entry) => entry.tag === 'waiting_for_configs'),
        `${service} does not wait for configs once going: ${JSON.stringify(going.status)}`,
      );
    }
    const bSide = await read(thames, path.config(ids.p2pB));
    assert.equal(bSide.state, 'decommission_requested');
    assert.equal(bSide.decommission_at, days.get(ids.p2p), 'the B side goes on the circuit’s day');
    days.set(ids.p2pB, bSide.decommission_at!);
    // What was going already keeps its day.
    for (const config of spreeConfigs()) {
      const going = await read(spree, path.config(config));
      assert.equal(going.state, 'decommission_requested');
      assert.equal(going.decommission_at, days.get(config));
    }
  });

  it('destroys the connections as the provider does: their port reservations (a bundle’s at once), then a read of each connection; each goes once, no earlier than its configs', async () => {
    const onBundle = [ids.lan, ids.p2pA, ids.mp2mpSpree, ids.nimbus1, ids.stratusConfig];
    const last = latest(onBundle.map((config) => days.get(config)));
    const policy = await policyOf(spree, path.connection(ids.bundle));
    assert.equal(policy.decommission_at, last, 'the policy waits for the configs');
    assert.ok(policy.charged_until >= policy.decommission_at);
    const early = await del(spree, path.connection(ids.bundle), { decommission_at: today() });
    assert.equal(early.status, 400, early.text);
    assert.match(early.body.type as string, /cancellation-policy-error/, early.text);
    assert.equal(early.body.decommission_at, policy.decommission_at);
    assert.equal(early.body.charged_until, policy.charged_until);
    assertProperties(early, 'decommission_at');
    assert.equal((await read(spree, path.connection(ids.bundle))).state, 'production');

    // The bundle's two reservations at once, with the body the provider sends.
    const given = await Promise.all(
      [ids.firstReservation, ids.extraReservation].map((reservation) =>
        del(spree, path.reservation(reservation), null),
      ),
    );
    for (const answer of given) {
      assert.equal(answer.status, 202, answer.text);
      assert.equal(answer.body.state, 'decommission_requested', answer.text);
    }
    // The connection's own destroy only reads it: it goes with its last port, on its policy's day.
    const bundle = await read(spree, path.connection(ids.bundle));
    assert.equal(bundle.state, 'decommission_requested');
    assert.equal(bundle.decommission_at, policy.decommission_at);
    assert.equal(bundle.charged_until, policy.charged_until);
    const going = (
      await readEvents<{ payload: { id?: string; to?: string } }>(spree, '?type=connection.state_changed')
    ).filter((event) => event.payload.id === ids.bundle && event.payload.to === 'decommission_requested');
    assert.equal(going.length, 1, 'the bundle is asked to go once');

    // A connection of one port goes with its one reservation, by the connection's policy.
    const singles = [
      [spree, ids.single, [ids.nimbus2]],
      [thames, ids.thamesConnection, thamesConfigs()],
    ] as const;
    for (const [token, connection, configs] of singles) {
      const { port_reservations } = await read(token, path.connection(connection));
      assert.equal(port_reservations!.length, 1);
      const [reservation] = port_reservations!;
      const ownPolicy = await policyOf(token, path.connection(connection));
      assert.deepEqual(await policyOf(token, path.reservation(reservation)), ownPolicy);
      const answer = await del(token, path.reservation(reservation), null);
      assert.equal(answer.status, 202, answer.text);
      assert.equal(answer.body.state, 'decommission_requested', answer.text);
      assert.equal(answer.body.decommission_at, ownPolicy.decommission_at);
      const after = await read(token, path.connection(connection));
      assert.equal(after.state, 'decommission_requested');
      assert.equal(after.decommission_at, ownPolicy.decommission_at);
      assert.ok(String(after.decommission_at) >= latest(configs.map((config) => days.get(config))));
    }
  });

  it('deletes the role assignments and contacts once what names them is going, leaving no id of theirs behind', async () => {
    for (const assignment of assignments()) {
      const deleted = await del(spree, `/role-assignments/${assignment}`, 'none');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.id, assignment);
      assert.equal((await request('GET', `/role-assignments/${assignment}`, { token: spree })).status, 404);
    }
    for (const contact of [ids.opsContact, ids.peeringContact]) {
      const deleted = await del(spree, `/contacts/${contact}`, 'none');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.id, contact);
      assert.equal((await request('GET', `/contacts/${contact}`, { token: spree })).status, 404);
    }
    const naming = [
      path.connection(ids.bundle),
      path.connection(ids.single),
      path.session(ids.session),
      ...spreeConfigs().map(path.config),
    ];
    for (const at of naming)
      assert.deepEqual(
        (await read(spree, at)).role_assignments!.filter((id) => assignments().includes(id)),
        [],
        `${at} no longer names the deleted role assignments`,
      );
    for (const at of naming) {
      const { state } = await read(spree, at);
      assert.ok(GOING.includes(state), `${at} is ${state}`);
    }
  });

  it('ends the configs and services decommissioned: VLANs, addresses and cloud circuits released, the devices clear', async () => {
    for (const config of spreeConfigs()) await endsNow(spree, path.config(config), configWorkflowId(config));
    for (const config of thamesConfigs())
      await endsNow(thames, path.config(config), configWorkflowId(config));
    for (const service of services()) await endsNow(spree, path.service(service), serviceWorkflowId(service));

    const configs = [...spreeConfigs(), ...thamesConfigs()];
    const vlans = await sql<{ id: string; vlan_held: number }>(
      'SELECT id, vlan_held FROM network_service_configs WHERE id IN (:configs)',
      { configs },
    );
    assert.equal(vlans.length, configs.length);
    assert.deepEqual(
      vlans.filter((config) => Number(config.vlan_held) !== 0).map((config) => config.id),
      [],
      'every VLAN is released',
    );
    const addresses = await sql<{
      id: string;
      released_at: Date | null;
      network_service_config: string | null;
    }>('SELECT id, released_at, network_service_config FROM ip_addresses WHERE id IN (:ips)', {
      ips: held.ips,
    });
    assert.equal(addresses.length, 2);
    for (const address of addresses) {
      assert.ok(address.released_at, `${address.id} is released`);
      assert.equal(address.network_service_config, null);
    }
    for (const service of [ids.nimbus, ids.stratus]) {
      const { provider_ref } = await read(spree, path.service(service));
      const circuit = await cloud().readCircuit(provider_ref!);
      assert.equal(circuit?.state, 'released', `${service}: the provider let the circuit go`);
      assert.deepEqual(circuit?.attachments, []);
    }
    const carried = [
      [ids.bundle, [ids.lan, ids.p2pA, ids.mp2mpSpree, ids.nimbus1, ids.stratusConfig]],
      [ids.single, [ids.nimbus2]],
      [ids.thamesConnection, thamesConfigs()],
    ] as const;
    for (const [connection, onIt] of carried)
      assert.deepEqual(
        await lab().readServices(held.devices.get(connection)!, [...onIt]),
        [],
        `nothing of ${connection}’s configs on its device`,
      );
  });

  it('ends the connections decommissioned after their configs, every port back with the exchange', async () => {
    const connections = [
      [spree, ids.bundle],
      [spree, ids.single],
      [thames, ids.thamesConnection],
    ] as const;
    for (const [token, connection] of connections) {
      const done = await endsNow(token, path.connection(connection), provisioningWorkflowId(connection));
      assert.deepEqual(done.ports, []);
    }
    for (const reservation of [ids.firstReservation, ids.extraReservation])
      assert.equal((await read(spree, path.reservation(reservation))).state, 'decommissioned');
    const ports = await sql<{ id: string; connection: string | null }>(
      'SELECT id, connection FROM ports WHERE id IN (:ports) ORDER BY id',
      { ports: held.ports },
    );
    assert.equal(ports.length, held.ports.length);
    assert.deepEqual(
      ports.filter((port) => port.connection !== null),
      [],
      'every port is back with the exchange',
    );
  });

  it('leaves no reference dangling, and what was deleted is gone', async () => {
    const spreeSide = [
      path.connection(ids.bundle),
      path.connection(ids.single),
      path.reservation(ids.firstReservation),
      path.reservation(ids.extraReservation),
      path.session(ids.session),
      ...spreeConfigs().map(path.config),
      ...services().map(path.service),
    ];
    const thamesSide = [
      path.connection(ids.thamesConnection),
      ...thamesConfigs().map(path.config),
      path.service(ids.p2p),
      path.service(ids.mp2mp),
    ];
    // What the customers may no longer see (a port back with the exchange, a released address, a
    // private service that admits them no more) may stay named; nothing deleted may.
    const ours = await unreadableReferences(spree, spreeSide);
    const theirs = await unreadableReferences(thames, thamesSide);
    assert.deepEqual([...ours.dangling, ...theirs.dangling], []);
    for (const gone of [
      ...assignments().map((id) => `/role-assignments/${id}`),
      `/contacts/${ids.opsContact}`,
      `/contacts/${ids.peeringContact}`,
      `/macs/${ids.mac}`,
      `/member-joining-rules/${ids.rule}`,
    ])
      assert.equal((await request('GET', gone, { token: spree })).status, 404, gone);
  });
});
