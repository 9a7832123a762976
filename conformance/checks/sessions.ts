import type { CheckContext, CheckDefinition } from '../runner';
import { change } from '../steps/changes';
import { cleanUp } from '../steps/cleanup';
import { liveConfig, ORDERING_CONFIGS } from '../steps/exchange-lan-configs';
import type { Item } from '../steps/items';
import { current, idOf, newMarker, show } from '../steps/items';
import { conflictNames, hasProblemType, problemTypeOf } from '../steps/problems';
import { addressesOf, sessionOrder, strings } from '../steps/sessions';
import type { Readable } from '../steps/subjects';
import { waitFor } from '../steps/waiting';
import { wholeList } from '../steps/whole-lists';

/**
 * Checks that order a route-server session (a network feature config of type route_server) on
 * exchange-LAN access the suite ordered itself (profile `full`). Every session is written into
 * the ledger before it is ordered and removed before its config.
 */

const SESSIONS: Readable = { noun: 'route-server session', read: 'network_feature_configs_read' };
const CREATE = 'network_feature_configs_create';
const DESTROY = 'network_feature_configs_destroy';
const PATCH = 'network_feature_configs_partial_update';

const FAMILIES = { 4: 'af_inet', 6: 'af_inet6' } as const;

/** A route server of the exchange LAN and an address of the config in a family it speaks. */
async function routeServerFor(
  t: CheckContext,
  service: Item,
  addresses: Item[],
): Promise<{ feature: Item; ip: Item }> {
  const features = (
    await wholeList(t, 'network_features_list', {
      query: `network_service=${encodeURIComponent(String(service.id))}`,
    })
  ).filter((feature) => feature.type === 'route_server');
  if (!features.length) t.inconclusive(`the exchange LAN ${String(service.id)} has no route server`);
  for (const feature of features) {
    const spoken = strings(feature.address_families);
    const ip = addresses.find((address) => spoken.includes(FAMILIES[address.version as 4 | 6] ?? ''));
    if (ip && strings(feature.available_bgp_session_types).length) return { feature, ip };
  }
  return t.inconclusive(
    `no route server of ${String(service.id)} speaks a family of the config's addresses and offers a session type`,
  );
}

/** What ordering a session needs besides what ordering its config does. */
const ORDERING_SESSIONS = [
  CREATE,
  DESTROY,
  SESSIONS.read,
  'network_feature_configs_list',
  'network_features_list',
  'ips_list',
  'ips_read',
  ...ORDERING_CONFIGS,
];

const SESSION_CHECK: CheckDefinition = {
  id: 'NFC-001',
  title:
    "A route-server session ordered on exchange-LAN access of the suite's own reaches production, is listed with its config, has no twin and is no other account's",
  clause:
    "Network feature configs: POST of a route_server session for a config (a route server of the config's exchange LAN, an address of the config in a family the route server speaks, an ASN of the config, the route server's session_mode, one of its available_bgp_session_types, an AS-SET for each family it speaks) answers 201 and the session reaches production; /network-feature-configs?service_config=<config> lists it and the config names it in network_feature_configs; a PATCH answers 202 and shows; a second session for the same config, route server and address is a 400 unable-to-fulfill whose conflicts name the first; another account reading it is answered 404; DELETE answers 202 with it.",
  operations: [CREATE, SESSIONS.read, 'network_feature_configs_list', PATCH, DESTROY],
  requires: [...ORDERING_SESSIONS, PATCH],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const { id: configId, config, service } = await liveConfig(t);
      const { feature, ip } = await routeServerFor(t, service, await addressesOf(t, configId));
      const body = await sessionOrder(t, feature, config, ip);
      const spoken = strings(feature.address_families);
      const order = async (what: string) => {
        const marker = newMarker();
        const seq = t.suite.ledger.intend({
          destroy: DESTROY,
          role: 'primary',
          marker,
          find: { list: 'network_feature_configs_list', query: `external_ref=${marker}` },
        });
        const response = await t.call(CREATE, { body: { ...body, external_ref: marker } });
        const created = idOf(response.body);
        if (response.status < 300 && created !== undefined) t.suite.ledger.created(seq, created);
        else t.suite.ledger.removed(seq);
        if (response.status === 400 && what === 'first')
          t.inconclusive(
            `the exchange refused the suite's session with ${String(feature.id)} (${response.text.slice(0, 200)}); nothing could be judged`,
          );
        return { response, created, seq };
      };
      const first = await order('first');
      if (
        !t.must(
          first.response.status === 201 && first.created !== undefined,
          `ordering a session answered ${first.response.status}, not 201: ${first.response.text.slice(0, 200)}`,
        )
      )
        return;
      const id = first.created!;
      const live = await waitFor(
        t,
        SESSIONS.read,
        id,
        (read) => read.state === 'production',
        t.suite.waits.provisioning,
      );
      if (!live)
        return t.inconclusive(
          `session ${id} did not reach production within ${t.suite.waits.provisioning / 1000} s`,
        );
      const listed = await wholeList(t, 'network_feature_configs_list', {
        query: `service_config=${encodeURIComponent(configId)}`,
      });
      t.must(
        listed.some((item) => item.id === id),
        `service_config=${configId} lists ${listed.map((item) => String(item.id)).join(', ') || 'nothing'}, not session ${id}`,
      );
      t.must(
        listed.every((item) => item.network_service_config === configId),
        `service_config=${configId} lists sessions of other configs`,
      );
      const holder = await current(
        t,
        { noun: 'network service config', read: 'network_service_configs_read' },
        configId,
      );
      t.must(
        !holder || strings(holder.network_feature_configs).includes(id),
        `config ${configId} names the sessions ${show(holder?.network_feature_configs)}, not ${id}`,
      );
      const twin = await order('twin');
      const what = `a second session of config ${configId} with ${String(feature.id)} on address ${String(ip.id)}`;
      if (t.must(twin.response.status === 400, `${what} answered ${twin.response.status}, not 400`)) {
        t.must(
          hasProblemType(twin.response, 'unable-to-fulfill'),
          `${what} was refused as ${problemTypeOf(twin.response)}, not unable-to-fulfill`,
        );
        t.must(
          conflictNames(twin.response, id),
          `the conflicts of the refusal do not name session ${id}: ${show((twin.response.body as Item).conflicts)}`,
        );
      }
      if (t.suite.hasCredentials('secondary')) {
        const foreign = await t.call(SESSIONS.read, { id, role: 'secondary' });
        t.must(
          foreign.status === 404,
          `another account reading session ${id} got ${foreign.status}, not 404`,
        );
      }
      const limits = Object.fromEntries(
        (['af_inet', 'af_inet6'] as const)
          .filter((family) => spoken.includes(family))
          .map((family) => [family === 'af_inet' ? 'max_prefix_v4' : 'max_prefix_v6', 1000]),
      );
      await change(t, SESSIONS, PATCH, id, { type: 'route_server', ...limits }, Object.keys(limits));
      await waitFor(t, SESSIONS.read, id, (read) => read.state === 'production', t.suite.waits.provisioning);
      const deleted = await t.call(DESTROY, { id });
      t.must(deleted.status === 202, `DELETE of session ${id} answered ${deleted.status}, not 202`);
      t.must(idOf(deleted.body) === id, `the answer to the DELETE is not session ${id}`);
      if (deleted.status === 202) t.suite.ledger.removed(first.seq);
    } finally {
      await cleanUp(t);
    }
  },
};

/** Checks that order route-server sessions of their own; they remove what they ordered. */
export const SESSION_CHECKS: CheckDefinition[] = [SESSION_CHECK];
