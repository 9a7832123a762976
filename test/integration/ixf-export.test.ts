import assert from 'node:assert/strict';
import { settleConnections } from '../support/connections';
import { FRA_LAN, reaches } from '../support/exchange-lan';
import { login, request } from '../support/http';
import { assertMemberExport, memberExportUrl } from '../support/ixf';
import { connectionFor, CUSTOMERS } from '../support/virtual-circuits';

const LISTED_ASN = 64_611;
const UNLISTED_ASN = 64_612;

interface Address {
  address: string;
  routeserver?: boolean;
  max_prefix?: number;
  as_macro?: string;
  services?: Array<{ type: string }>;
}
interface Member {
  asnum: number;
  member_type: string;
  name: string;
  connection_list: Array<{
    ixp_id: number;
    state: string;
    if_list: Array<{ if_speed?: number; if_type?: string }>;
    vlan_list: Array<{ vlan_id: number; ipv4?: Address; ipv6?: Address }>;
  }>;
}
interface Export {
  version: string;
  timestamp: string;
  ixp_list: Array<{
    ixp_id: number;
    ixf_id: number;
    shortname: string;
    peeringdb_id?: number;
    country?: string;
    vlan: Array<{
      id: number;
      ipv4?: { prefix: string; mask_length: number; looking_glass_urls?: string[] };
      ipv6?: { prefix: string; mask_length: number };
    }>;
  }>;
  member_list: Member[];
}

const exportUrl = memberExportUrl;

/** An exchange-LAN config of `customer` in Frankfurt on `connection`, with one ASN. */
async function accessFor(
  token: string,
  customer: keyof typeof CUSTOMERS,
  connection: string,
  extra: Record<string, unknown>,
): Promise<{ id: string; ips: Array<{ id: string; version: number; address: string }> }> {
  const { account, prefix } = CUSTOMERS[customer];
  const created = await request('POST', '/network-service-configs', {
    token,
    body: {
      type: 'exchange_lan',
      network_service: FRA_LAN,
      managing_account: account,
      consuming_account: account,
      billing_account: account,
      role_assignments: [`ra-${prefix}-noc`, `ra-${prefix}-peering`],
      connection,
      vlan_config: { vlan_type: 'dot1q' },
      ...extra,
    },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  const ips = (await request('GET', `/ips?network_service_config=${id}`, { token })).body as Array<{
    id: string;
    version: number;
    address: string;
  }>;
  assert.deepEqual(ips.map((ip) => ip.version).sort(), [4, 6]);
  return { id, ips };
}

describe('the IX-F member export', function () {
  this.timeout(120_000);
  after(() => settleConnections());
  let listed: Awaited<ReturnType<typeof accessFor>>;
  let unlisted: Awaited<ReturnType<typeof accessFor>>;

  before(async function () {
    this.timeout(120_000);
    const spree = (await login('customer', 0)).accessToken;
    const thames = (await login('customer', 1)).accessToken;
    const [spreeConnection, thamesConnection] = await Promise.all([
      connectionFor(spree, 'spree'),
      connectionFor(thames, 'thames'),
    ]);
    listed = await accessFor(spree, 'spree', spreeConnection, {
      asns: [LISTED_ASN],
      listed: true,
      external_ref: 'ixf-canary-listed-ref',
    });
    unlisted = await accessFor(thames, 'thames', thamesConnection, {
      asns: [UNLISTED_ASN],
      listed: false,
    });
    // A session with the IPv4 route server, with an AS-SET and a prefix limit.
    const session = await request('POST', '/network-feature-configs', {
      token: spree,
      body: {
        type: 'route_server',
        network_feature: 'nf-rs1-fra',
        network_service_config: listed.id,
        managing_account: CUSTOMERS.spree.account,
        consuming_account: CUSTOMERS.spree.account,
        billing_account: CUSTOMERS.spree.account,
        role_assignments: ['ra-spree-networks-noc'],
        asn: LISTED_ASN,
        as_set_v4: 'AS-IXF-SPREE@RIPE',
        max_prefix_v4: 150,
        session_mode: 'public',
        bgp_session_type: 'passive',
        ip: listed.ips.find((ip) => ip.version === 4)!.id,
      },
    });
    assert.equal(session.status, 201, session.text);
    await reaches(spree, `/network-service-configs/${listed.id}`, 'production');
    await reaches(thames, `/network-service-configs/${unlisted.id}`, 'production');
  });

  it('is a public document of schema 1.0, valid against the IX-F schema (draft-04)', async () => {
    const response = await fetch(exportUrl());
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.match(response.headers.get('cache-control') ?? '', /^public, max-age=\d+$/);
    const document = (await response.json()) as Export;
    assertMemberExport(document);
    assert.equal(document.version, '1.0');
    assert.ok(Math.abs(Date.parse(document.timestamp) - Date.now()) < 60_000, document.timestamp);
    // Any Authorization header, however bad, is no concern of a public document.
    const withToken = await fetch(exportUrl(), { headers: { authorization: 'Bearer not-a-token' } });
    assert.equal(withToken.status, 200);
  });

  it('shows one IXP per exchange LAN, with its VLAN, subnets and route servers', async () => {
    const document = (await (await fetch(exportUrl())).json()) as Export;
    const lans = (
      await request('GET', '/network-services?type=exchange_lan', {
        token: (await login('customer', 0)).accessToken,
      })
    ).body as Array<{ id: string; name: string; ixfdb_ixid: number; peeringdb_ixid: number }>;
    assert.deepEqual(
      document.ixp_list.map((ixp) => ixp.ixf_id).sort(),
      lans.map((lan) => lan.ixfdb_ixid).sort(),
    );
    const fra = lans.find((lan) => lan.id === FRA_LAN)!;
    const ixp = document.ixp_list.find((candidate) => candidate.ixf_id === fra.ixfdb_ixid)!;
    assert.equal(ixp.ixp_id, fra.ixfdb_ixid, 'unconfigured, the IXP goes by its IX-F id');
    assert.equal(ixp.shortname, fra.name);
    assert.equal(ixp.peeringdb_id, fra.peeringdb_ixid);
    assert.equal(ixp.country, 'DE');
    const [vlan] = ixp.vlan;
    assert.equal(ixp.vlan.length, 1);
    assert.deepEqual([vlan.ipv4?.prefix, vlan.ipv4?.mask_length], ['192.0.2.0', 24]);
    assert.deepEqual([vlan.ipv6?.prefix, vlan.ipv6?.mask_length], ['2001:db8:1::', 64]);
    assert.deepEqual(vlan.ipv4?.looking_glass_urls, ['https://lg.demo-ix.example/fra/rs1']);
    const servers = document.member_list.find((member) => member.asnum === 64_500)!;
    assert.equal(servers.member_type, 'ixp');
    const onFra = servers.connection_list.find((connection) => connection.ixp_id === ixp.ixp_id)!;
    assert.deepEqual(
      onFra.vlan_list.map((entry) => [entry.ipv4?.address, entry.ipv6?.address, entry.ipv4?.services]),
      [
        ['192.0.2.253', undefined, [{ type: 'ixrouteserver' }]],
        [undefined, '2001:db8:1::fd', undefined],
      ],
    );
  });

  it('lists a member that asked to be, with its ASN, port speed, addresses and route-server session', async () => {
    const document = (await (await fetch(exportUrl())).json()) as Export;
    const member = document.member_list.find((candidate) => candidate.asnum === LISTED_ASN);
    assert.ok(member, `AS${LISTED_ASN} is not listed`);
    assert.equal(member.name, 'Spree Networks');
    assert.equal(member.member_type, 'peering');
    const fraIxp = document.ixp_list.find((ixp) => ixp.shortname === 'Demo-IX Frankfurt')!;
    assert.equal(member.connection_list.length, 1);
    const [connection] = member.connection_list;
    assert.equal(connection.ixp_id, fraIxp.ixp_id);
    assert.equal(connection.state, 'active');
    assert.deepEqual(connection.if_list, [{ if_speed: 10_000, if_type: '10GBASE-LR' }]);
    const v4 = listed.ips.find((ip) => ip.version === 4)!.address;
    const v6 = listed.ips.find((ip) => ip.version === 6)!.address;
    assert.deepEqual(connection.vlan_list, [
      {
        vlan_id: fraIxp.vlan[0].id,
        ipv4: { address: v4, routeserver: true, max_prefix: 150, as_macro: 'AS-IXF-SPREE@RIPE' },
        ipv6: { address: v6, routeserver: false },
      },
    ]);
  });

  it('shows nothing of a member that did not ask to be listed, nor anything private of those listed', async () => {
    const text = await (await fetch(exportUrl())).text();
    const document = JSON.parse(text) as Export;
    assert.ok(!document.member_list.some((member) => member.asnum === UNLISTED_ASN));
    for (const hidden of [
      // Whole strings: 192.0.2.2 is also the start of a route server's 192.0.2.253.
      ...unlisted.ips.map((ip) => JSON.stringify(ip.address)),
      'Thames Cloud',
      // What only the listed member and the exchange see: references, legal names, billing, contacts.
      'ixf-canary-listed-ref',
      'Spree Networks GmbH',
      'DE987654321',
      'spree-networks.example',
      'acc-spree-networks',
      listed.id,
    ])
      assert.ok(!text.includes(hidden), `the export shows ${hidden}`);
  });

  it('answers other methods with a 405 problem naming GET, and is served outside the IX-API base path only', async () => {
    const posted = await fetch(exportUrl(), { method: 'POST', body: '{}' });
    assert.equal(posted.status, 405);
    assert.equal(posted.headers.get('allow'), 'GET, HEAD');
    assert.match(posted.headers.get('content-type') ?? '', /problem\+json|json/);
    assert.match(((await posted.json()) as { type: string }).type, /method-not-allowed/);
    const head = await fetch(exportUrl(), { method: 'HEAD' });
    assert.equal(head.status, 200);
    const query = await fetch(`${exportUrl()}?format=xml&page_limit=-1`);
    assert.equal(query.status, 200, 'parameters it does not take are ignored');
    const underApi = await request('GET', '/ixf/member-export');
    assert.equal(underApi.status, 404);
  });
});
