import { QueryTypes } from 'sequelize';
import { LabDriver } from '../../drivers/lab/driver';
import { deviceOf } from './exchange-lan';
import type { HttpResponse } from './http';
import { stack } from './stack';
import { CUSTOMERS } from './virtual-circuits';
import { eventually } from './wait';

/** The services, configs and checks the tests of virtual circuits' configs share. */

export const SPREE = CUSTOMERS.spree.account;
export const THAMES = CUSTOMERS.thames.account;
export const PETIT = 'acc-petit-reseau';
export const TRANSIT = 'acc-transit-partners';

/** What a config of every type shows. */
export const SHARED = [
  'id',
  'type',
  'state',
  'status',
  'network_service',
  'managing_account',
  'consuming_account',
  'billing_account',
  'role_assignments',
  'connection',
  'vlan_config',
  'network_feature_configs',
  'external_ref',
  'purchase_order',
  'contract_ref',
  'decommission_at',
  'charged_until',
  'current_billing_start_date',
];

/** What a config of each type shows besides. */
export const OWN: Record<string, string[]> = {
  exchange_lan: ['asns', 'capacity', 'ips', 'listed', 'macs', 'product_offering'],
  p2p_vc: ['capacity', 'product_offering'],
  mp2mp_vc: ['capacity', 'macs', 'product_offering'],
  p2mp_vc: ['capacity', 'product_offering', 'role'],
  cloud_vc: ['cloud_vlan', 'handover'],
};

export interface Config {
  id: string;
  type: string;
  state: string;
  connection: string;
  vlan_config: { vlan_type: string; vlan?: number | null };
  [property: string]: unknown;
}

export const sql = <T extends object>(query: string, replacements: Record<string, unknown> = {}) =>
  stack().db.sequelize.query<T>(query, { replacements, type: QueryTypes.SELECT });
export const run = (query: string, replacements: Record<string, unknown> = {}) =>
  stack().db.sequelize.query(query, { replacements });

let fixtures = 0;

/** A customer's service of `type`, stored as its owner's order leaves it (Spree's unless said). */
export async function serviceFixture(
  type: string,
  fields: {
    product_offering: string;
    managing_account?: string;
    consuming_account?: string;
    joining_member_account?: string;
    state?: string;
    capacity?: number;
    public?: boolean;
    diversity?: number;
    cloud_key?: string;
  },
): Promise<string> {
  fixtures += 1;
  const id = `ns-vcc-${type.replace('_', '-')}-${fixtures}`;
  const consuming = fields.consuming_account ?? SPREE;
  await run(
    `INSERT INTO network_services (id, type, name, display_name, product_offering, metro_area_network,
       managing_account, consuming_account, billing_account, state, status, external_ref, purchase_order,
       contract_ref, nsc_required_contact_roles, joining_member_account, capacity, public, cloud_key, diversity,
       created_at, updated_at)
     VALUES (:id, :type, NULL, :display_name, :product_offering, 'man-fra', :managing_account, :consuming_account,
       :consuming_account, :state, '[]', NULL, '', NULL, '["role-noc"]', :joining_member_account, :capacity,
       :public, :cloud_key, :diversity, NOW(3), NOW(3))`,
    {
      id,
      type,
      display_name: `Fixture ${id}`,
      product_offering: fields.product_offering,
      managing_account: fields.managing_account ?? consuming,
      consuming_account: consuming,
      state: fields.state ?? 'requested',
      joining_member_account: fields.joining_member_account ?? null,
      capacity: fields.capacity ?? null,
      public: fields.public ? 1 : 0,
      cloud_key: fields.cloud_key ?? null,
      diversity: fields.diversity ?? null,
    },
  );
  return id;
}

/** A member joining rule of a service for `account`, set by the service's owner. */
export async function joiningRule(
  service: string,
  account: string,
  type: 'allow' | 'deny',
  bounds: { capacity_min?: number; capacity_max?: number } = {},
): Promise<void> {
  fixtures += 1;
  await run(
    `INSERT INTO member_joining_rules (id, type, network_service, consuming_account, managing_account,
       external_ref, capacity_min, capacity_max, created_at, updated_at)
     SELECT :id, :type, s.id, :account, s.managing_account, NULL, :min, :max, NOW(3), NOW(3)
     FROM network_services s WHERE s.id = :service`,
    {
      id: `mjr-vcc-${fixtures}`,
      type,
      service,
      account,
      min: bounds.capacity_min ?? null,
      max: bounds.capacity_max ?? null,
    },
  );
}

/** How many configs a service has; a refused order adds none. */
export async function configCount(service: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    'SELECT COUNT(*) AS n FROM network_service_configs WHERE network_service = :service',
    { service },
  );
  return Number(row.n);
}

/** A config order of Petit Reseau's (through its reseller) on `connection`. */
export const petitConfig = (
  type: string,
  service: string,
  connection: string,
  extra: Record<string, unknown> = {},
) => ({
  type,
  network_service: service,
  managing_account: PETIT,
  consuming_account: PETIT,
  billing_account: PETIT,
  role_assignments: ['ra-petit-reseau-noc'],
  connection,
  vlan_config: { vlan_type: 'dot1q' },
  ...extra,
});

/** How many statements of this database wait for a lock. */
export async function lockWaits(): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX t
     JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
     WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()`,
  );
  return Number(row.n);
}

/** The rate limit the lab device applies to a config, once it carries it. */
export async function rateLimitOf(connection: string, config: string): Promise<number | null> {
  return eventually(`${config} on the device`, async () => {
    const [found] = await new LabDriver(stack().db.sequelize).readServices(await deviceOf(connection), [
      config,
    ]);
    return found ? found.rateLimit : undefined;
  });
}

/** What the tests of one describe share: the tokens and connections its before hook makes, and how they act. */
export interface VirtualCircuitConfigs {
  readonly spree: string;
  readonly thames: string;
  readonly reseller: string;
  readonly spreeFra: string;
  readonly thamesFra: string;
  readonly petitFra: string;
  readonly spreeMac: string;
  readonly created: (token: string, body: Record<string, unknown>) => Promise<Config>;
  readonly read: (token: string, id: string) => Promise<Config>;
  readonly conflicting: (response: Promise<HttpResponse>, holder: string) => Promise<void>;
  readonly retire: (token: string, id: string) => Promise<string>;
}
