import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, tableOptions, timestamps } from './columns';

const ref = (table: string, allowNull = false) => ({
  type: DataTypes.STRING(80),
  allowNull,
  references: { model: table, key: 'id' },
});
const text = (length: number, allowNull = false) => ({ type: DataTypes.STRING(length), allowNull });
const int = (allowNull = true) => ({ type: DataTypes.INTEGER, allowNull });
const bigint = (allowNull = true) => ({ type: DataTypes.BIGINT, allowNull });
const json = { type: DataTypes.TEXT, allowNull: false };

/** The exchange's catalogue: where it is, what it runs there and what it sells. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'metro_areas',
    { id, un_locode: text(6), iata_code: text(3), display_name: text(64), ...timestamps },
    tableOptions,
  );
  await qi.createTable(
    'metro_area_networks',
    { id, name: text(32), metro_area: ref('metro_areas'), service_provider: text(128), ...timestamps },
    tableOptions,
  );
  await qi.addIndex('metro_area_networks', ['metro_area']);
  await qi.createTable(
    'facilities',
    {
      id,
      name: text(80),
      metro_area: ref('metro_areas'),
      address_country: text(2),
      address_locality: text(80),
      address_region: text(80),
      postal_code: text(18),
      street_address: text(80),
      organisation_name: text(80),
      peeringdb_facility_id: int(),
      latitude: { type: DataTypes.DOUBLE, allowNull: true },
      longitude: { type: DataTypes.DOUBLE, allowNull: true },
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('facilities', ['metro_area']);
  await qi.createTable('availability_zones', { id, name: text(80), ...timestamps }, tableOptions);
  await qi.createTable(
    'pops',
    {
      id,
      name: text(40),
      facility: ref('facilities'),
      metro_area_network: ref('metro_area_networks'),
      availability_zone: ref('availability_zones', true),
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('pops', ['facility']);
  await qi.addIndex('pops', ['metro_area_network']);
  await qi.createTable(
    'devices',
    { id, name: text(180), pop: ref('pops'), max_lag: int(false), ...timestamps },
    tableOptions,
  );
  await qi.addIndex('devices', ['pop']);
  await qi.createTable(
    'ports',
    {
      id,
      device: ref('devices'),
      pop: ref('pops'),
      name: text(80),
      media_type: text(20),
      speed: int(),
      state: text(32),
      status: json,
      connection: text(80, true),
      managing_account: ref('accounts'),
      consuming_account: ref('accounts'),
      billing_account: ref('accounts'),
      role_assignments: json,
      external_ref: text(128, true),
      purchase_order: text(80),
      contract_ref: text(128, true),
      operational_state: text(16, true),
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('ports', ['device', 'speed', 'media_type']);
  await qi.addIndex('ports', ['pop', 'id']);
  await qi.addIndex('ports', ['connection']);
  await qi.addIndex('ports', ['state', 'id']);
  await qi.addIndex('ports', ['speed', 'id']);
  await qi.addIndex('ports', ['managing_account', 'id']);
  await qi.addIndex('ports', ['consuming_account', 'id']);
  await qi.addIndex('ports', ['updated_at']);

  await qi.createTable(
    'product_offerings',
    {
      id,
      type: text(32),
      name: text(160),
      display_name: text(256),
      resource_type: text(32),
      handover_metro_area: ref('metro_areas'),
      handover_metro_area_network: ref('metro_area_networks'),
      handover_pop: ref('pops', true),
      service_metro_area: ref('metro_areas', true),
      service_metro_area_network: ref('metro_area_networks', true),
      service_provider: text(128),
      physical_port_speed: int(),
      downgrade_allowed: { type: DataTypes.BOOLEAN, allowNull: false },
      upgrade_allowed: { type: DataTypes.BOOLEAN, allowNull: false },
      bandwidth_min: int(),
      bandwidth_max: int(),
      provider_vlans: text(16, true),
      contract_terms: text(256, true),
      notice_period: text(64, true),
      contract_initial_period: text(16, true),
      contract_initial_notice_period: text(16, true),
      contract_renewal_period: text(16, true),
      contract_renewal_notice_period: text(16, true),
      orderable_not_before: { type: DataTypes.DATE(3), allowNull: true },
      orderable_not_after: { type: DataTypes.DATE(3), allowNull: true },
      exchange_logo: text(256, true),
      product_logo: text(256, true),
      service_provider_logo: text(256, true),
      // connection offerings
      cross_connect_initiator: text(16, true),
      maximum_port_quantity: int(),
      required_contact_roles: json,
      // cloud offerings
      delivery_method: text(16, true),
      diversity: int(),
      service_provider_region: text(80, true),
      service_provider_pop: text(80, true),
      service_provider_workflow: text(16, true),
      /** Regular expression the cloud keys of this provider-first offering match. */
      cloud_key_pattern: text(200, true),
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('product_offerings', ['type', 'id']);

  await qi.createTable(
    'network_services',
    {
      id,
      type: text(16),
      name: text(80, true),
      display_name: text(256, true),
      product_offering: ref('product_offerings', true),
      metro_area_network: ref('metro_area_networks', true),
      managing_account: ref('accounts'),
      consuming_account: ref('accounts'),
      billing_account: ref('accounts', true),
      state: text(32),
      status: json,
      external_ref: text(128, true),
      purchase_order: text(80),
      contract_ref: text(128, true),
      subnet_v4: text(43, true),
      subnet_v6: text(43, true),
      peeringdb_ixid: int(),
      ixfdb_ixid: int(),
      nsc_required_contact_roles: json,
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('network_services', ['type', 'id']);

  await qi.createTable(
    'network_features',
    {
      id,
      type: text(16),
      name: text(80),
      network_service: ref('network_services'),
      required: { type: DataTypes.BOOLEAN, allowNull: false },
      asn: bigint(false),
      fqdn: text(80),
      looking_glass_url: text(256, true),
      address_families: json,
      session_mode: text(16),
      available_bgp_session_types: json,
      ip_v4: text(15, true),
      ip_v6: text(39, true),
      flags: json,
      nfc_required_contact_roles: json,
      ...timestamps,
    },
    tableOptions,
  );
  await qi.addIndex('network_features', ['network_service']);
  await qi.addColumn('roles', 'updated_at', { type: DataTypes.DATE(3), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('roles', 'updated_at');
  for (const table of [
    'network_features',
    'network_services',
    'product_offerings',
    'ports',
    'devices',
    'pops',
    'availability_zones',
    'facilities',
    'metro_area_networks',
    'metro_areas',
  ]) {
    await qi.dropTable(table);
  }
}
