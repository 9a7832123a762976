import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { memberExportOf } from '../../api/ixf-member-export';
import type {
  ExportedLan,
  ListedConfig,
  MemberExportFacts,
} from '../../db/repositories/member-export-repository';

const NOW = new Date('2026-05-04T10:20:30.456Z');

const lan = (id: string, extra: Partial<ExportedLan> = {}): ExportedLan => ({
  id,
  name: `Demo-IX ${id}`,
  state: 'production',
  subnetV4: '192.0.2.0/24',
  subnetV6: '2001:db8:1::/64',
  peeringdbIxid: 7001,
  ixfdbIxid: 8001,
  exchangeAccount: 'acc-ix',
  exchangeName: 'Demo-IX',
  metroArea: 'Frankfurt',
  unLocode: 'DE FRA',
  ...extra,
});

const config = (id: string, extra: Partial<ListedConfig> = {}): ListedConfig => ({
  id,
  lan: 'fra',
  state: 'production',
  account: 'acc-a',
  accountName: 'Alpha Net',
  accountIsExchange: false,
  asns: [64_501],
  connection: 'conn-a',
  connectionState: 'production',
  ports: [{ speed: 10_000, mediaType: '10GBASE-LR' }],
  addresses: [
    { version: 4, address: '192.0.2.10' },
    { version: 6, address: '2001:db8:1::10' },
  ],
  sessions: [],
  ...extra,
});

const facts = (configs: ListedConfig[], lans = [lan('fra')]): MemberExportFacts => ({
  lans,
  routeServers: [
    {
      id: 'nf-rs1-fra',
      lan: 'fra',
      asn: 64_500,
      ipV4: '192.0.2.253',
      ipV6: null,
      lookingGlassUrl: 'https://lg.example/rs1',
    },
    {
      id: 'nf-rs2-fra',
      lan: 'fra',
      asn: 64_500,
      ipV4: null,
      ipV6: '2001:db8:1::fd',
      lookingGlassUrl: 'https://lg.example/rs2',
    },
  ],
  configs,
});

const NO_SETTINGS = { ixpIds: {}, ixfIds: {} };

const validate = (() => {
  const ajv = new Ajv04({ allErrors: true, strict: false });
  addFormats(ajv);
  const schema = path.resolve(__dirname, '../../spec/ixf/ixp-member-list-1.0.schema.json');
  return ajv.compile(JSON.parse(readFileSync(schema, 'utf8')) as object);
})();

describe('the IX-F member export', () => {
  it('makes an IXP of each exchange LAN, numbered by its IX-F id unless configured', () => {
    const document = memberExportOf(
      facts(
        [],
        [lan('fra'), lan('ams', { ixfdbIxid: 8002, unLocode: null }), lan('new', { ixfdbIxid: null })],
      ),
      { ixpIds: { fra: 1 }, ixfIds: {} },
      NOW,
    );
    assert.equal(document.version, '1.0');
    assert.equal(document.timestamp, '2026-05-04T10:20:30Z');
    assert.deepEqual(
      document.ixp_list.map((ixp) => [ixp.ixp_id, ixp.ixf_id, ixp.shortname, ixp.country]),
      [
        [1, 8001, 'Demo-IX fra', 'DE'],
        [8002, 8002, 'Demo-IX ams', undefined],
      ],
      'a LAN with no IX-F id is left out: the schema requires one',
    );
    const [fra] = document.ixp_list;
    assert.equal(fra.name, 'Demo-IX Frankfurt');
    assert.equal(fra.peeringdb_id, 7001);
    assert.deepEqual(fra.vlan, [
      {
        id: 1,
        name: 'Demo-IX fra',
        ipv4: { prefix: '192.0.2.0', mask_length: 24, looking_glass_urls: ['https://lg.example/rs1'] },
        ipv6: { prefix: '2001:db8:1::', mask_length: 64, looking_glass_urls: ['https://lg.example/rs2'] },
      },
    ]);
    const configured = memberExportOf(
      facts([], [lan('new', { ixfdbIxid: null })]),
      { ixpIds: {}, ixfIds: { new: 9000 } },
      NOW,
    );
    assert.deepEqual(
      configured.ixp_list.map((ixp) => [ixp.ixp_id, ixp.ixf_id]),
      [[9000, 9000]],
    );
    assert.ok(validate(document), JSON.stringify(validate.errors));
  });

  it('shows the route servers as the exchange, offering the route-server service on their addresses', () => {
    const [servers] = memberExportOf(facts([]), NO_SETTINGS, NOW).member_list;
    assert.deepEqual(servers, {
      asnum: 64_500,
      member_type: 'ixp',
      name: 'Demo-IX',
      connection_list: [
        {
          ixp_id: 8001,
          state: 'active',
          if_list: [],
          vlan_list: [
            { vlan_id: 8001, ipv4: { address: '192.0.2.253', services: [{ type: 'ixrouteserver' }] } },
            { vlan_id: 8001, ipv6: { address: '2001:db8:1::fd', services: [{ type: 'ixrouteserver' }] } },
          ],
        },
      ],
    });
  });

  it('lists each member by ASN with its ports, addresses and route-server sessions', () => {
    const document = memberExportOf(
      facts([
        config('nsc-1', {
          asns: [64_501, 64_502],
          sessions: [{ version: 4, asSet: 'AS-ALPHA', maxPrefix: 100 }],
        }),
        // A second VLAN on the same connection, not in production yet.
        config('nsc-2', {
          state: 'testing',
          asns: [64_501],
          addresses: [{ version: 4, address: '192.0.2.11' }],
          sessions: [{ version: 6, asSet: null, maxPrefix: null }],
        }),
        // Another member, its connection not in service: inactive.
        config('nsc-3', {
          account: 'acc-b',
          accountName: 'Beta Net',
          asns: [64_400],
          connection: 'conn-b',
          connectionState: 'testing',
          ports: [
            { speed: 100_000, mediaType: '100GBASE-LR4' },
            { speed: 100_000, mediaType: '100GBASE-LR4' },
          ],
          addresses: [],
        }),
        // A config on a LAN the export leaves out.
        config('nsc-4', { lan: 'elsewhere', asns: [64_999] }),
      ]),
      NO_SETTINGS,
      NOW,
    );
    assert.ok(validate(document), JSON.stringify(validate.errors));
    assert.deepEqual(
      document.member_list.map((member) => [member.asnum, member.name, member.member_type]),
      [
        [64_400, 'Beta Net', 'peering'],
        [64_500, 'Demo-IX', 'ixp'],
        [64_501, 'Alpha Net', 'peering'],
        [64_502, 'Alpha Net', 'peering'],
      ],
    );
    const alpha = document.member_list.find((member) => member.asnum === 64_501)!;
    assert.deepEqual(alpha.connection_list, [
      {
        ixp_id: 8001,
        state: 'active',
        if_list: [{ if_speed: 10_000, if_type: '10GBASE-LR' }],
        vlan_list: [
          {
            vlan_id: 8001,
            ipv4: { address: '192.0.2.10', routeserver: true, max_prefix: 100, as_macro: 'AS-ALPHA' },
            ipv6: { address: '2001:db8:1::10', routeserver: false },
          },
          { vlan_id: 8001, ipv4: { address: '192.0.2.11', routeserver: false } },
        ],
      },
    ]);
    const beta = document.member_list.find((member) => member.asnum === 64_400)!;
    assert.equal(beta.connection_list[0].state, 'inactive');
    assert.equal(beta.connection_list[0].if_list.length, 2);
    assert.deepEqual(beta.connection_list[0].vlan_list, [{ vlan_id: 8001 }], 'no address yet');
  });

  it('lists a member of the exchange itself as an IXP, beside its route servers', () => {
    const document = memberExportOf(
      facts([
        config('nsc-ix', {
          account: 'acc-ix',
          accountName: 'Demo-IX',
          accountIsExchange: true,
          asns: [64_500],
        }),
      ]),
      NO_SETTINGS,
      NOW,
    );
    assert.equal(document.member_list.length, 1, 'one member: the exchange under its ASN');
    const [exchange] = document.member_list;
    assert.equal(exchange.member_type, 'ixp');
    assert.equal(exchange.connection_list.length, 2, 'its route servers, and its own connection');
  });
});
