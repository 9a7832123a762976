import type { Sequelize } from 'sequelize';

/**
 * The demo exchange's catalogue: three metro areas, their metro area networks, facilities, PoPs,
 * devices with 10G/100G/400G ports, product offerings of every type (two cloud providers among
 * them) and an exchange LAN per metro area network with IPv4 and IPv6 route servers. Deterministic:
 * the same rows every time, inserted only where missing.
 */

const EXCHANGE = 'acc-demo-ix';
const SEEDED_AT = new Date('2026-01-01T00:00:00.000Z');

interface Metro {
  code: string;
  locode: string;
  region: string;
  name: string;
  country: string;
  /** Facilities: [id suffix, name, operator, street, postal code]. */
  facilities: Array<[string, string, string, string, string]>;
  /** PoPs per facility index. */
  pops: number[];
  subnet: { v4: string; v6: string; rs4: string; rs6: string };
  crossConnectInitiator: 'exchange' | 'subscriber';
}

const METROS: Metro[] = [
  {
    code: 'fra',
    locode: 'DE FRA',
    region: 'Hessen',
    name: 'Frankfurt',
    country: 'DE',
    facilities: [
      ['fra-kleyer', 'Kleyerstrasse Campus', 'Rhein Data Centers', 'Kleyerstrasse 90', '60326'],
      ['fra-hanauer', 'Hanauer Landstrasse DC', 'Main Colocation', 'Hanauer Landstrasse 298', '60314'],
    ],
    pops: [0, 0, 1],
    subnet: { v4: '192.0.2.0/24', v6: '2001:db8:1::/64', rs4: '192.0.2.253', rs6: '2001:db8:1::fd' },
    crossConnectInitiator: 'exchange',
  },
  {
    code: 'ams',
    locode: 'NL AMS',
    region: 'Noord-Holland',
    name: 'Amsterdam',
    country: 'NL',
    facilities: [['ams-science-park', 'Science Park Hall', 'Amstel Hosting', 'Science Park 120', '1098 XG']],
    pops: [0, 0],
    subnet: { v4: '198.51.100.0/24', v6: '2001:db8:2::/64', rs4: '198.51.100.253', rs6: '2001:db8:2::fd' },
    crossConnectInitiator: 'subscriber',
  },
  {
    code: 'ham',
    locode: 'DE HAM',
    region: 'Hamburg',
    name: 'Hamburg',
    country: 'DE',
    facilities: [['ham-harbour', 'Harbour Data Centre', 'Elbe Colocation', 'Am Sandtorkai 50', '20457']],
    pops: [0],
    subnet: { v4: '203.0.113.0/24', v6: '2001:db8:3::/64', rs4: '203.0.113.253', rs6: '2001:db8:3::fd' },
    crossConnectInitiator: 'exchange',
  },
];

/** Ports per device role: [count, speed in Mbit/s, media type]. */
const EDGE_PORTS: Array<[number, number, string]> = [
  [24, 10_000, '10GBASE-LR'],
  [16, 100_000, '100GBASE-LR4'],
];
const CORE_PORTS: Array<[number, number, string]> = [
  [16, 100_000, '100GBASE-LR4'],
  [8, 400_000, '400GBASE-LR8'],
];

const SPEEDS: Array<[string, number]> = [
  ['10g', 10_000],
  ['100g', 100_000],
  ['400g', 400_000],
];

type Rows = Record<string, unknown>[];

/** A port of the exchange that is not allocated to anybody yet. */
export function sparePort(port: {
  id: string;
  device: string;
  pop: string;
  name: string;
  media_type: string;
  speed: number;
}) {
  return {
    ...port,
    state: 'production',
    status: '[]',
    connection: null,
    managing_account: EXCHANGE,
    consuming_account: EXCHANGE,
    billing_account: EXCHANGE,
    role_assignments: '[]',
    external_ref: null,
    purchase_order: '',
    contract_ref: null,
    operational_state: 'down',
  };
}

const stamp = <T extends Record<string, unknown>>(row: T) => ({
  ...row,
  created_at: SEEDED_AT,
  updated_at: SEEDED_AT,
});

export interface CatalogueRows {
  metro_areas: Rows;
  metro_area_networks: Rows;
  facilities: Rows;
  availability_zones: Rows;
  pops: Rows;
  devices: Rows;
  ports: Rows;
  product_offerings: Rows;
  network_services: Rows;
  network_features: Rows;
}

function offering(row: Record<string, unknown>): Record<string, unknown> {
  return stamp({
    handover_pop: null,
    service_metro_area: null,
    service_metro_area_network: null,
    physical_port_speed: null,
    downgrade_allowed: true,
    upgrade_allowed: true,
    bandwidth_min: null,
    bandwidth_max: null,
    provider_vlans: null,
    contract_terms: 'Monthly, billed in advance.',
    notice_period: '1 month',
    contract_initial_period: 'P1M',
    contract_initial_notice_period: 'P1M',
    contract_renewal_period: 'P1M',
    contract_renewal_notice_period: 'P1M',
    orderable_not_before: null,
    orderable_not_after: null,
    exchange_logo: 'https://demo-ix.example/logo.svg',
    product_logo: null,
    service_provider_logo: null,
    cross_connect_initiator: null,
    maximum_port_quantity: null,
    required_contact_roles: JSON.stringify([]),
    delivery_method: null,
    diversity: null,
    service_provider_region: null,
    service_provider_pop: null,
    service_provider_workflow: null,
    cloud_key_pattern: null,
    ...row,
  });
}

/** Builds every catalogue row; pure, so the catalogue can be inspected without a database. */
export function catalogueRows(): CatalogueRows {
  const rows: CatalogueRows = {
    metro_areas: [],
    metro_area_networks: [],
    facilities: [],
    availability_zones: [],
    pops: [],
    devices: [],
    ports: [],
    product_offerings: [],
    network_services: [],
    network_features: [],
  };
  for (const metro of METROS) {
    const ma = `ma-${metro.code}`;
    const man = `man-${metro.code}`;
    rows.metro_areas.push(
      stamp({
        id: ma,
        un_locode: metro.locode,
        iata_code: metro.code.toUpperCase(),
        display_name: metro.name,
      }),
    );
    rows.metro_area_networks.push(
      stamp({ id: man, name: `Demo-IX ${metro.name}`, metro_area: ma, service_provider: 'Demo-IX' }),
    );
    rows.availability_zones.push(stamp({ id: `az-${metro.code}-1`, name: `${metro.name} zone 1` }));
    for (const [suffix, name, operator, street, postal] of metro.facilities) {
      rows.facilities.push(
        stamp({
          id: `fac-${suffix}`,
          name,
          metro_area: ma,
          address_country: metro.country,
          address_locality: metro.name,
          address_region: metro.region,
          postal_code: postal,
          street_address: street,
          organisation_name: operator,
          peeringdb_facility_id: 9000 + rows.facilities.length,
          latitude: null,
          longitude: null,
        }),
      );
    }
    metro.pops.forEach((facilityIndex, popIndex) => {
      const pop = `pop-${metro.code}-${popIndex + 1}`;
      rows.pops.push(
        stamp({
          id: pop,
          name: `${metro.code.toUpperCase()}${popIndex + 1}`,
          facility: `fac-${metro.facilities[facilityIndex][0]}`,
          metro_area_network: man,
          availability_zone: `az-${metro.code}-1`,
        }),
      );
      for (const [role, layout] of [
        ['edge', EDGE_PORTS],
        ['core', CORE_PORTS],
      ] as const) {
        const device = `dev-${metro.code}${popIndex + 1}-${role}`;
        rows.devices.push(
          stamp({
            id: device,
            name: `${role}1.${metro.code}${popIndex + 1}.demo-ix.example`,
            pop,
            max_lag: 8,
          }),
        );
        let slot = 0;
        for (const [count, speed, media] of layout) {
          for (let i = 0; i < count; i += 1) {
            slot += 1;
            rows.ports.push(
              stamp(
                sparePort({
                  id: `port-${metro.code}${popIndex + 1}-${role}-${String(slot).padStart(2, '0')}`,
                  device,
                  pop,
                  name: `et-0/0/${slot - 1}`,
                  media_type: media,
                  speed,
                }),
              ),
            );
          }
        }
      }
    });

    const common = { handover_metro_area: ma, handover_metro_area_network: man, service_provider: 'Demo-IX' };
    for (const [label, speed] of SPEEDS) {
      rows.product_offerings.push(
        offering({
          ...common,
          id: `po-connection-${metro.code}-${label}`,
          type: 'connection',
          resource_type: 'connection',
          name: `${metro.name} ${label.toUpperCase()} port`,
          display_name: `Connection ${label.toUpperCase()} in ${metro.name}`,
          physical_port_speed: speed,
          cross_connect_initiator: metro.crossConnectInitiator,
          maximum_port_quantity: 8,
          required_contact_roles: JSON.stringify(['role-implementation', 'role-noc']),
          // 10G ports can be given back at once; the larger ones at a month's notice.
          ...(label === '10g'
            ? {
                notice_period: 'none',
                contract_initial_notice_period: 'P0D',
                contract_renewal_notice_period: 'P0D',
              }
            : {}),
        }),
      );
    }
    // Where a metro has several PoPs, 10G ports at a chosen PoP too: a second connection there
    // sits on another device, as redundant handovers (cloud diversity) need.
    if (metro.pops.length > 1)
      metro.pops.forEach((_facility, popIndex) => {
        const generic = rows.product_offerings.find((o) => o.id === `po-connection-${metro.code}-10g`)!;
        rows.product_offerings.push({
          ...generic,
          id: `po-connection-${metro.code}${popIndex + 1}-10g`,
          name: `${metro.name} 10G port at ${metro.code.toUpperCase()}${popIndex + 1}`,
          display_name: `Connection 10G at ${metro.code.toUpperCase()}${popIndex + 1}, ${metro.name}`,
          handover_pop: `pop-${metro.code}-${popIndex + 1}`,
        });
      });
    const service = {
      ...common,
      service_metro_area: ma,
      service_metro_area_network: man,
      provider_vlans: 'single',
    };
    rows.product_offerings.push(
      offering({
        ...service,
        id: `po-exchange-lan-${metro.code}`,
        type: 'exchange_lan',
        resource_type: 'network_service_config',
        name: `${metro.name} peering LAN`,
        display_name: `Public peering in ${metro.name}`,
        bandwidth_min: 1_000,
        bandwidth_max: 400_000,
      }),
    );
    for (const [type, label] of [
      ['p2p_vc', 'point-to-point'],
      ['mp2mp_vc', 'multipoint'],
      ['p2mp_vc', 'point-to-multipoint'],
    ] as const) {
      rows.product_offerings.push(
        offering({
          ...service,
          id: `po-${type.replace('_', '-')}-${metro.code}`,
          type,
          resource_type: 'network_service',
          name: `${metro.name} ${label} VLAN`,
          display_name: `Private ${label} VLAN in ${metro.name}`,
          provider_vlans: type === 'p2p_vc' ? 'single' : 'multi',
          bandwidth_min: 100,
          bandwidth_max: 100_000,
        }),
      );
    }
    rows.network_services.push(
      stamp({
        id: `ns-exchange-lan-${metro.code}`,
        type: 'exchange_lan',
        name: `Demo-IX ${metro.name}`,
        display_name: null,
        product_offering: `po-exchange-lan-${metro.code}`,
        metro_area_network: man,
        managing_account: EXCHANGE,
        consuming_account: EXCHANGE,
        billing_account: EXCHANGE,
        state: 'production',
        status: '[]',
        external_ref: null,
        purchase_order: '',
        contract_ref: null,
        subnet_v4: metro.subnet.v4,
        subnet_v6: metro.subnet.v6,
        peeringdb_ixid: 7000 + rows.network_services.length,
        ixfdb_ixid: 8000 + rows.network_services.length,
        nsc_required_contact_roles: JSON.stringify(['role-noc', 'role-peering']),
      }),
    );
    for (const [index, family] of (['af_inet', 'af_inet6'] as const).entries()) {
      rows.network_features.push(
        stamp({
          id: `nf-rs${index + 1}-${metro.code}`,
          type: 'route_server',
          name: `rs${index + 1}.${metro.code}.demo-ix.example`,
          network_service: `ns-exchange-lan-${metro.code}`,
          required: false,
          asn: 64500,
          fqdn: `rs${index + 1}.${metro.code}.demo-ix.example`,
          looking_glass_url: `https://lg.demo-ix.example/${metro.code}/rs${index + 1}`,
          address_families: JSON.stringify([family]),
          session_mode: 'public',
          available_bgp_session_types: JSON.stringify(['passive']),
          ip_v4: family === 'af_inet' ? metro.subnet.rs4 : null,
          ip_v6: family === 'af_inet6' ? metro.subnet.rs6 : null,
          flags: JSON.stringify([
            { name: 'no-export', description: 'Do not export to other peers', mandatory: false },
            { name: 'rpki-strict', description: 'Drop RPKI-invalid routes', mandatory: true },
          ]),
          nfc_required_contact_roles: JSON.stringify(['role-noc']),
        }),
      );
    }
  }

  // Two cloud providers, one of each workflow.
  const clouds = [
    {
      key: 'nimbus',
      provider: 'Nimbus Cloud',
      workflow: 'exchange_first',
      delivery: 'dedicated',
      diversity: 2,
      vlans: 'multi',
      pattern: null,
    },
    {
      key: 'stratus',
      provider: 'Stratus Compute',
      workflow: 'provider_first',
      delivery: 'shared',
      diversity: 1,
      vlans: 'single',
      pattern: '^stratus-[a-z0-9]{8}$',
    },
  ];
  for (const cloud of clouds) {
    for (const metro of METROS.slice(0, 2)) {
      rows.product_offerings.push(
        offering({
          id: `po-cloud-${cloud.key}-${metro.code}`,
          type: 'cloud_vc',
          resource_type: 'network_service',
          name: `${cloud.provider} ${metro.name}`,
          display_name: `${cloud.provider} direct connect in ${metro.name}`,
          handover_metro_area: `ma-${metro.code}`,
          handover_metro_area_network: `man-${metro.code}`,
          service_metro_area: `ma-${metro.code}`,
          service_metro_area_network: `man-${metro.code}`,
          service_provider: cloud.provider,
          physical_port_speed: null,
          bandwidth_min: 50,
          bandwidth_max: 10_000,
          provider_vlans: cloud.vlans,
          delivery_method: cloud.delivery,
          diversity: cloud.diversity,
          service_provider_region: `${metro.country.toLowerCase()}-central-1`,
          service_provider_pop: `${cloud.key}-${metro.code}1`,
          service_provider_workflow: cloud.workflow,
          cloud_key_pattern: cloud.pattern,
          service_provider_logo: `https://${cloud.key}.example/logo.svg`,
        }),
      );
    }
  }
  return rows;
}

/** Inserts whatever of the catalogue is missing, in dependency order; existing rows are kept. */
export async function seedCatalogue(sequelize: Sequelize): Promise<void> {
  const rows = catalogueRows();
  const qi = sequelize.getQueryInterface();
  await sequelize.transaction(async (transaction) => {
    for (const table of Object.keys(rows) as Array<keyof CatalogueRows>) {
      const [existing] = await sequelize.query(`SELECT id FROM ${table}`, { transaction });
      const known = new Set((existing as Array<{ id: string }>).map((r) => r.id));
      const missing = rows[table].filter((row) => !known.has(row.id as string));
      for (let i = 0; i < missing.length; i += 500) {
        await qi.bulkInsert(table, missing.slice(i, i + 500), { transaction });
      }
    }
  });
}
