import type { CheckDefinition } from '../runner';
import { policyOf } from '../steps/cancellation-policies';
import { cancel, change } from '../steps/changes';
import { strings } from '../steps/circuit-orders';
import { cleanUp } from '../steps/cleanup';
import { orderConnection, ORDERING } from '../steps/connection-orders';
import { contactInRole } from '../steps/contacts';
import { liveConfig, orderConfig, ORDERING_CONFIGS } from '../steps/exchange-lan-configs';
import { exchangeLans, handoverNetworks } from '../steps/exchange-lans';
import { inUseRefusal, latestDay, untilGoing } from '../steps/holders';
import type { Item } from '../steps/items';
import { current, idOf, isItem, show } from '../steps/items';
import { registerMac } from '../steps/macs';
import { CONNECTIONS, DECOMMISSIONING, GOING, PORT_RESERVATIONS } from '../steps/subjects';
import { waitFor } from '../steps/waiting';
import { wholeList } from '../steps/whole-lists';

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

/** Checks that destroy what others depend on, in dependency order; they clean up after themselves. */
export const DEPENDENCY_CHECKS: CheckDefinition[] = [CONNECTION_CHECK, MAC_CHECK, ROLE_CHECK];
