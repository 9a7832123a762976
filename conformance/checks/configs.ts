import { randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { CheckContext, CheckDefinition } from '../runner';
import { holdPolicy, refuseMalformedDays } from '../steps/cancellation-policies';
import { cancel, change, foreignAttempt, refusedChange, untypedChange } from '../steps/changes';
import { cleanUp } from '../steps/cleanup';
import { orderConnection, ORDERING } from '../steps/connection-orders';
import {
  allocated,
  CONFIGS,
  ids,
  liveConfig,
  orderConfig,
  ORDERING_CONFIGS,
} from '../steps/exchange-lan-configs';
import { exchangeLans, handoverNetworks, liveAccess, tagged } from '../steps/exchange-lans';
import type { Item } from '../steps/items';
import { current, idOf, isItem, newMarker, show } from '../steps/items';
import { registerMac } from '../steps/macs';
import { conflictNames, hasProblemType, problemTypeOf } from '../steps/problems';
import type { Readable } from '../steps/subjects';
import { waitFor } from '../steps/waiting';
import { wholeList } from '../steps/whole-lists';

/**
 * Checks that order access to an exchange LAN (profile `full`) on a connection of the primary
 * account in production, as a member joining the peering LAN does: the config, its VLAN and the
 * addresses the exchange allocates, changes, MACs, cancellation and who else sees it. Every config
 * is written into the ledger before it is ordered and cancelled at the end.
 */

const PATCH = 'network_service_configs_partial_update';
const IPS: Readable = { noun: 'IP address', read: 'ips_read' };

/** States in which a new config may be answered: it is ordered, not yet in production. */
const EARLY = ['requested', 'allocated', 'testing', 'scheduled', 'production'];
const idList = (list: readonly string[]) => (list.length ? [...list].sort().join(', ') : 'none');

/** A type of config other than exchange_lan, which a PATCH of an exchange-LAN config must not take. */
const OTHER_TYPE = 'p2p_vc';

/** Whether `address` lies inside `subnet` (`network/length`) of IP version `version`. */
export function insideSubnet(address: string, version: 4 | 6, subnet: string): boolean {
  const [network, length] = subnet.split('/');
  const type = version === 4 ? 'ipv4' : 'ipv6';
  if (isIP(address) !== version || isIP(network) !== version || !/^\d+$/.test(length ?? '')) return false;
  try {
    const list = new BlockList();
    list.addSubnet(network, Number(length), type);
    return list.check(address, type);
  } catch {
    return false;
  }
}

/**
 * Holds a config's addresses to the exchange LAN: the config's `ips` are what
 * `/ips?network_service_config=` lists, each readable, inside the service's subnet of its version
 * and with that subnet's prefix length.
 */
async function holdAddresses(t: CheckContext, service: Item, config: Item, listed: Item[]): Promise<void> {
  const id = String(config.id);
  const own = ids(config.ips);
  const found = listed.map((ip) => String(ip.id));
  t.must(
    idList(own) === idList(found),
    `network_service_config=${id} lists the addresses ${idList(found)}; the config's ips are ${idList(own)}`,
  );
  for (const ipId of new Set([...own, ...found])) {
    const response = await t.call('ips_read', { id: ipId });
    if (
      !t.must(response.status === 200, `address ${ipId} of config ${id} answers ${response.status}, not 200`)
    )
      continue;
    const ip = response.body as Item;
    const version = ip.version === 4 || ip.version === 6 ? ip.version : undefined;
    if (!t.must(version, `address ${ipId} is of version ${show(ip.version)}`)) continue;
    const subnet = service[`subnet_v${version}`];
    if (typeof subnet !== 'string') {
      t.must(
        false,
        `config ${id} has an IPv${version} address; ${String(service.id)} has no IPv${version} subnet`,
      );
      continue;
    }
    t.must(
      insideSubnet(String(ip.address), version!, subnet),
      `address ${ipId} (${show(ip.address)}) of config ${id} lies outside ${String(service.id)}'s subnet ${subnet}`,
    );
    t.must(
      String(ip.prefix_length) === subnet.split('/')[1],
      `address ${ipId} has the prefix length ${show(ip.prefix_length)}; the subnet ${subnet} has ${subnet.split('/')[1]}`,
    );
  }
}

/** The VLAN a config is tagged with on its connection, if it says. */
const vlanOf = (config: Item): number | undefined => {
  const vlan = isItem(config.vlan_config)
    ? (config.vlan_config.vlan ?? config.vlan_config.outer_vlan)
    : undefined;
  return typeof vlan === 'number' ? vlan : undefined;
};

const ORDERING_CHECK: CheckDefinition = {
  id: 'NSC-001',
  title:
    'Exchange-LAN access ordered on a connection in production gets a VLAN and addresses from the LAN, and reaches production',
  clause:
    "Network service configs: POST of an exchange_lan config answers 201 with the config in an early state (requested, allocated, testing, scheduled) and the vlan_type ordered; the states it goes through follow the lifecycle to production; the exchange allocates its addresses into ips (perhaps later), each readable at /ips/{id}, listed by /ips?network_service_config=<id> (exactly those), inside the service's subnet_v4 or subnet_v6 of its version and with that subnet's prefix length; the VLAN the exchange chose shows in vlan_config.",
  operations: ['network_service_configs_create', 'network_service_configs_read', 'ips_list', 'ips_read'],
  requires: [...ORDERING_CONFIGS, 'ips_list', 'ips_read'],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const access = await liveAccess(t);
      const { config, id, body } = await orderConfig(t, access);
      t.must(
        EARLY.includes(String(config.state)),
        `a new config is ${show(config.state)}, not requested, allocated, testing or scheduled`,
      );
      t.should(config.state !== 'production', 'a new config is in production the moment it was ordered');
      const ordered = (body.vlan_config as Item).vlan_type;
      t.must(
        isItem(config.vlan_config) && config.vlan_config.vlan_type === ordered,
        `config ${id} ordered with vlan_type ${show(ordered)} answers vlan_config ${show(config.vlan_config)}`,
      );
      const addresses = await allocated(t, id);
      await holdAddresses(t, access.service, addresses.config, addresses.listed);
      const live = await waitFor(
        t,
        CONFIGS.read,
        id,
        (read) => read.state === 'production',
        t.suite.waits.provisioning,
      );
      if (!live)
        return t.inconclusive(
          `config ${id} did not reach production within ${t.suite.waits.provisioning / 1000} s`,
        );
      if (ordered === 'dot1q')
        t.should(
          vlanOf(live) !== undefined,
          `config ${id} is in production on an 802.1Q tag the exchange chose, but vlan_config does not say which: ${show(live.vlan_config)}`,
        );
      t.must(
        idList(ids(live.ips)) === idList(ids(addresses.config.ips)),
        `config ${id} went to production with the addresses ${idList(ids(live.ips))}, not ${idList(ids(addresses.config.ips))}`,
      );
    } finally {
      await cleanUp(t);
    }
  },
};

const POLICY_CHECK: CheckDefinition = {
  id: 'NSC-002',
  title:
    "GET …/cancellation-policy of a config of the suite's own says when it can go and until when it is charged",
  clause:
    'Cancellation policy of a network service config: without decommission_at the first possible decommission day, not in the past, and the last day charged, usually not before it; asked for that day the same answer, asked for a later day an answer for that day, charging no less; a malformed day is a 400 validation-error naming decommission_at; another account asking is answered 404.',
  operations: [CONFIGS.policy],
  requires: [CONFIGS.policy, ...ORDERING_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { id } = await liveConfig(t);
      await holdPolicy(t, CONFIGS.policy, id);
      await refuseMalformedDays(t, CONFIGS.policy, id);
      if (t.suite.hasCredentials('secondary')) {
        const seen = await t.call(CONFIGS.policy, { id, role: 'secondary' });
        t.must(
          seen.status === 404,
          `another account asking for the policy of config ${id} got ${seen.status}, not 404`,
        );
      }
    } finally {
      await cleanUp(t);
    }
  },
};

const PATCH_CHECK: CheckDefinition = {
  id: 'NSC-003',
  title: "A config of the suite's own changes with PATCH, with or without its type, and refuses another type",
  clause:
    "Network service configs: PATCH with the config's type answers 202 with the config, and the values sent show on reading it; a PATCH without type (the document requires it, but clients such as pyixapi leave it out) should be taken the same way; a PATCH with another type is a 400 validation-error naming type and changes nothing; another account's PATCH is a 404 and changes nothing.",
  operations: [PATCH],
  requires: [PATCH, ...ORDERING_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { id, marker } = await liveConfig(t);
      const typed = { type: 'exchange_lan', external_ref: `${marker}-typed` };
      await change(t, CONFIGS, PATCH, id, typed, ['external_ref']);
      await untypedChange(
        t,
        CONFIGS,
        PATCH,
        id,
        { purchase_order: 'CONFORMANCE-PO-1' },
        'exchange_lan',
        'purchase_order',
      );
      await refusedChange(t, CONFIGS, PATCH, id, { type: OTHER_TYPE }, ['type']);
      await foreignAttempt(
        t,
        CONFIGS,
        PATCH,
        id,
        { body: { type: 'exchange_lan', purchase_order: 'CONFORMANCE-FOREIGN' } },
        ['purchase_order'],
      );
    } finally {
      await cleanUp(t);
    }
  },
};

const VLAN_CHECK: CheckDefinition = {
  id: 'NSC-004',
  title: 'A VLAN already used on a connection is refused, naming the config that holds it',
  clause:
    'Network service configs: a config asking for a VLAN another config holds on the same connection cannot be provisioned; the answer is a 400 unable-to-fulfill whose conflicts name the config holding it, and nothing is created. INCONCLUSIVE when the exchange never says which VLAN it chose.',
  operations: ['network_service_configs_create', 'network_service_configs_list'],
  requires: [...ORDERING_CONFIGS, 'network_service_configs_list'],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const access = await liveAccess(t);
      if (!tagged(access.connection))
        t.inconclusive(`connection ${String(access.connection.id)} takes no 802.1Q tags`);
      const holder = await orderConfig(t, access);
      // The VLAN of a config in production is surely held (and it goes under its policy after).
      const live = await waitFor(
        t,
        CONFIGS.read,
        holder.id,
        (config) => config.state === 'production',
        t.suite.waits.provisioning,
      );
      const vlan = vlanOf(live ?? holder.config) ?? vlanOf(holder.config);
      if (vlan === undefined)
        return t.inconclusive(`the exchange never said which VLAN config ${holder.id} is tagged with`);
      const marker = newMarker();
      const clash = { vlan_type: 'dot1q', vlan };
      const seq = t.suite.ledger.intend({
        destroy: CONFIGS.destroy,
        role: 'primary',
        marker,
        find: { list: 'network_service_configs_list', query: `external_ref=${marker}` },
      });
      const response = await t.call('network_service_configs_create', {
        body: { ...holder.body, vlan_config: clash, external_ref: marker },
      });
      const created = idOf(response.body);
      if (response.status < 300 && created !== undefined) t.suite.ledger.created(seq, created);
      else t.suite.ledger.removed(seq);
      const what = `a config on ${String(access.connection.id)} with VLAN ${vlan}, which ${holder.id} holds,`;
      if (t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) {
        t.must(
          hasProblemType(response, 'unable-to-fulfill'),
          `${what} was refused as ${problemTypeOf(response)}, not unable-to-fulfill`,
        );
        t.must(
          conflictNames(response, holder.id),
          `the conflicts of the refusal do not name ${holder.id}: ${show((response.body as Item).conflicts)}`,
        );
      }
      const listed = await wholeList(t, 'network_service_configs_list', { query: `external_ref=${marker}` });
      t.must(
        !listed.some((config) => config.state !== 'cancelled' && config.state !== 'archived'),
        `the refused config is there: ${idList(listed.map((config) => String(config.id)))}`,
      );
    } finally {
      await cleanUp(t);
    }
  },
};

const CANCEL_CHECK: CheckDefinition = {
  id: 'NSC-005',
  title:
    "A config of the suite's own in production is cancelled on the day its policy allows, and stays readable",
  clause:
    "Network service configs: a DELETE asking for a day before the first possible one is a 400 cancellation-policy-error and changes nothing; another account's DELETE is a 404; a DELETE without a day answers 202 with the config (never 204 without it), decommission_requested with the policy's decommission_at and charged_until, and it stays readable while it goes.",
  operations: [CONFIGS.destroy],
  requires: [CONFIGS.policy, ...ORDERING_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { id } = await liveConfig(t);
      await cancel(t, CONFIGS, id);
    } finally {
      await cleanUp(t);
    }
  },
};

/**
 * Archives a connection of the suite's own once its cancellation is through, so that nothing the
 * suite ordered stays behind as cancelled (a state older revisions do not know).
 */
async function archiveConnection(t: CheckContext, id: string): Promise<void> {
  const ended = await waitFor(
    t,
    'connections_read',
    id,
    (read) => ['cancelled', 'decommissioned', 'archived'].includes(String(read.state)),
    t.suite.waits.settling * 2,
  );
  if (ended && ended.state !== 'archived') await t.call('connections_destroy', { id });
}

const ARCHIVE_CHECK: CheckDefinition = {
  id: 'NSC-006',
  title: 'A config still being provisioned is cancelled by DELETE, and archived by a second one',
  clause:
    "Network service configs: a DELETE of a config not yet in production answers 202 with the config, which goes on to cancelled (or decommissioned); a DELETE of a cancelled or decommissioned config answers 202 with it archived. The config is ordered on a connection of the suite's own that waits for its cross-connect where the exchange has one; INCONCLUSIVE when the config reached production first and goes on a later day.",
  operations: [CONFIGS.destroy, 'network_service_configs_create'],
  requires: [...ORDERING_CONFIGS, ...ORDERING],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    let ordered: string | undefined;
    try {
      const lans = await exchangeLans(t);
      const networks = await handoverNetworks(t);
      const { connection } = await orderConnection(t, 'standalone', {
        waitMs: 0,
        choice: {
          purpose: 'in a metro area network with an exchange LAN',
          accept: (offering) => lans.has(String(offering.handover_metro_area_network)),
          // The subscriber's cross-connect never comes, so the connection stays in provisioning.
          rank: (offering) => (offering.cross_connect_initiator === 'subscriber' ? 0 : 1),
        },
      });
      ordered = idOf(connection);
      const service = lans.get(networks.get(String(connection.product_offering)) ?? '');
      if (!service)
        return t.inconclusive(`the connection ordered is in no metro area network with an exchange LAN`);
      const { id } = await orderConfig(t, { service, connection });
      const deleted = await t.call(CONFIGS.destroy, { id });
      t.must(
        deleted.status === 202,
        `DELETE of config ${id}, still being provisioned, answered ${deleted.status}, not 202`,
      );
      t.must(idOf(deleted.body) === id, `the answer to the DELETE is not config ${id}`);
      const ended = await waitFor(
        t,
        CONFIGS.read,
        id,
        (read) => ['cancelled', 'decommissioned'].includes(String(read.state)),
        t.suite.waits.settling * 2,
      );
      if (!ended) {
        const read = await current(t, CONFIGS, id);
        if (read?.state === 'decommission_requested')
          t.inconclusive(
            `config ${id} reached production before its DELETE and goes on ${show(read.decommission_at)}; its archiving cannot be waited for`,
          );
        t.must(
          false,
          `${(t.suite.waits.settling * 2) / 1000} s after its DELETE config ${id} is ${show(read?.state)}, not cancelled or decommissioned`,
        );
        return;
      }
      const archived = await t.call(CONFIGS.destroy, { id });
      t.must(
        archived.status === 202,
        `a second DELETE of config ${id}, ${String(ended.state)}, answered ${archived.status}, not 202`,
      );
      t.must(
        isItem(archived.body) && archived.body.id === id && archived.body.state === 'archived',
        `a second DELETE of config ${id}, ${String(ended.state)}, answers it ${show(isItem(archived.body) ? archived.body.state : archived.text.slice(0, 80))}, not archived`,
      );
      const after = await t.call(CONFIGS.read, { id });
      t.must(
        after.status === 404 || (after.status === 200 && (after.body as Item).state === 'archived'),
        `after its archiving config ${id} reads ${after.status} ${show((after.body as Item | undefined)?.state)}`,
      );
    } finally {
      await cleanUp(t);
      if (ordered !== undefined) await archiveConnection(t, ordered);
    }
  },
};

const ADDRESS_CHECK: CheckDefinition = {
  id: 'NSC-007',
  title: 'An address the exchange allocated to a config takes a host name, but does not move',
  clause:
    "IP addresses: the holder of an address allocated to an exchange-LAN config may set its fqdn with PATCH (200 with the address, shown on reading it); its address is the exchange's: a PATCH of address is a 400 validation-error naming address, and the address stays; another account's PATCH is a 404 and changes nothing.",
  operations: ['ips_partial_update'],
  requires: ['ips_partial_update', 'ips_read', 'ips_list', ...ORDERING_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { id } = await liveConfig(t);
      const { config, listed } = await allocated(t, id);
      const ipId = ids(config.ips)[0] ?? String(listed[0].id);
      const fqdn = `conformance-${randomBytes(4).toString('hex')}.example.net`;
      const named = await t.call('ips_partial_update', { id: ipId, body: { fqdn } });
      if (
        t.must(
          named.status === 200,
          `a PATCH of the fqdn of address ${ipId} answered ${named.status}, not 200`,
        )
      )
        t.must(
          (named.body as Item).fqdn === fqdn,
          `the answer to the PATCH of the fqdn of ${ipId} shows ${show((named.body as Item).fqdn)}`,
        );
      const read = await current(t, IPS, ipId);
      t.must(!read || read.fqdn === fqdn, `after its PATCH address ${ipId} has the fqdn ${show(read?.fqdn)}`);
      const elsewhere = read?.version === 6 ? '2001:db8:ffff:ffff::c0f' : '198.18.0.1';
      await refusedChange(t, IPS, 'ips_partial_update', ipId, { address: elsewhere }, ['address']);
      await foreignAttempt(t, IPS, 'ips_partial_update', ipId, { body: { fqdn: 'foreign.example.net' } }, [
        'fqdn',
      ]);
    } finally {
      await cleanUp(t);
    }
  },
};

const ISOLATION_CHECK: CheckDefinition = {
  id: 'NSC-008',
  title: "Another account sees neither a config of the suite's own nor its addresses",
  clause:
    "Authorisation: a config of the primary account is a 404 to an unrelated account and is not in its list; none of its addresses is in that account's /ips, whole or filtered by network_service_config, and each is a 404 to it.",
  operations: ['network_service_configs_read', 'network_service_configs_list', 'ips_list', 'ips_read'],
  requires: [...ORDERING_CONFIGS, 'network_service_configs_list', 'ips_list', 'ips_read'],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    if (!t.suite.hasCredentials('secondary'))
      t.notApplicable('no credentials for a second account were given');
    try {
      const { id } = await liveConfig(t);
      const { config, listed } = await allocated(t, id);
      const addresses = [...new Set([...ids(config.ips), ...listed.map((ip) => String(ip.id))])];
      const read = await t.call(CONFIGS.read, { id, role: 'secondary' });
      t.must(read.status === 404, `another account reading config ${id} got ${read.status}, not 404`);
      const configs = await wholeList(t, 'network_service_configs_list', { role: 'secondary' });
      t.must(
        !configs.some((item) => item.id === id),
        `config ${id} is in another account's list of network service configs`,
      );
      const everything = await wholeList(t, 'ips_list', { role: 'secondary' });
      const filtered = await wholeList(t, 'ips_list', {
        role: 'secondary',
        query: `network_service_config=${encodeURIComponent(id)}`,
      });
      for (const [list, where] of [
        [everything, '/ips'],
        [filtered, `/ips?network_service_config=${id}`],
      ] as const) {
        const seen = list.map((ip) => String(ip.id)).filter((ipId) => addresses.includes(ipId));
        t.must(!seen.length, `another account's ${where} lists ${idList(seen)} of config ${id}`);
      }
      for (const ipId of addresses) {
        const ip = await t.call('ips_read', { id: ipId, role: 'secondary' });
        t.must(
          ip.status === 404,
          `another account reading address ${ipId} of config ${id} got ${ip.status}, not 404`,
        );
      }
    } finally {
      await cleanUp(t);
    }
  },
};

const MAC_CHECK: CheckDefinition = {
  id: 'NSC-009',
  title: "A MAC address a config of the suite's own uses cannot be deleted until the config lets it go",
  clause:
    'MAC addresses: a MAC given to a config with PATCH (202) shows in its macs; a DELETE of it while the config uses it is a 400 unable-to-fulfill whose conflicts name the config, and it stays; once the config no longer uses it, DELETE answers 200 with the MAC.',
  operations: ['macs_create', 'macs_destroy', 'macs_read'],
  requires: ['macs_create', 'macs_destroy', 'macs_read', PATCH, ...ORDERING_CONFIGS],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const { id } = await liveConfig(t);
      const { id: mac, seq } = await registerMac(t);
      await change(t, CONFIGS, PATCH, id, { type: 'exchange_lan', macs: [mac] }, ['macs']);
      const held = await t.call('macs_destroy', { id: mac });
      if (
        t.must(
          held.status === 400,
          `DELETE of MAC ${mac}, which config ${id} uses, answered ${held.status}, not 400`,
        )
      ) {
        t.must(
          hasProblemType(held, 'unable-to-fulfill'),
          `DELETE of MAC ${mac} in use was refused as ${problemTypeOf(held)}, not unable-to-fulfill`,
        );
        t.must(
          conflictNames(held, id),
          `the conflicts of the refused DELETE of MAC ${mac} do not name config ${id}: ${show((held.body as Item).conflicts)}`,
        );
      }
      const still = await t.call('macs_read', { id: mac });
      t.must(still.status === 200, `after the refused DELETE MAC ${mac} answers ${still.status}, not 200`);
      await change(t, CONFIGS, PATCH, id, { type: 'exchange_lan', macs: [] }, ['macs']);
      const live = await waitFor(
        t,
        CONFIGS.read,
        id,
        (read) => read.state === 'production',
        t.suite.waits.settling,
      );
      if (!live) t.inconclusive(`config ${id} did not come back to production after its MAC was taken off`);
      const freed = await t.call('macs_destroy', { id: mac });
      t.must(
        freed.status === 200 && idOf(freed.body) === mac,
        `DELETE of MAC ${mac}, no longer used, answered ${freed.status} ${freed.text.slice(0, 120)}, not 200 with the MAC`,
      );
      if (freed.status === 200) t.suite.ledger.removed(seq);
    } finally {
      await cleanUp(t);
    }
  },
};

/** Checks that order exchange-LAN access of their own; they cancel what they ordered. */
export const CONFIG_CHECKS: CheckDefinition[] = [
  ORDERING_CHECK,
  POLICY_CHECK,
  PATCH_CHECK,
  VLAN_CHECK,
  CANCEL_CHECK,
  ARCHIVE_CHECK,
  ADDRESS_CHECK,
  ISOLATION_CHECK,
  MAC_CHECK,
];
