import type { HttpResponse } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import { wholeList } from '../steps/whole-lists';
import { registerMac } from '../steps/macs';
import { liveConfig, orderConfig, ORDERING_CONFIGS } from '../steps/exchange-lan-configs';
import { exchangeLans, handoverNetworks } from '../steps/exchange-lans';
import { conflictNames, hasProblemType, problemTypeOf } from '../steps/problems';
import type { Policy } from '../steps/cancellation-policies';
import { policyOf } from '../steps/cancellation-policies';
import { isDay, today } from '../steps/days';
import { CONNECTIONS, DECOMMISSIONING, GOING, PORT_RESERVATIONS } from '../steps/subjects';
import {
  finish,
  liveConnections,
  ORDERING_SERVICES,
  ORDERING_VC_CONFIGS,
  orderService,
  orderVcConfig,
  ownOrder,
  serviceOfferings,
  SERVICES,
  strings,
} from '../steps/circuit-orders';
import { waitFor } from '../steps/waiting';
import { cleanUp } from '../steps/cleanup';
import type { Item } from '../steps/items';
import { orderConnection, ORDERING } from '../steps/connection-orders';
import { cancel, change } from '../steps/changes';
import { current, idOf, isItem, newMarker, show } from '../steps/items';
import { contactInRole } from '../steps/contacts';

/**
 * Destroying in dependency order (profile `full`): what a resource depends on (the connection under
 * a config, a MAC or a role assignment a resource names, the service of a config) is refused while
 * a live resource still needs it, and follows once every resource that needs it is going. Nothing
 * is left naming what is gone, and a service takes its configs with it.
 */

const CONFIGS = {
  noun: 'network service config',
  read: 'network_service_configs_read',
  destroy: 'network_service_configs_destroy',
  policy: 'network_service_config_cancellation_policy_read',
};
const CONFIG_PATCH = 'network_service_configs_partial_update';

/** States in which a resource has ended: nothing of it is provisioned any more. */
const ENDED: readonly string[] = ['decommissioned', 'cancelled', 'archived'];
/** States of a resource that is live and in production. */
const LIVE: readonly string[] = ['production', 'production_change_pending'];

/** The latest of some days (YYYY-MM-DD), or undefined when there are none. */
export function latestDay(days: readonly unknown[]): string | undefined {
  return days
    .filter(isDay)
    .reduce<string | undefined>((a, b) => (a === undefined || b > a ? b : a), undefined);
}

/**
 * What keeps configs from following a service that was asked to go: each must be going (or gone),
 * and one being decommissioned goes on the service's `day` where the day is known.
 */
export function configsFollowingProblems(
  service: string,
  configs: readonly Item[],
  day: string | undefined,
): string[] {
  return configs.flatMap((config) => {
    const id = String(config.id);
    const state = String(config.state);
    if (!GOING.includes(state))
      return [`config ${id} of service ${service} is ${state}, not going with its service`];
    if (day !== undefined && DECOMMISSIONING.includes(state) && config.decommission_at !== day)
      return [
        `config ${id} of service ${service} is ${state} on ${show(config.decommission_at)}, not on the service's day ${day}`,
      ];
    return [];
  });
}

/**
 * Whether a status list says its resource still waits for configs (an entry whose tag or message
 * speaks of waiting for configs), which a resource that is going no longer does.
 */
export function waitsForConfigs(status: unknown): boolean {
  return (
    Array.isArray(status) &&
    status.some(
      (entry) =>
        isItem(entry) &&
        [entry.tag, entry.message].some((text) => typeof text === 'string' && /wait.*config/i.test(text)),
    )
  );
}

/**
 * Holds a refusal to the 400 unable-to-fulfill IX-API has for what is still in use, with conflicts
 * naming `holder`; answers whether it was one.
 */
function inUseRefusal(t: CheckContext, response: HttpResponse, holder: string, what: string): boolean {
  if (!t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) return false;
  t.must(
    hasProblemType(response, 'unable-to-fulfill'),
    `${what} was refused as ${problemTypeOf(response)}, not unable-to-fulfill`,
  );
  t.must(
    conflictNames(response, holder),
    `the conflicts of the refusal of ${what} do not name ${holder}: ${show((response.body as Item | undefined)?.conflicts)}`,
  );
  return true;
}

/** Reads `id` until it is going (or gone), for a while; answers the last read. */
async function untilGoing(t: CheckContext, read: string, id: string): Promise<Item | undefined> {
  return (
    (await waitFor(t, read, id, (body) => GOING.includes(String(body.state)), t.suite.waits.settling)) ??
    (await current(t, { noun: 'resource', read }, id))
  );
}

const CONNECTION_CHECK: CheckDefinition = {
  id: 'DEP-001',
  title: "A connection of the suite's own goes once its configs go, not before their day",
  clause:
    "Connections: a DELETE of a connection carrying a live network service config is a 400 unable-to-fulfill whose conflicts name the config; a DELETE of its last port reservation is too (naming the connection), or answers 202 with the reservation going while the connection stays live, and the connection then goes by itself once the config goes; once every config on it is going (DELETE answered 202), its cancellation policy names a decommission_at no earlier than the latest of the configs' decommission days, a DELETE asking for a day before it is a 400 cancellation-policy-error, and a DELETE without a day answers 202 with the connection decommission_requested on the policy's day, no earlier than its configs'; its last port reservation then follows it: DELETE answers 202 with the reservation going. The connection is ordered in a metro area network with an exchange LAN and access to the LAN is ordered on it; INCONCLUSIVE when either does not reach production.",
  operations: [CONNECTIONS.destroy, CONNECTIONS.policy, PORT_RESERVATIONS.destroy],
  requires: [...ORDERING, ...ORDERING_CONFIGS, CONNECTIONS.policy],
  safety: 'mutate',
  deadlineMs: 180_000,
  async run(t) {
    try {
      const lans = await exchangeLans(t);
      const networks = await handoverNetworks(t);
      const { id, connection } = await orderConnection(t, 'standalone', {
        choice: {
          purpose: 'in a metro area network with an exchange LAN',
          accept: (offering) => lans.has(String(offering.handover_metro_area_network)),
          rank: () => 0,
        },
      });
      if (connection.state !== 'production')
        t.inconclusive(
          `the connection ordered did not reach production within ${t.suite.waits.provisioning / 1000} s; access is ordered on connections in production`,
        );
      const service = lans.get(networks.get(String(connection.product_offering)) ?? '');
      if (!service)
        return t.inconclusive('the connection ordered is in no metro area network with an exchange LAN');
      const { id: config } = await orderConfig(t, { service, connection });
      const live = await waitFor(
        t,
        CONFIGS.read,
        config,
        (read) => read.state === 'production',
        t.suite.waits.provisioning,
      );
      if (!live)
        t.inconclusive(
          `the config ordered on ${id} did not reach production within ${t.suite.waits.provisioning / 1000} s`,
        );

      const carrying = await t.call(CONNECTIONS.destroy, { id });
      inUseRefusal(
        t,
        carrying,
        config,
        `DELETE of connection ${id}, which carries config ${config} in production,`,
      );
      const still = await current(t, CONNECTIONS, id);
      t.must(
        !still || !GOING.includes(String(still.state)),
        `the refused DELETE cancelled connection ${id} anyway (it is ${show(still?.state)})`,
      );
      const reservation = strings(still?.port_reservations)[0];
      // The last port given back while the config stands: refused, or taken with the connection
      // left live until the config goes (then it goes with it, by itself).
      let deferred = false;
      if (reservation !== undefined && t.suite.isDeclared(PORT_RESERVATIONS.destroy)) {
        const last = await t.call(PORT_RESERVATIONS.destroy, { id: reservation });
        const what = `DELETE of port reservation ${reservation}, the last of live connection ${id},`;
        if (last.status === 202) {
          deferred = true;
          const answer = isItem(last.body) ? last.body : {};
          t.must(GOING.includes(String(answer.state)), `${what} answered 202 with it ${show(answer.state)}`);
          const kept = await current(t, CONNECTIONS, id);
          t.must(
            !kept || !GOING.includes(String(kept.state)),
            `${what} answered 202 and took connection ${id} from under config ${config} (it is ${show(kept?.state)})`,
          );
        } else inUseRefusal(t, last, id, what);
      }

      const going = await t.call(CONFIGS.destroy, { id: config });
      t.must(going.status === 202, `DELETE of config ${config} answered ${going.status}, not 202`);
      const gone = await untilGoing(t, CONFIGS.read, config);
      if (!gone || !GOING.includes(String(gone.state)))
        return t.inconclusive(
          `config ${config} is ${show(gone?.state)} after its DELETE; the connection cannot be judged`,
        );
      const configsDay = latestDay([gone.decommission_at]);

      if (deferred) {
        const left = await untilGoing(t, CONNECTIONS.read, id);
        t.must(
          left !== undefined && GOING.includes(String(left.state)),
          `connection ${id}, its last port given back, is ${show(left?.state)} once config ${config} goes, not going with it`,
        );
      }
      const policy = await policyOf(t, CONNECTIONS.policy, id);
      if (policy && configsDay)
        t.must(
          policy.decommission_at >= configsDay,
          `the policy of connection ${id} names ${policy.decommission_at} as its first possible day, before ${configsDay}, when its config ${config} goes`,
        );
      // A day before the first possible one is refused, then the DELETE without a day is taken;
      // a connection that went by itself with its last port takes it too, as one going already.
      if (!deferred) await cancel(t, CONNECTIONS, id);
      else {
        const again = await t.call(CONNECTIONS.destroy, { id });
        t.must(
          again.status === 202,
          `DELETE of connection ${id}, going with its last port once config ${config} goes, answered ${again.status}, not 202`,
        );
      }
      const after = await current(t, CONNECTIONS, id);
      if (after && configsDay && DECOMMISSIONING.includes(String(after.state)))
        t.must(
          typeof after.decommission_at === 'string' && after.decommission_at >= configsDay,
          `connection ${id} goes on ${show(after.decommission_at)}, before its config ${config} (${configsDay})`,
        );

      if (reservation !== undefined && t.suite.isDeclared(PORT_RESERVATIONS.destroy)) {
        const follows = await t.call(PORT_RESERVATIONS.destroy, { id: reservation });
        if (
          t.must(
            follows.status === 202,
            `DELETE of port reservation ${reservation} of going connection ${id} answered ${follows.status}, not 202`,
          )
        ) {
          const answer = isItem(follows.body) ? follows.body : {};
          t.must(
            GOING.includes(String(answer.state)),
            `the answer to the DELETE of port reservation ${reservation} is ${show(answer.state)}, not going with connection ${id}`,
          );
          if (
            after &&
            DECOMMISSIONING.includes(String(answer.state)) &&
            typeof after.decommission_at === 'string'
          )
            t.must(
              answer.decommission_at === after.decommission_at,
              `port reservation ${reservation} goes on ${show(answer.decommission_at)}, its connection ${id} on ${after.decommission_at}`,
            );
        }
      }
    } finally {
      await cleanUp(t);
    }
  },
};

const MAC_CHECK: CheckDefinition = {
  id: 'DEP-002',
  title: 'A MAC address used only by configs that are going is deleted, and they no longer name it',
  clause:
    "MAC addresses: once every config using a MAC is going (DELETE answered 202), a DELETE of the MAC answers 200 with it; it is gone (404), and neither those configs' macs nor /macs?network_service_config=<config> name it any more (no dangling id). The config is exchange-LAN access of the suite's own in production; INCONCLUSIVE without one.",
  operations: ['macs_destroy', CONFIGS.destroy],
  requires: ['macs_create', 'macs_destroy', 'macs_read', CONFIG_PATCH, ...ORDERING_CONFIGS],
  safety: 'mutate',
  deadlineMs: 150_000,
  async run(t) {
    try {
      const { id: config } = await liveConfig(t);
      const { id: mac, seq } = await registerMac(t);
      await change(t, CONFIGS, CONFIG_PATCH, config, { type: 'exchange_lan', macs: [mac] }, ['macs']);
      if (
        !(await waitFor(
          t,
          CONFIGS.read,
          config,
          (read) => read.state === 'production',
          t.suite.waits.settling,
        ))
      )
        t.inconclusive(`config ${config} did not come back to production after it was given MAC ${mac}`);
      const going = await t.call(CONFIGS.destroy, { id: config });
      t.must(going.status === 202, `DELETE of config ${config} answered ${going.status}, not 202`);
      const gone = await untilGoing(t, CONFIGS.read, config);
      if (!gone || !GOING.includes(String(gone.state)))
        return t.inconclusive(
          `config ${config} is ${show(gone?.state)} after its DELETE; the MAC cannot be judged`,
        );

      const freed = await t.call('macs_destroy', { id: mac });
      if (freed.status === 200) t.suite.ledger.removed(seq);
      t.must(
        freed.status === 200 && idOf(freed.body) === mac,
        `DELETE of MAC ${mac}, used only by config ${config}, which is ${String(gone.state)}, answered ${freed.status} ${freed.text.slice(0, 160)}, not 200 with the MAC`,
      );
      if (freed.status !== 200) return;
      const read = await t.call('macs_read', { id: mac });
      t.must(read.status === 404, `after its DELETE MAC ${mac} answers ${read.status}, not 404`);
      const after = await current(t, CONFIGS, config);
      t.must(
        !after || !strings(after.macs).includes(mac),
        `config ${config} still names MAC ${mac}, which is deleted: macs ${show(after?.macs)}`,
      );
      if (t.suite.isDeclared('macs_list')) {
        const listed = await wholeList(t, 'macs_list', {
          query: `network_service_config=${encodeURIComponent(config)}`,
        });
        t.must(
          !listed.some((item) => idOf(item) === mac),
          `/macs?network_service_config=${config} still lists MAC ${mac}, which is deleted`,
        );
      }
    } finally {
      await cleanUp(t);
    }
  },
};

const ROLE_CHECK: CheckDefinition = {
  id: 'DEP-003',
  title: 'A role assignment a live resource names cannot be deleted until the resource goes',
  clause:
    "Role assignments: a DELETE of a role assignment that a live resource (here a connection of the suite's own) names in its role_assignments is a 400 unable-to-fulfill whose conflicts name the resource, and it stays; so is a DELETE of its contact. Once the resource is going (DELETE answered 202), DELETE of the assignment answers 200 with it, it is gone (404), the resource's role_assignments no longer name it (no dangling id), and its contact can be deleted (200).",
  operations: ['role_assignments_destroy', 'contacts_destroy', 'role_assignments_create', 'contacts_create'],
  requires: [
    'roles_list',
    'contacts_create',
    'contacts_destroy',
    'contacts_list',
    'role_assignments_create',
    'role_assignments_destroy',
    ...ORDERING,
  ],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const { contact, assignment, contactSeq, seq } = await contactInRole(t);
      const { id } = await orderConnection(t, 'standalone', { roleAssignments: [assignment] });
      const ordered = await current(t, CONNECTIONS, id);
      if (!ordered) return;
      if (!strings(ordered.role_assignments).includes(assignment))
        return t.inconclusive(
          `connection ${id}, ordered with role assignment ${assignment}, names ${show(ordered.role_assignments)}; nothing names the assignment`,
        );

      const held = await t.call('role_assignments_destroy', { id: assignment });
      // Deleted while in use, nothing that follows can be judged (cleaning up finds it gone).
      if (held.status < 300)
        return void t.must(
          false,
          `DELETE of role assignment ${assignment}, which live connection ${id} names, answered ${held.status}, not 400: it went while in use`,
        );
      if (
        inUseRefusal(
          t,
          held,
          id,
          `DELETE of role assignment ${assignment}, which live connection ${id} names,`,
        )
      ) {
        const conflicts = (held.body as Item).conflicts;
        t.should(
          Array.isArray(conflicts) &&
            conflicts.some(
              (conflict) =>
                isItem(conflict) &&
                [conflict.resource_id, conflict.remote_resource_id].includes(id) &&
                conflict.resource_property === 'role_assignments',
            ),
          `the conflict naming connection ${id} does not say that its role_assignments hold the assignment: ${show(conflicts)}`,
        );
      }
      if (t.suite.isDeclared('role_assignments_read')) {
        const kept = await t.call('role_assignments_read', { id: assignment });
        t.must(
          kept.status === 200,
          `after the refused DELETE role assignment ${assignment} answers ${kept.status}, not 200`,
        );
      }
      const contactHeld = await t.call('contacts_destroy', { id: contact });
      if (contactHeld.status < 300)
        return void t.must(
          false,
          `DELETE of contact ${contact}, whose assignment live connection ${id} names, answered ${contactHeld.status}, not 400: it went, with its assignment, while in use`,
        );
      inUseRefusal(
        t,
        contactHeld,
        id,
        `DELETE of contact ${contact}, whose assignment live connection ${id} names,`,
      );

      const going = await t.call(CONNECTIONS.destroy, { id });
      if (!t.must(going.status === 202, `DELETE of connection ${id} answered ${going.status}, not 202`))
        return;
      const freed = await t.call('role_assignments_destroy', { id: assignment });
      if (freed.status === 200) t.suite.ledger.removed(seq);
      t.must(
        freed.status === 200 && idOf(freed.body) === assignment,
        `DELETE of role assignment ${assignment}, named only by connection ${id}, which is going, answered ${freed.status} ${freed.text.slice(0, 160)}, not 200 with the assignment`,
      );
      if (freed.status !== 200) return;
      if (t.suite.isDeclared('role_assignments_read')) {
        const read = await t.call('role_assignments_read', { id: assignment });
        t.must(
          read.status === 404,
          `after its DELETE role assignment ${assignment} answers ${read.status}, not 404`,
        );
      }
      const after = await current(t, CONNECTIONS, id);
      t.must(
        !after || !strings(after.role_assignments).includes(assignment),
        `connection ${id} still names role assignment ${assignment}, which is deleted: role_assignments ${show(after?.role_assignments)}`,
      );
      const contactGone = await t.call('contacts_destroy', { id: contact });
      if (contactGone.status === 200) t.suite.ledger.removed(contactSeq);
      t.must(
        contactGone.status === 200,
        `DELETE of contact ${contact}, whose only assignment is deleted, answered ${contactGone.status}, not 200`,
      );
    } finally {
      await cleanUp(t);
    }
  },
};

/** A service the suite can order with a config on a connection of the primary account's in production. */
async function serviceToCancel(t: CheckContext): Promise<{ type: string; offering: Item; connection: Item }> {
  const connections = await liveConnections(t, 'primary');
  const kinds: Array<[string, (offering: Item) => boolean]> = [
    // A cloud service waits for every handover before production; ordered from an exchange_first
    // offering, the exchange creates its circuit.
    ['cloud_vc', (offering) => offering.service_provider_workflow === 'exchange_first'],
    ['mp2mp_vc', () => true],
    ['p2mp_vc', () => true],
  ];
  for (const [type, accept] of kinds) {
    for (const offering of (await serviceOfferings(t, type)).filter(accept)) {
      const connection = connections.get(String(offering.handover_metro_area_network));
      if (connection) return { type, offering, connection };
    }
  }
  return t.inconclusive(
    'no cloud_vc (exchange_first), mp2mp_vc or p2mp_vc offering is handed over where the primary account has a connection in production',
  );
}

/** The configs of a service: those the suite ordered, and any its list names. */
async function configsOf(t: CheckContext, service: string, own: readonly string[]): Promise<Item[]> {
  const listed = t.suite.isDeclared('network_service_configs_list')
    ? await wholeList(t, 'network_service_configs_list', {
        query: `network_service=${encodeURIComponent(service)}`,
      })
    : [];
  const configs = new Map(listed.map((config) => [String(config.id), config]));
  for (const id of own) {
    if (configs.has(id)) continue;
    const read = await t.call(CONFIGS.read, { id });
    if (read.status === 200 && isItem(read.body)) configs.set(id, read.body);
  }
  return [...configs.values()];
}

const SERVICE_CHECK: CheckDefinition = {
  id: 'DEP-004',
  title: "A network service of the suite's own that is deleted goes with its configs",
  clause:
    "Network services: every type has the same lifecycle on DELETE (202 with the service): in production it goes to decommission_requested on its policy's day and its configs follow (decommission_requested on the same day, or gone), and it is decommissioned after them; before production (a cloud_vc waiting for a handover, say) it is cancelled, or goes to decommission_requested on its policy's day like a live one, its configs going too (those in production decommissioned on the day the service's policy gives), and it ends cancelled or decommissioned once they are gone; it never goes (back) to production, and its status should no longer say it waits for configs. Ordered from a cloud_vc exchange_first offering where one hands over where the primary account has a connection in production, else a mp2mp_vc or p2mp_vc one; where the day lies ahead the check judges the DELETE, the service's state and its configs following it, and says that it could not wait for the day.",
  operations: [SERVICES.destroy, 'network_service_configs_create', 'network_services_create'],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS],
  safety: 'mutate',
  deadlineMs: 240_000,
  async run(t) {
    try {
      const { type, offering, connection } = await serviceToCancel(t);
      const single = offering.provider_vlans === 'single';
      const order =
        type === 'cloud_vc'
          ? await ownOrder(t, type, offering, { cloud_key: newMarker() })
          : await ownOrder(t, type, offering, { display_name: 'Conformance private VLAN', public: false });
      const { service: ordered, id } = await orderService(t, order, `a ${type} service`);
      const extra: Item =
        type === 'cloud_vc'
          ? { handover: 1, cloud_vlan: single ? null : 100 + Math.floor(Math.random() * 3000) }
          : type === 'p2mp_vc'
            ? { role: 'root' }
            : {};
      const { id: config } = await orderVcConfig(t, 'primary', ordered, connection, extra);
      await waitFor(
        t,
        CONFIGS.read,
        config,
        (read) => read.state === 'production',
        t.suite.waits.provisioning,
      );
      const diversity =
        typeof ordered.diversity === 'number' ? ordered.diversity : Number(offering.diversity ?? 1);
      // A service whose every end is now in production goes live by itself; give it the time.
      if (type !== 'cloud_vc' || diversity <= 1)
        await waitFor(
          t,
          SERVICES.read,
          id,
          (read) => LIVE.includes(String(read.state)),
          t.suite.waits.settling,
        );
      const policy: Policy | undefined = t.suite.isDeclared(SERVICES.policy)
        ? await policyOf(t, SERVICES.policy, id)
        : undefined;
      const before = await current(t, SERVICES, id);
      if (!before) return;
      const live = LIVE.includes(String(before.state));

      const deleted = await t.call(SERVICES.destroy, { id });
      if (
        !t.must(
          deleted.status === 202,
          `DELETE of service ${id} (${String(before.state)}) answered ${deleted.status}, not 202`,
        )
      )
        return;
      const answer = isItem(deleted.body) ? deleted.body : {};
      t.must(answer.id === id, `the answer to the DELETE is not service ${id}`);
      if (live) {
        t.must(
          answer.state === 'decommission_requested' && isDay(answer.decommission_at),
          `service ${id}, in production, answered its DELETE as ${show(answer.state)} on ${show(answer.decommission_at)}, not decommission_requested on a day`,
        );
        if (policy && isDay(answer.decommission_at))
          t.must(
            answer.decommission_at >= policy.decommission_at,
            `service ${id} goes on ${answer.decommission_at}, before the first day its policy allows (${policy.decommission_at})`,
          );
      } else
        t.must(
          !LIVE.includes(String(answer.state)),
          `service ${id}, ${String(before.state)} when it was deleted, answered its DELETE as ${show(answer.state)}`,
        );
      const day = live ? latestDay([answer.decommission_at]) : latestDay([policy?.decommission_at]);

      // Its configs follow it.
      let configs: Item[] = [];
      let problems: string[] = [];
      for (const until = Date.now() + t.suite.waits.settling * 2; ;) {
        configs = await configsOf(t, id, [config]);
        problems = configsFollowingProblems(id, configs, day);
        if (!problems.length || Date.now() >= until) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      for (const problem of problems)
        t.must(
          false,
          `${(t.suite.waits.settling * 2) / 1000} s after the DELETE of service ${id}, ${problem}`,
        );
      // Going, with its configs going too, it waits for none of them any more.
      const following = await current(t, SERVICES, id);
      if (following && !ENDED.includes(String(following.state)))
        t.should(
          !waitsForConfigs(following.status),
          `service ${id} (${String(following.state)}) is going with its configs, yet its status says it waits for configs: ${show(following.status)}`,
        );

      if (day === undefined || day <= today()) {
        const ends = live ? ['decommissioned'] : ['cancelled', 'decommissioned'];
        let last = await waitFor(
          t,
          SERVICES.read,
          id,
          (read) => ENDED.includes(String(read.state)),
          t.suite.waits.settling * 3,
        );
        if (!last) last = await current(t, SERVICES, id);
        t.must(
          last !== undefined && [...ends, 'archived'].includes(String(last.state)),
          `${(t.suite.waits.settling * 3) / 1000} s after its DELETE service ${id} (${String(before.state)} when deleted, going on ${day ?? 'no day'}) is ${show(last?.state)}, not ${ends.join(' or ')}`,
        );
        const configsLeft = (await configsOf(t, id, [config])).filter(
          (item) => !ENDED.includes(String(item.state)),
        );
        t.must(
          !configsLeft.length,
          `service ${id} is ${show(last?.state)} while its configs ${configsLeft.map((item) => `${String(item.id)} (${String(item.state)})`).join(', ')} are not gone`,
        );
      } else {
        const last = await current(t, SERVICES, id);
        if (last)
          t.must(
            live ? last.state === 'decommission_requested' : !LIVE.includes(String(last.state)),
            `service ${id}, deleted while ${String(before.state)}, is ${show(last.state)} before its day ${day}`,
          );
        t.note(
          `service ${id} and its configs go on ${day}, which the check cannot wait for: it judged the DELETE, the service's state and its configs following it (${configs.map((item) => `${String(item.id)} ${String(item.state)}`).join(', ')})`,
        );
      }
    } finally {
      await finish(t);
    }
  },
};

/** Checks that destroy what others depend on, in dependency order; they clean up after themselves. */
export const DEPENDENCY_CHECKS: CheckDefinition[] = [CONNECTION_CHECK, MAC_CHECK, ROLE_CHECK, SERVICE_CHECK];
