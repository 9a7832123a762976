import type { CheckContext, CheckDefinition } from '../runner';
import type { Policy } from '../steps/cancellation-policies';
import { policyOf } from '../steps/cancellation-policies';
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
} from '../steps/circuit-orders';
import { isDay, today } from '../steps/days';
import { configsFollowingProblems, ENDED, latestDay, LIVE, waitsForConfigs } from '../steps/holders';
import type { Item } from '../steps/items';
import { current, isItem, newMarker, show } from '../steps/items';
import { waitFor } from '../steps/waiting';
import { wholeList } from '../steps/whole-lists';

/**
 * Destroying a service with its configs (profile `full`): a network service of the suite's own (a
 * cloud_vc one from an exchange_first offering where one hands over, else a multipoint one) with a
 * config on a connection of the primary account's goes with its configs, and none stays live.
 */

const CONFIGS = {
  noun: 'network service config',
  read: 'network_service_configs_read',
  destroy: 'network_service_configs_destroy',
  policy: 'network_service_config_cancellation_policy_read',
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

/** Checks that destroy a service of the suite's own with its configs. */
export const SERVICE_DEPENDENCY_CHECKS: CheckDefinition[] = [SERVICE_CHECK];
