import type { Sequelize } from 'sequelize';
import type { Database } from '..';
import type { Address, NewAccount } from '../repositories/account-repository';
import type { IssuedCredentials } from '../repositories/credential-repository';
import type { Role } from '../repositories/contact-repository';

/** The roles contacts can take; `required_fields` are the contact fields a role needs. */
export const ROLES: Role[] = [
  { id: 'role-legal', name: 'legal', required_fields: ['name', 'email'] },
  { id: 'role-noc', name: 'noc', required_fields: ['email', 'telephone'] },
  { id: 'role-implementation', name: 'implementation', required_fields: ['name', 'email', 'telephone'] },
  { id: 'role-peering', name: 'peering', required_fields: ['email'] },
  { id: 'role-billing', name: 'billing', required_fields: ['name', 'email'] },
];

export type DemoRole = 'operator' | 'reseller' | 'subaccount' | 'customer';

interface DemoAccount {
  role: DemoRole;
  account: NewAccount & { id: string };
  /** Name, e-mail domain and phone prefix for the account's contacts. */
  contactDomain: string;
  phonePrefix: string;
}

const address = (
  street_address: string,
  postal_code: string,
  locality: string,
  country: string,
): Address => ({
  street_address,
  postal_code,
  locality,
  country,
});

const billing = (name: string, at: Address, vat_number: string) => ({ name, address: at, vat_number });

const exchangeAddress = address('Kaiserstrasse 10', '60311', 'Frankfurt am Main', 'DE');
const resellerAddress = address('Herengracht 420', '1017 BZ', 'Amsterdam', 'NL');
const subAddress = address('Rue de Rivoli 50', '75004', 'Paris', 'FR');
const customerAAddress = address('Hauptstrasse 1', '10115', 'Berlin', 'DE');
const customerBAddress = address('1 Canada Square', 'E14 5AB', 'London', 'GB');

/** The demo exchange's accounts: the exchange itself, a reseller with a sub-account, two customers. */
export const DEMO_ACCOUNTS: DemoAccount[] = [
  {
    role: 'operator',
    contactDomain: 'demo-ix.example',
    phonePrefix: '+4969100',
    account: {
      id: 'acc-demo-ix',
      name: 'Demo-IX',
      legal_name: 'Demo Internet Exchange GmbH',
      address: exchangeAddress,
      billing_information: billing('Demo Internet Exchange GmbH', exchangeAddress, 'DE123456789'),
      discoverable: true,
      is_exchange: true,
    },
  },
  {
    role: 'reseller',
    contactDomain: 'transit-partners.example',
    phonePrefix: '+3120555',
    account: {
      id: 'acc-transit-partners',
      name: 'Transit Partners',
      legal_name: 'Transit Partners B.V.',
      address: resellerAddress,
      billing_information: billing('Transit Partners B.V.', resellerAddress, 'NL123456789B01'),
      discoverable: true,
      external_ref: 'crm-tp-1001',
    },
  },
  {
    role: 'subaccount',
    contactDomain: 'petit-reseau.example',
    phonePrefix: '+3314200',
    account: {
      id: 'acc-petit-reseau',
      name: 'Petit Reseau',
      legal_name: 'Petit Reseau SAS',
      address: subAddress,
      billing_information: billing('Petit Reseau SAS', subAddress, 'FR12345678901'),
      managing_account: 'acc-transit-partners',
    },
  },
  {
    role: 'customer',
    contactDomain: 'spree-networks.example',
    phonePrefix: '+4930700',
    account: {
      id: 'acc-spree-networks',
      name: 'Spree Networks',
      legal_name: 'Spree Networks GmbH',
      address: customerAAddress,
      billing_information: billing('Spree Networks GmbH', customerAAddress, 'DE987654321'),
      discoverable: true,
    },
  },
  {
    role: 'customer',
    contactDomain: 'thames-cloud.example',
    phonePrefix: '+4420790',
    account: {
      id: 'acc-thames-cloud',
      name: 'Thames Cloud',
      legal_name: 'Thames Cloud Ltd',
      address: customerBAddress,
      billing_information: billing('Thames Cloud Ltd', customerBAddress, 'GB123456789'),
      // Customers find each other to order circuits and admit members: both are discoverable.
      discoverable: true,
    },
  },
];

export interface DemoCredential extends IssuedCredentials {
  role: DemoRole;
  name: string;
  accountId: string;
}

/**
 * Seeds the demo exchange's accounts, their contacts and role assignments and one API key each.
 * Idempotent: existing rows are kept; credentials passed in `known` are re-installed (so a file of
 * demo credentials keeps working against a fresh database), others are issued anew.
 */
export async function seedDemoAccounts(
  db: Database,
  known: readonly DemoCredential[] = [],
): Promise<DemoCredential[]> {
  for (const role of ROLES) await db.contacts.upsertRole(role);
  const credentials: DemoCredential[] = [];
  for (const demo of DEMO_ACCOUNTS) {
    const id = demo.account.id;
    await db.accounts.importAccount(demo.account, 'production');
    for (const [index, role] of ROLES.entries()) {
      const contactId = `con-${id.replace(/^acc-/, '')}-${role.name}`;
      await db.contacts.ensureContact({
        id: contactId,
        managing_account: demo.account.managing_account ?? id,
        consuming_account: id,
        external_ref: null,
        name: `${demo.account.name} ${role.name[0].toUpperCase()}${role.name.slice(1)}`,
        email: `${role.name}@${demo.contactDomain}`,
        telephone: `${demo.phonePrefix}${String(index + 1).padStart(3, '0')}`,
      });
      await db.contacts.ensureRoleAssignment({
        id: `ra-${contactId.slice(4)}`,
        role: role.id,
        contact: contactId,
      });
    }
    const previous = known.find((c) => c.accountId === id);
    let issued: IssuedCredentials;
    if (previous && (await db.credentials.verifyApiKey(previous.apiKey, previous.apiSecret))) {
      issued = previous;
    } else if (previous) {
      await db.credentials.putApiKey(id, previous, 'demo');
      issued = previous;
    } else {
      issued = await db.credentials.createApiKey(id, 'demo');
    }
    credentials.push({ role: demo.role, name: demo.account.name, accountId: id, ...issued });
  }
  return credentials;
}

/**
 * Circuits Spree Networks made at Stratus Compute (a `provider_first` provider) in the lab, so that
 * cloud services can be ordered with their keys out of the box.
 */
export const DEMO_CLOUD_CIRCUITS = [
  {
    key: 'stratus-spree001',
    provider: 'Stratus Compute',
    pop: 'stratus-fra1',
    bandwidth: 1000,
    customer: 'acc-spree-networks',
  },
  {
    key: 'stratus-spree002',
    provider: 'Stratus Compute',
    pop: 'stratus-ams1',
    bandwidth: 1000,
    customer: 'acc-spree-networks',
  },
];

/**
 * Puts the demo's customer circuits at the lab's cloud providers, as the customer would have made
 * them: waiting for the exchange, at the region, handovers and VLAN mode of the PoP's offering.
 * Idempotent: a circuit already there is kept as it is, whatever happened to it since.
 */
export async function seedDemoCloudCircuits(sequelize: Sequelize): Promise<void> {
  for (const circuit of DEMO_CLOUD_CIRCUITS)
    await sequelize.query(
      `INSERT INTO lab_cloud_circuits (ref, provider, cloud_key, service_key, region, pop, bandwidth,
         bandwidth_limit, handovers, vlans, state, origin, customer, request_key, attachments, created_at, updated_at)
       SELECT :ref, service_provider, :key, :key, service_provider_region, service_provider_pop, :bandwidth,
         :bandwidth, COALESCE(diversity, 1), COALESCE(provider_vlans, 'single'), 'pending', 'customer', :customer,
         NULL, '[]', NOW(3), NOW(3)
       FROM product_offerings
       WHERE type = 'cloud_vc' AND service_provider = :provider AND service_provider_pop = :pop
       ORDER BY id LIMIT 1
       ON DUPLICATE KEY UPDATE ref = ref`,
      { replacements: { ...circuit, ref: `cc-demo-${circuit.key}` } },
    );
}
