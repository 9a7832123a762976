import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from './http';
import type { World } from './matrix';
import type { ReadLog } from './read-log';
import { eventually } from './wait';

/**
 * A scenario in the matrix's world that makes the service write every kind of event there is,
 * through the API: the owner on-boards an account and removes another, keeps contacts and roles, orders a
 * bundle for the sub-account (a port added and given back, letters of authorisation), addresses,
 * MACs, exchange-LAN access with route-server sessions, a private multipoint service with a rule
 * for the unrelated account, and a circuit whose B side the unrelated account is, through change
 * requests rejected, withdrawn and accepted. After every write the log reads what it wrote as every
 * identity (before a deletion, what is about to go).
 */

const PDF = '%PDF-1.4\n% event scenario\n%%EOF\n';
const address = {
  country: 'DE',
  locality: 'Frankfurt am Main',
  postal_code: '60311',
  street_address: 'Zeil 1',
};

export async function playScenario(world: World, log: ReadLog): Promise<void> {
  const { owner: O, 'sub-account': S, unrelated: U } = world.accounts;
  const token = { owner: world.tokens.owner!, unrelated: world.tokens.unrelated! };
  type Caller = keyof typeof token;

  /** A write that must succeed; answers its body. */
  const write = async (caller: Caller, method: string, path: string, body?: unknown, status?: number) => {
    const response = await request(method, path, { token: token[caller], body });
    const expected = status ?? (method === 'POST' ? 201 : method === 'DELETE' ? 200 : 202);
    assert.equal(response.status, expected, `${method} ${path}: ${response.text}`);
    return response.body as Record<string, unknown> & { id: string };
  };
  const upload = async (caller: Caller, path: string) => {
    const response = await request('POST', path, {
      token: token[caller],
      rawBody: PDF,
      headers: { 'content-type': 'application/pdf' },
    });
    assert.equal(response.status, 202, response.text);
  };
  const reaches = (caller: Caller, path: string, state: string) =>
    eventually(
      `${path} ${state}`,
      async () => {
        const now = (await request('GET', path, { token: token[caller] })).body as { state: string };
        return now.state === state ? now : undefined;
      },
      60_000,
    );

  // Accounts: both pay, the unrelated account may be found (to be a B side and a member).
  const billing = { name: 'Events GmbH', address };
  await write('unrelated', 'PATCH', `/accounts/${U}`, { discoverable: true, billing_information: billing });
  await log.observe(`accounts/${U}`);
  await write('owner', 'PATCH', `/accounts/${O}`, { billing_information: billing });
  await log.observe(`accounts/${O}`);

  // Contacts and roles.
  const person = (name: string) => ({ name, email: `${name}@events.example`, telephone: '+4969123456' });
  const contactOf = async (caller: Caller, account: string, roles: string[], name: string) => {
    const contact = await write(caller, 'POST', '/contacts', {
      managing_account: account,
      consuming_account: account,
      ...person(name),
    });
    await log.observe(`contacts/${contact.id}`);
    const assignments: Record<string, string> = {};
    for (const role of roles) {
      const assigned = await write(caller, 'POST', '/role-assignments', { contact: contact.id, role });
      await log.observe(`role-assignments/${assigned.id}`);
      assignments[role] = assigned.id;
    }
    return { id: contact.id, assignments };
  };
  const ours = await contactOf('owner', O, ['role-implementation', 'role-noc', 'role-peering'], 'noc');
  const theirs = await contactOf('unrelated', U, ['role-implementation', 'role-noc'], 'their-noc');
  await write('owner', 'PATCH', `/contacts/${ours.id}`, { name: 'our noc' }, 200);
  await log.observe(`contacts/${ours.id}`);
  const spare = await contactOf('owner', O, ['role-billing'], 'spare');
  await log.observe(`role-assignments/${spare.assignments['role-billing']}`);
  await write('owner', 'DELETE', `/role-assignments/${spare.assignments['role-billing']}`);
  await log.observe(`contacts/${spare.id}`);
  await write('owner', 'DELETE', `/contacts/${spare.id}`);

  // An account on-boarded (its legal contact takes it to production), and one removed at once.
  const child = (name: string) => write('owner', 'POST', '/accounts', { name, address, managing_account: O });
  const account = await child('Events child');
  await log.observe(`accounts/${account.id}`);
  await write('owner', 'PATCH', `/accounts/${account.id}`, { name: 'Events child, renamed' });
  await log.observe(`accounts/${account.id}`);
  await contactOf('owner', account.id, ['role-legal'], 'legal');
  await reaches('owner', `/accounts/${account.id}`, 'production');
  await log.observe(`accounts/${account.id}`);
  const removed = await child('Events child, removed');
  await log.observe(`accounts/${removed.id}`);
  await write('owner', 'DELETE', `/accounts/${removed.id}`);

  // A bundle for the sub-account: a port added, its details changed, given back; letters uploaded.
  const bundle = await write('owner', 'POST', '/connections', {
    managing_account: O,
    consuming_account: S,
    billing_account: O,
    role_assignments: [ours.assignments['role-implementation'], ours.assignments['role-noc']],
    product_offering: 'po-connection-fra-10g',
    mode: 'lag_lacp',
    port_quantity: 1,
    subscriber_side_demarcs: ['cage 1'],
    external_ref: 'events-bundle',
    purchase_order: 'events-po',
  });
  await log.observe(`connections/${bundle.id}`);
  // Exchange-LAN access waits for its connection: one asked for now is cancelled while it waits.
  const lanConfig = () =>
    write('owner', 'POST', '/network-service-configs', {
      type: 'exchange_lan',
      network_service: 'ns-exchange-lan-fra',
      managing_account: O,
      consuming_account: S,
      billing_account: O,
      role_assignments: [ours.assignments['role-noc'], ours.assignments['role-peering']],
      connection: bundle.id,
      vlan_config: { vlan_type: 'dot1q' },
      asns: [64512],
      listed: false,
      external_ref: 'events-lan',
    });
  const gone = await lanConfig();
  await log.observe(`network-service-configs/${gone.id}`);
  await write('owner', 'DELETE', `/network-service-configs/${gone.id}`, undefined, 202);
  await reaches('owner', `/connections/${bundle.id}`, 'production');
  await write('owner', 'PATCH', `/connections/${bundle.id}`, { purchase_order: 'events-po-2' });
  await log.observe(`connections/${bundle.id}`);
  await upload('owner', `/connections/${bundle.id}/loa`);
  const port = await write('owner', 'POST', '/port-reservations', { connection: bundle.id });
  await log.observe(`port-reservations/${port.id}`);
  await reaches('owner', `/connections/${bundle.id}`, 'production');
  await write('owner', 'PATCH', `/port-reservations/${port.id}`, { cross_connect_id: 'xc-events' });
  await log.observe(`port-reservations/${port.id}`);
  await upload('owner', `/port-reservations/${port.id}/loa`);
  const standalone = (caller: Caller, account: string, roles: Record<string, string>) =>
    write(caller, 'POST', '/connections', {
      managing_account: account,
      consuming_account: account,
      billing_account: account,
      role_assignments: [roles['role-implementation'], roles['role-noc']],
      product_offering: 'po-connection-fra-10g',
      mode: 'standalone',
      port_quantity: 1,
      subscriber_side_demarcs: ['cage 2'],
    });
  const cancelled = await standalone('owner', O, ours.assignments);
  await log.observe(`connections/${cancelled.id}`);
  await write('owner', 'DELETE', `/connections/${cancelled.id}`, undefined, 202);
  const far = await standalone('unrelated', U, theirs.assignments);
  await log.observe(`connections/${far.id}`);

  // Addresses and MACs of the sub-account.
  const ip = await write('owner', 'POST', '/ips', {
    managing_account: O,
    consuming_account: S,
    version: 4,
    address: `198.18.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0] % 254)}`,
    prefix_length: 32,
    external_ref: 'events-ip',
  });
  await log.observe(`ips/${ip.id}`);
  await write('owner', 'PATCH', `/ips/${ip.id}`, { fqdn: 'router.events.example' }, 200);
  await log.observe(`ips/${ip.id}`);
  const mac = await write('owner', 'POST', '/macs', {
    managing_account: O,
    consuming_account: S,
    address: `02:ee:${[...randomBytes(4)].map((b) => b.toString(16).padStart(2, '0')).join(':')}`,
    external_ref: 'events-mac',
  });
  await log.observe(`macs/${mac.id}`);
  await write('owner', 'DELETE', `/macs/${mac.id}`);

  // Exchange-LAN access with a session kept and one cancelled before it is up.
  const lan = await lanConfig();
  await log.observe(`network-service-configs/${lan.id}`);
  const addresses = (await request('GET', `/ips?network_service_config=${lan.id}`, { token: token.owner }))
    .body as Array<{ id: string; version: number }>;
  const sessionOn = (feature: string, version: number) =>
    write('owner', 'POST', '/network-feature-configs', {
      type: 'route_server',
      network_feature: feature,
      network_service_config: lan.id,
      managing_account: O,
      consuming_account: S,
      billing_account: O,
      role_assignments: [ours.assignments['role-noc']],
      asn: 64512,
      [version === 4 ? 'as_set_v4' : 'as_set_v6']: 'AS-EVENTS@RIPE',
      session_mode: 'public',
      bgp_session_type: 'passive',
      ip: addresses.find((a) => a.version === version)!.id,
      external_ref: 'events-session',
    });
  const dropped = await sessionOn('nf-rs2-fra', 6);
  await log.observe(`network-feature-configs/${dropped.id}`);
  await write('owner', 'DELETE', `/network-feature-configs/${dropped.id}`, undefined, 202);
  const kept = await sessionOn('nf-rs1-fra', 4);
  await log.observe(`network-feature-configs/${kept.id}`);
  await write('owner', 'PATCH', `/network-feature-configs/${kept.id}`, {
    type: 'route_server',
    max_prefix_v4: 42,
  });
  await log.observe(`network-feature-configs/${kept.id}`);
  await reaches('owner', `/network-feature-configs/${kept.id}`, 'production');
  await write('owner', 'PATCH', `/network-service-configs/${lan.id}`, {
    type: 'exchange_lan',
    purchase_order: 'lan-po',
  });
  await log.observe(`network-service-configs/${lan.id}`);

  // A private multipoint service with a rule for the unrelated account, cancelled before it is up.
  const multipoint = await write('owner', 'POST', '/network-services', {
    type: 'mp2mp_vc',
    product_offering: 'po-mp2mp-vc-fra',
    managing_account: O,
    consuming_account: S,
    billing_account: O,
    display_name: 'Events multipoint',
    public: false,
    external_ref: 'events-mp',
  });
  await log.observe(`network-services/${multipoint.id}`);
  const rule = await write('owner', 'POST', '/member-joining-rules', {
    type: 'allow',
    network_service: multipoint.id,
    consuming_account: U,
    managing_account: O,
    external_ref: 'events-rule',
  });
  await log.observe(`member-joining-rules/${rule.id}`);
  await write(
    'owner',
    'PATCH',
    `/member-joining-rules/${rule.id}`,
    { type: 'allow', capacity_max: 500 },
    200,
  );
  await log.observe(`member-joining-rules/${rule.id}`);
  await write('owner', 'DELETE', `/member-joining-rules/${rule.id}`);
  await write('owner', 'DELETE', `/network-services/${multipoint.id}`, undefined, 202);

  // A circuit from the sub-account to the unrelated account, through change requests.
  const circuit = await write('owner', 'POST', '/network-services', {
    type: 'p2p_vc',
    product_offering: 'po-p2p-vc-fra',
    managing_account: O,
    consuming_account: S,
    billing_account: O,
    joining_member_account: U,
    display_name: 'Events circuit',
    capacity: 1000,
    external_ref: 'events-circuit',
    purchase_order: 'events-circuit-po',
    contract_ref: 'events-contract',
  });
  const path = `/network-services/${circuit.id}`;
  await log.observe(path.slice(1));
  const end = async (caller: Caller, account: string, connection: string, roles: Record<string, string>) => {
    const config = await write(caller, 'POST', '/network-service-configs', {
      type: 'p2p_vc',
      network_service: circuit.id,
      managing_account: caller === 'owner' ? O : U,
      consuming_account: account,
      billing_account: caller === 'owner' ? O : U,
      role_assignments: [roles['role-noc']],
      connection,
      vlan_config: { vlan_type: 'dot1q' },
    });
    await log.observe(`network-service-configs/${config.id}`);
    return config;
  };
  const a = await end('owner', S, bundle.id, ours.assignments);
  await reaches('unrelated', `/connections/${far.id}`, 'production');
  await end('unrelated', U, far.id, theirs.assignments);
  await reaches('owner', path, 'production');
  const ask = async (capacity: number) => {
    await write(
      'unrelated',
      'POST',
      `${path}/change-request`,
      { product_offering: 'po-p2p-vc-fra', capacity },
      202,
    );
    await log.observe(`${path.slice(1)}/change-request`);
  };
  await ask(2000);
  await write('owner', 'DELETE', `${path}/change-request`, undefined, 202);
  await reaches('owner', path, 'production');
  await ask(3000);
  await write('unrelated', 'DELETE', `${path}/change-request`, undefined, 202);
  await reaches('owner', path, 'production');
  await ask(2000);
  await write('owner', 'PATCH', path, { type: 'p2p_vc', capacity: 2000 });
  await log.observe(path.slice(1));
  await reaches('owner', path, 'production');
  await write('owner', 'PATCH', `/network-service-configs/${a.id}`, {
    type: 'p2p_vc',
    purchase_order: 'a-po',
  });
  await log.observe(`network-service-configs/${a.id}`);
  await write('owner', 'DELETE', path, undefined, 202);
  await log.observe(path.slice(1));

  // The added port given back, last: its connection stays in production meanwhile.
  await write('owner', 'DELETE', `/port-reservations/${port.id}`, undefined, 202);
  await log.observe(`port-reservations/${port.id}`);
}
