import type { CheckContext, CheckDefinition } from '../runner';
import { ACCOUNT_ADDRESS } from '../steps/accounts';
import {
  liveConnections,
  orderRule,
  orderVcConfig,
  privateService,
  serviceOfferings,
  SERVICES,
} from '../steps/circuit-orders';
import { orderableNow, orderConnection } from '../steps/connection-orders';
import { CONFIGS, orderConfig } from '../steps/exchange-lan-configs';
import { exchangeLans, handoverNetworks, liveAccess } from '../steps/exchange-lans';
import type { Item } from '../steps/items';
import { idOf, isItem, newMarker } from '../steps/items';
import { registerMac } from '../steps/macs';
import { addressesOf, sessionOrder } from '../steps/sessions';
import { GOING } from '../steps/subjects';
import { waitFor } from '../steps/waiting';
import { wholeList } from '../steps/whole-lists';
import type { Role } from '../suite';

/**
 * What the full profile provisions before its checks, so that each has something to judge: an
 * account with nothing in production would leave a sixth of the verdicts INCONCLUSIVE. Each step
 * counts what the account already has and orders only what is missing; what it orders is written
 * into the ledger as shared, which the checks leave alone and the run gives back at its end.
 */

/** Items a collection needs for paging, filters and their combinations to judge. */
export const ENOUGH = 3;

/** The virtual-circuit types whose offerings hand over where the suite's connections are. */
const CIRCUIT_TYPES = ['p2p_vc', 'p2mp_vc', 'mp2mp_vc', 'cloud_vc'];

/** Runs a step with what it writes into the ledger marked as shared. */
async function sharing(t: CheckContext, step: () => Promise<void>): Promise<void> {
  t.suite.ledger.sharing = true;
  try {
    await step();
  } finally {
    t.suite.ledger.sharing = false;
  }
}

/** Whether a resource is still there for the checks: not on its way out. */
const staying = (item: Item) => !GOING.includes(String(item.state));

/**
 * Where the suite's connections go: a metro area network with an exchange LAN, preferring one
 * where the exchange does the cross-connect of a connection offering orderable today (else
 * provisioning waits for the subscriber's), then one where the most kinds of virtual circuit are
 * handed over, then the first by id.
 */
async function meetingNetwork(t: CheckContext): Promise<string | undefined> {
  const lans = await exchangeLans(t);
  const quick = new Set(
    (await wholeList(t, 'product_offerings_list', { query: 'type=connection' }))
      .filter((offering) => orderableNow(offering) && offering.cross_connect_initiator === 'exchange')
      .map((offering) => String(offering.handover_metro_area_network)),
  );
  const handovers = new Map<string, Set<string>>();
  for (const type of CIRCUIT_TYPES)
    for (const offering of await serviceOfferings(t, type)) {
      const network = String(offering.handover_metro_area_network);
      handovers.set(network, (handovers.get(network) ?? new Set()).add(type));
    }
  const rank = (network: string) => [quick.has(network) ? 0 : 1, -(handovers.get(network)?.size ?? 0)];
  return [...lans.keys()].sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0] - y[0] || x[1] - y[1] || a.localeCompare(b);
  })[0];
}

/** Waits for each ordered resource to reach production; INCONCLUSIVE naming those that did not. */
async function allLive(
  t: CheckContext,
  read: string,
  noun: string,
  ordered: ReadonlyArray<{ id: string; role: Role }>,
): Promise<void> {
  const late = (
    await Promise.all(
      ordered.map(async ({ id, role }) =>
        (await waitFor(t, read, id, (body) => body.state === 'production', t.suite.waits.provisioning, role))
          ? undefined
          : id,
      ),
    )
  ).filter((id): id is string => id !== undefined);
  if (late.length)
    t.inconclusive(
      `the ${noun} ${late.join(', ')} the suite ordered did not reach production within ${t.suite.waits.provisioning / 1000} s`,
    );
}

const CONNECTIONS_STEP: CheckDefinition = {
  id: 'PREP-001',
  title: 'The connections the checks need are ordered and reach production',
  clause:
    'Provisioning: a connection ordered (POST 201) goes through its lifecycle to production. The suite needs, in the metro area network with an exchange LAN where most virtual-circuit offerings hand over, a connection in production of the primary account and of the secondary one, and at least three connections of the primary account for its collections to judge; it orders what is missing and gives it back at the end of the run.',
  operations: ['connections_create', 'connections_read', 'connections_list', 'product_offerings_list'],
  safety: 'mutate',
  deadlineMs: 180_000,
  async run(t) {
    await sharing(t, async () => {
      const target = await meetingNetwork(t);
      if (target === undefined) t.inconclusive('the exchange has no exchange LAN in production');
      const networks = await handoverNetworks(t);
      const choice = {
        purpose: `handed over in ${target}`,
        accept: (offering: Item) => networks.get(String(offering.id)) === target,
        rank: () => 0,
      };
      const ordered: Array<{ id: string; role: Role }> = [];
      const roles: Role[] = t.suite.hasCredentials('secondary') ? ['primary', 'secondary'] : ['primary'];
      for (const role of roles) {
        if ((await liveConnections(t, role)).has(target!)) continue;
        const { id } = await orderConnection(t, 'standalone', { choice, waitMs: 0, role });
        ordered.push({ id, role });
      }
      const primary = (await t.session()).accountId;
      const own = (await wholeList(t, 'connections_list')).filter(
        (connection) => connection.managing_account === primary && staying(connection),
      );
      for (let count = own.length; count < ENOUGH; count += 1) {
        const { id } = await orderConnection(t, 'standalone', { choice, waitMs: 0 });
        ordered.push({ id, role: 'primary' });
      }
      await allLive(t, 'connections_read', 'connections', ordered);
      if (ordered.length) t.note(`ordered ${ordered.map((o) => `${o.id} (${o.role})`).join(', ')}`);
    });
  },
};

const ACCESS_STEP: CheckDefinition = {
  id: 'PREP-002',
  title: 'The exchange-LAN access the checks need is ordered and reaches production',
  clause:
    'Provisioning: exchange-LAN access ordered on a connection in production (POST 201) goes through its lifecycle to production with addresses of the LAN. The suite needs at least three network service configs of the primary account, with their addresses, for its collections to judge; it orders what is missing and gives it back at the end of the run.',
  operations: [
    'network_service_configs_create',
    CONFIGS.read,
    'network_service_configs_list',
    'network_services_list',
  ],
  safety: 'mutate',
  deadlineMs: 180_000,
  async run(t) {
    await sharing(t, async () => {
      const primary = (await t.session()).accountId;
      const own = (await wholeList(t, 'network_service_configs_list')).filter(
        (config) => config.managing_account === primary && staying(config),
      );
      if (own.length >= ENOUGH) return;
      const access = await liveAccess(t);
      const ordered: Array<{ id: string; role: Role }> = [];
      for (let count = own.length; count < ENOUGH; count += 1)
        ordered.push({ id: (await orderConfig(t, access)).id, role: 'primary' });
      await allLive(t, CONFIGS.read, 'network service configs', ordered);
      t.note(`ordered ${ordered.map((o) => o.id).join(', ')}`);
    });
  },
};

const SESSIONS_STEP: CheckDefinition = {
  id: 'PREP-003',
  title: 'The route-server sessions the checks need are ordered and reach production',
  clause:
    "Provisioning: a route-server session ordered for exchange-LAN access in production (POST 201) goes through its lifecycle to production. The suite needs at least three network feature configs of the primary account for its collections to judge; it orders what is missing, with the route servers of the LANs of the primary account's configs, and gives it back at the end of the run.",
  operations: [
    'network_feature_configs_create',
    'network_feature_configs_read',
    'network_feature_configs_list',
  ],
  requires: [
    'network_feature_configs_create',
    'network_feature_configs_read',
    'network_feature_configs_list',
    'network_features_list',
    'network_service_configs_list',
    'ips_read',
  ],
  safety: 'mutate',
  deadlineMs: 180_000,
  async run(t) {
    await sharing(t, async () => {
      const primary = (await t.session()).accountId;
      const sessions = (await wholeList(t, 'network_feature_configs_list')).filter(
        (session) => session.managing_account === primary && staying(session),
      );
      if (sessions.length >= ENOUGH) return;
      const taken = new Set(
        sessions.map((s) => `${String(s.network_service_config)} ${String(s.network_feature)}`),
      );
      const configs = (
        await wholeList(t, 'network_service_configs_list', { query: 'type=exchange_lan' })
      ).filter((config) => config.managing_account === primary && config.state === 'production');
      const ordered: Array<{ id: string; role: Role }> = [];
      let count = sessions.length;
      for (const config of configs) {
        if (count >= ENOUGH) break;
        const features = (
          await wholeList(t, 'network_features_list', {
            query: `network_service=${encodeURIComponent(String(config.network_service))}`,
          })
        ).filter((feature) => feature.type === 'route_server');
        const addresses = await addressesOf(t, String(config.id));
        for (const feature of features) {
          if (count >= ENOUGH) break;
          if (taken.has(`${String(config.id)} ${String(feature.id)}`)) continue;
          const families = Array.isArray(feature.address_families) ? feature.address_families : [];
          const ip = addresses.find((address) =>
            families.includes(address.version === 6 ? 'af_inet6' : 'af_inet'),
          );
          if (!ip) continue;
          const marker = newMarker();
          const seq = t.suite.ledger.intend({
            destroy: 'network_feature_configs_destroy',
            role: 'primary',
            marker,
            find: { list: 'network_feature_configs_list', query: `external_ref=${marker}` },
          });
          const body = { ...(await sessionOrder(t, feature, config, ip)), external_ref: marker };
          const response = await t.call('network_feature_configs_create', { body });
          const id = idOf(response.body);
          if (response.status !== 201 || id === undefined) {
            t.suite.ledger.removed(seq);
            t.must(
              response.status === 400,
              `ordering a session answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
            );
            t.inconclusive(
              `the exchange refused the suite's session with ${String(feature.id)} (${response.text.slice(0, 200)})`,
            );
          }
          t.suite.ledger.created(seq, id!);
          ordered.push({ id: id!, role: 'primary' });
          count += 1;
        }
      }
      if (count < ENOUGH)
        t.inconclusive(
          `the primary account's exchange-LAN configs in production have route servers for only ${count} sessions`,
        );
      await allLive(t, 'network_feature_configs_read', 'sessions', ordered);
      t.note(`ordered ${ordered.map((o) => o.id).join(', ')}`);
    });
  },
};

const MACS_STEP: CheckDefinition = {
  id: 'PREP-004',
  title: 'The MAC addresses the checks need are registered',
  clause:
    'MAC addresses: POST of a MAC address of the primary account answers 201. The suite needs at least three MAC addresses of the primary account for its collections to judge; it registers what is missing and removes them at the end of the run.',
  operations: ['macs_create', 'macs_list'],
  safety: 'mutate',
  async run(t) {
    await sharing(t, async () => {
      const primary = (await t.session()).accountId;
      const own = (await wholeList(t, 'macs_list')).filter((mac) => mac.managing_account === primary);
      const registered: string[] = [];
      for (let count = own.length; count < ENOUGH; count += 1) registered.push((await registerMac(t)).id);
      if (registered.length) t.note(`registered ${registered.join(', ')}`);
    });
  },
};

const CIRCUIT_STEP: CheckDefinition = {
  id: 'PREP-005',
  title: 'A multipoint service with member joining rules is ordered and reaches production',
  clause:
    'Provisioning: a private mp2mp_vc service ordered (POST 201) goes through its lifecycle to production, and member joining rules on it answer 201. The suite needs a p2p, multipoint or cloud service of the primary account in production and at least three member joining rules for its checks to judge; it orders what is missing (rules for accounts it creates under the primary account) and gives it back at the end of the run.',
  operations: [
    'network_services_create',
    SERVICES.read,
    'member_joining_rules_create',
    'member_joining_rules_list',
    'accounts_create',
  ],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    await sharing(t, async () => {
      const primary = (await t.session()).accountId;
      const services = (await wholeList(t, 'network_services_list')).filter(
        (service) =>
          ['p2p_vc', 'p2mp_vc', 'mp2mp_vc', 'cloud_vc'].includes(String(service.type)) &&
          service.managing_account === primary &&
          staying(service),
      );
      const rules = await wholeList(t, 'member_joining_rules_list');
      const live = services.find((service) => service.state === 'production');
      if (live && rules.length >= ENOUGH) return;
      const multipoint = services.find(
        (service) =>
          service.type === 'mp2mp_vc' && service.public === false && service.state === 'production',
      );
      let id = multipoint === undefined ? undefined : String(multipoint.id);
      const made: string[] = [];
      if (id === undefined) {
        // A multipoint service goes into production with its first member's config.
        const connections = await liveConnections(t, 'primary');
        const offering =
          (await serviceOfferings(t, 'mp2mp_vc')).find((candidate) =>
            connections.has(String(candidate.handover_metro_area_network)),
          ) ??
          t.inconclusive(
            'no mp2mp_vc offering is handed over where the primary account has a connection in production',
            'a connection of the primary account in production where a mp2mp_vc offering hands over',
          );
        const { service, id: ordered } = await privateService(t, 'mp2mp_vc', offering);
        id = ordered;
        const connection = connections.get(String(offering.handover_metro_area_network))!;
        const { id: config } = await orderVcConfig(t, 'primary', service, connection);
        made.push(id, config);
        const reached = await waitFor(
          t,
          SERVICES.read,
          id,
          (body) => body.state === 'production',
          t.suite.waits.provisioning * 2,
        );
        if (!reached)
          t.inconclusive(
            `the private mp2mp_vc service ${id} the suite ordered did not reach production within ${(t.suite.waits.provisioning * 2) / 1000} s of its first config`,
          );
      }
      for (let count = rules.length; count < ENOUGH; count += 1) {
        const marker = newMarker();
        const seq = t.suite.ledger.intend({
          destroy: 'accounts_destroy',
          role: 'primary',
          marker,
          find: { list: 'accounts_list', query: `external_ref=${marker}` },
        });
        const created = await t.call('accounts_create', {
          body: {
            name: `Conformance member ${count + 1}`,
            managing_account: primary,
            address: ACCOUNT_ADDRESS,
            external_ref: marker,
          },
        });
        const account = idOf(created.body);
        if (created.status !== 201 || !isItem(created.body) || account === undefined) {
          t.suite.ledger.removed(seq);
          t.must(
            created.status === 400,
            `creating an account answered ${created.status}, not 201: ${created.text.slice(0, 200)}`,
          );
          t.inconclusive(`the exchange refused the suite's account: ${created.text.slice(0, 200)}`);
        }
        t.suite.ledger.created(seq, account!);
        const { id: rule } = await orderRule(t, {
          type: 'allow',
          network_service: id,
          consuming_account: account,
          managing_account: primary,
        });
        made.push(account!, rule);
      }
      t.note(`ordered ${made.join(', ')}`);
    });
  },
};

/** The steps that provision what the checks share; they run first in the full profile. */
export const PREREQUISITE_CHECKS: CheckDefinition[] = [
  CONNECTIONS_STEP,
  ACCESS_STEP,
  SESSIONS_STEP,
  MACS_STEP,
  CIRCUIT_STEP,
];
