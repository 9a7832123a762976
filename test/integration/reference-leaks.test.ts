import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { HttpResponse } from '../support/http';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import { configOrder } from '../support/exchange-lan';
import { serviceOrder } from '../support/virtual-circuits';

/**
 * References in request bodies to what the caller cannot see: another account's account (neither
 * acted for nor discoverable), contacts, role assignments, connections, MACs, services and configs.
 * Each is answered exactly as a reference to something that does not exist, byte for byte once the
 * two references are written the same way, so no answer tells whether the other account's thing
 * exists. Spree Networks asks; Petit Reseau (not discoverable, managed by Transit Partners) and
 * Thames Cloud (discoverable, but whose resources are its own) hold what it names.
 */

const SPREE = 'acc-spree-networks';
const THAMES = 'acc-thames-cloud';
const PETIT = 'acc-petit-reseau';

interface Case {
  what: string;
  method: string;
  path: () => string;
  body: (reference: string) => unknown;
  /** What the caller cannot see, and a reference of the same kind to nothing. */
  hidden: () => string;
  absent: string;
  /** The property the 400 names. */
  property: string;
}

/** An answer with the reference written as `<reference>`, its status and type first. */
const normalised = (response: HttpResponse, reference: string) =>
  `${response.status} ${response.headers.get('content-type')}\n${response.text.split(reference).join('<reference>')}`;

const propertyNames = (response: HttpResponse) =>
  ((response.body as { properties?: Array<{ name: string }> }).properties ?? []).map((p) => p.name);

describe('references to what the caller cannot see', function () {
  this.timeout(120_000);
  let spree: string;
  /** Spree's own: a circuit to Thames, a private multipoint service with a rule for Thames. */
  const own = { circuit: '', multipoint: '', rule: '' };
  /** Thames's own, invisible to Spree. */
  const theirs = { connection: '', mac: '', service: '', config: '' };
  const absent = (what: string) => `${what}-no-such-${randomBytes(3).toString('hex')}`;

  before(async () => {
    spree = (await login('customer', 0)).accessToken;
    const { db } = stack();
    const circuit = await request('POST', '/network-services', {
      token: spree,
      body: serviceOrder('spree', 'p2p_vc', {
        product_offering: 'po-p2p-vc-fra',
        joining_member_account: THAMES,
      }),
    });
    assert.equal(circuit.status, 201, circuit.text);
    own.circuit = circuit.body.id as string;
    const multipoint = await request('POST', '/network-services', {
      token: spree,
      body: serviceOrder('spree', 'mp2mp_vc', { product_offering: 'po-mp2mp-vc-fra', public: false }),
    });
    assert.equal(multipoint.status, 201, multipoint.text);
    own.multipoint = multipoint.body.id as string;
    const rule = await request('POST', '/member-joining-rules', {
      token: spree,
      body: {
        type: 'allow',
        network_service: own.multipoint,
        consuming_account: THAMES,
        managing_account: SPREE,
      },
    });
    assert.equal(rule.status, 201, rule.text);
    own.rule = rule.body.id as string;

    const thames = { managing_account: THAMES, consuming_account: THAMES, billing_account: THAMES };
    const offering = (await db.connections.offering('po-connection-fra-10g'))!;
    const connection = await db.connections.create(
      {
        ...thames,
        role_assignments: [],
        product_offering: offering.id,
        mode: 'standalone',
        lacp_timeout: null,
        port_quantity: 1,
        subscriber_side_demarcs: ['thames demarc'],
        external_ref: null,
        purchase_order: '',
        contract_ref: null,
        connecting_party: null,
      },
      offering,
    );
    theirs.connection = connection.id;
    theirs.mac = (
      await db.macs.create({
        managing_account: THAMES,
        consuming_account: THAMES,
        external_ref: null,
        address: `02:7e:${[...randomBytes(4)].map((b) => b.toString(16).padStart(2, '0')).join(':')}`,
        valid_not_before: null,
        valid_not_after: null,
      })
    ).id;
    const service = await db.networkServices.create({
      ...thames,
      type: 'mp2mp_vc',
      product_offering: 'po-mp2mp-vc-fra',
      external_ref: null,
      purchase_order: '',
      contract_ref: null,
      joining_member_account: null,
      display_name: 'Thames private',
      capacity: null,
      public: false,
      cloud_key: null,
    });
    theirs.service = service.id;
    const config = await db.networkServiceConfigs.create(
      {
        ...configOrder(connection.id, { ...thames, role_assignments: [] }),
        type: 'exchange_lan',
        vlan_config: { vlan_type: 'dot1q', vlan: null },
        capacity: null,
        macs: [],
        product_offering: null,
        external_ref: null,
        purchase_order: '',
        contract_ref: null,
        role: null,
        handover: null,
        cloud_vlan: null,
      },
      { quarantineSeconds: 0 },
    );
    theirs.config = config.id;
  });

  const circuitBody = (joining: string) =>
    serviceOrder('spree', 'p2p_vc', {
      product_offering: 'po-p2p-vc-fra',
      joining_member_account: joining,
      display_name: 'Spree circuit',
    });
  const ruleBody = (member: string) => ({
    type: 'allow',
    consuming_account: member,
    managing_account: SPREE,
  });
  const session = (extra: Record<string, unknown>) => ({
    type: 'route_server',
    network_feature: 'nf-rs1-fra',
    network_service_config: 'nsc-no-such',
    managing_account: SPREE,
    consuming_account: SPREE,
    billing_account: SPREE,
    role_assignments: ['ra-spree-networks-noc'],
    asn: 64511,
    as_set_v4: 'AS-SPREE@RIPE',
    session_mode: 'public',
    bgp_session_type: 'passive',
    ip: 'ip-no-such',
    ...extra,
  });

  const CASES: Case[] = [
    ...(['POST', 'PUT', 'PATCH'] as const).map((method) => ({
      what: `${method} of a circuit to an account Spree cannot see`,
      method,
      path: () => (method === 'POST' ? '/network-services' : `/network-services/${own.circuit}`),
      body: (joining: string) =>
        method === 'PATCH' ? { type: 'p2p_vc', joining_member_account: joining } : circuitBody(joining),
      hidden: () => PETIT,
      absent: absent('acc'),
      property: 'joining_member_account',
    })),
    {
      what: 'a circuit to a discoverable account written in other letters',
      method: 'POST',
      path: () => '/network-services',
      body: circuitBody,
      hidden: () => THAMES.toUpperCase(),
      absent: absent('ACC'),
      property: 'joining_member_account',
    },
    ...(['POST', 'PUT', 'PATCH'] as const).map((method) => ({
      what: `${method} of a joining rule for an account Spree cannot see`,
      method,
      path: () => (method === 'POST' ? '/member-joining-rules' : `/member-joining-rules/${own.rule}`),
      body: (member: string) =>
        method === 'POST' ? { ...ruleBody(member), network_service: own.multipoint } : ruleBody(member),
      hidden: () => PETIT,
      absent: absent('acc'),
      property: 'consuming_account',
    })),
    {
      what: 'a billing account Spree does not act for',
      method: 'POST',
      path: () => '/network-services',
      body: (billing: string) => ({ ...circuitBody(THAMES), billing_account: billing }),
      hidden: () => PETIT,
      absent: absent('acc'),
      property: 'billing_account',
    },
    {
      what: 'a role for another account’s contact',
      method: 'POST',
      path: () => '/role-assignments',
      body: (contact: string) => ({ contact, role: 'role-noc' }),
      hidden: () => 'con-thames-cloud-noc',
      absent: absent('con'),
      property: 'contact',
    },
    {
      what: 'a role for another account’s contact written in other letters',
      method: 'POST',
      path: () => '/role-assignments',
      body: (contact: string) => ({ contact, role: 'role-noc' }),
      hidden: () => 'CON-THAMES-CLOUD-NOC',
      absent: absent('CON'),
      property: 'contact',
    },
    {
      what: 'a connection with another account’s role assignment',
      method: 'POST',
      path: () => '/connections',
      body: (assignment: string) => ({
        managing_account: SPREE,
        consuming_account: SPREE,
        billing_account: SPREE,
        role_assignments: [assignment, 'ra-spree-networks-implementation', 'ra-spree-networks-noc'],
        product_offering: 'po-connection-fra-10g',
        mode: 'standalone',
        port_quantity: 1,
        subscriber_side_demarcs: ['cage 1'],
      }),
      hidden: () => 'ra-thames-cloud-noc',
      absent: absent('ra'),
      property: 'role_assignments.0',
    },
    {
      what: 'a port for another account’s connection',
      method: 'POST',
      path: () => '/port-reservations',
      body: (connection: string) => ({ connection }),
      hidden: () => theirs.connection,
      absent: absent('conn'),
      property: 'connection',
    },
    {
      what: 'exchange-LAN access on another account’s connection',
      method: 'POST',
      path: () => '/network-service-configs',
      body: (connection: string) => configOrder(connection),
      hidden: () => theirs.connection,
      absent: absent('conn'),
      property: 'connection',
    },
    {
      what: 'exchange-LAN access with another account’s role assignment',
      method: 'POST',
      path: () => '/network-service-configs',
      body: (assignment: string) =>
        configOrder('conn-no-such', { role_assignments: [assignment, 'ra-spree-networks-noc'] }),
      hidden: () => 'ra-thames-cloud-peering',
      absent: absent('ra'),
      property: 'role_assignments.0',
    },
    {
      what: 'exchange-LAN access with another account’s MAC address',
      method: 'POST',
      path: () => '/network-service-configs',
      body: (mac: string) => configOrder('conn-no-such', { macs: [mac] }),
      hidden: () => theirs.mac,
      absent: absent('mac'),
      property: 'macs.0',
    },
    {
      what: 'a config of another account’s private service',
      method: 'POST',
      path: () => '/network-service-configs',
      body: (service: string) => ({
        type: 'mp2mp_vc',
        network_service: service,
        managing_account: SPREE,
        consuming_account: SPREE,
        billing_account: SPREE,
        role_assignments: ['ra-spree-networks-noc'],
        connection: 'conn-no-such',
        vlan_config: { vlan_type: 'dot1q' },
      }),
      hidden: () => theirs.service,
      absent: absent('ns'),
      property: 'network_service',
    },
    {
      what: 'a session on another account’s config',
      method: 'POST',
      path: () => '/network-feature-configs',
      body: (config: string) => session({ network_service_config: config }),
      hidden: () => theirs.config,
      absent: absent('nsc'),
      property: 'network_service_config',
    },
    {
      what: 'a session with another account’s role assignment',
      method: 'POST',
      path: () => '/network-feature-configs',
      body: (assignment: string) => session({ role_assignments: [assignment, 'ra-spree-networks-noc'] }),
      hidden: () => 'ra-thames-cloud-noc',
      absent: absent('ra'),
      property: 'role_assignments.0',
    },
  ];

  for (const testCase of CASES)
    it(`answers ${testCase.what} as one to nothing`, async () => {
      const hidden = testCase.hidden();
      const send = (reference: string) =>
        request(testCase.method, testCase.path(), { token: spree, body: testCase.body(reference) });
      const toHidden = await send(hidden);
      const toNothing = await send(testCase.absent);
      assert.equal(toNothing.status, 400, toNothing.text);
      assert.ok(propertyNames(toNothing).includes(testCase.property), toNothing.text);
      assert.equal(normalised(toHidden, hidden), normalised(toNothing, testCase.absent));
    });
});
