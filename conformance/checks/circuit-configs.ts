import type { CheckDefinition } from '../runner';
import {
  accountOf,
  attemptConfig,
  CIRCUIT_CONFIGS,
  CONFIG_CREATE,
  CREATE,
  finish,
  liveConnections,
  ORDERING_SERVICES,
  ORDERING_VC_CONFIGS,
  orderRule,
  orderService,
  orderVcConfig,
  ownOrder,
  placed,
  privateService,
  propertyNamed,
  RULE_CREATE,
  RULE_DESTROY,
  secondAccount,
  serviceOfferings,
  SERVICES,
} from '../steps/circuit-orders';
import type { Item } from '../steps/items';
import { current, newMarker, show } from '../steps/items';
import {
  conflictNames,
  hasProblemType,
  problemTypeOf,
  propertyNames,
  validationRefusal,
} from '../steps/problems';
import { waitFor } from '../steps/waiting';

/** Configs of virtual circuits and cloud services on connections in production, of each kind. */

const CLOUD_CONFIG_CHECK: CheckDefinition = {
  id: 'NSC-010',
  title: "Configs of a cloud service of the suite's own take a handover within its diversity, once each",
  clause:
    "Network service configs: a cloud_vc config names a handover from 1 to the service's diversity; one above it is a 400 validation-error naming handover; a config on handover 1 (cloud_vlan null or absent for a single provider VLAN offering, else a provider VLAN) answers 201 of type cloud_vc with that handover; with a single provider VLAN offering a cloud_vlan is a 400 validation-error naming cloud_vlan; a second config on the same handover and cloud_vlan is a 400 unable-to-fulfill whose conflicts name the first. The service is ordered from an exchange_first offering handed over where the primary account has a connection in production; INCONCLUSIVE without one, or when the exchange refuses the order.",
  operations: [CONFIG_CREATE, CREATE],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { offering, connection } = await placed(
        t,
        'cloud_vc',
        (candidate) => candidate.service_provider_workflow === 'exchange_first',
      );
      const { service, id } = await orderService(
        t,
        await ownOrder(t, 'cloud_vc', offering, { cloud_key: newMarker() }),
        'a cloud_vc service',
      );
      const diversity =
        typeof service.diversity === 'number'
          ? service.diversity
          : typeof offering.diversity === 'number'
            ? offering.diversity
            : 1;
      const single = offering.provider_vlans === 'single';
      const vlan = single ? null : 100 + Math.floor(Math.random() * 3000);
      const { config, id: configId } = await orderVcConfig(t, 'primary', service, connection, {
        handover: 1,
        cloud_vlan: vlan,
      });
      t.must(
        config.type === 'cloud_vc' && config.handover === 1,
        `the config ordered on handover 1 answers type ${show(config.type)} handover ${show(config.handover)}`,
      );
      const beyond = await attemptConfig(t, 'primary', service, connection, {
        handover: diversity + 1,
        cloud_vlan: vlan,
      });
      validationRefusal(
        t,
        beyond.response,
        ['handover'],
        `a config on handover ${diversity + 1} of service ${id}, whose diversity is ${diversity}`,
      );
      if (single) {
        const tagged = await attemptConfig(t, 'primary', service, connection, {
          handover: 1,
          cloud_vlan: 100,
        });
        validationRefusal(
          t,
          tagged.response,
          ['cloud_vlan'],
          `a config with cloud_vlan 100 on service ${id}, whose offering has a single provider VLAN`,
        );
      }
      const twin = await attemptConfig(t, 'primary', service, connection, { handover: 1, cloud_vlan: vlan });
      const what = `a second config of service ${id} on handover 1 with cloud_vlan ${show(vlan)}`;
      if (t.must(twin.response.status === 400, `${what} answered ${twin.response.status}, not 400`)) {
        t.must(
          hasProblemType(twin.response, 'unable-to-fulfill'),
          `${what} was refused as ${problemTypeOf(twin.response)}, not unable-to-fulfill`,
        );
        t.must(
          conflictNames(twin.response, configId),
          `the conflicts of the refusal do not name config ${configId}: ${show((twin.response.body as Item).conflicts)}`,
        );
      }
    } finally {
      await finish(t);
    }
  },
};

const ROOT_CONFIG_CHECK: CheckDefinition = {
  id: 'NSC-011',
  title: "A config of a point-to-multipoint service of the suite's own takes the role asked for",
  clause:
    'Network service configs: a p2mp_vc config with role root answers 201 of type p2mp_vc with role root, and reads so; a role other than root or leaf is a 400 validation-error naming role. The service is ordered handed over where the primary account has a connection in production; INCONCLUSIVE without one.',
  operations: [CONFIG_CREATE, CIRCUIT_CONFIGS.read],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const { offering, connection } = await placed(t, 'p2mp_vc');
      const { service } = await privateService(t, 'p2mp_vc', offering);
      const { config, id: configId } = await orderVcConfig(t, 'primary', service, connection, {
        role: 'root',
      });
      t.must(
        config.type === 'p2mp_vc' && config.role === 'root',
        `the config ordered as root answers type ${show(config.type)} role ${show(config.role)}`,
      );
      const read = await current(t, CIRCUIT_CONFIGS, configId);
      t.must(
        !read || read.role === 'root',
        `config ${configId} reads with role ${show(read?.role)}, not root`,
      );
      const odd = await attemptConfig(t, 'primary', service, connection, {
        role: 'conformance-no-such-role',
      });
      validationRefusal(t, odd.response, ['role'], `a p2mp_vc config with role conformance-no-such-role`);
    } finally {
      await finish(t);
    }
  },
};

const MEMBER_CONFIG_CHECK: CheckDefinition = {
  id: 'NSC-012',
  title: 'A private multipoint service admits the configs of accounts an allow rule names, and only those',
  clause:
    "Network service configs: another account's mp2mp_vc config on a private service of the primary account is refused (400, or 403) while no allow rule names it, and nothing is created; once an allow rule names it, its config answers 201. The service is ordered where both accounts have a connection in production; INCONCLUSIVE without.",
  operations: [CONFIG_CREATE, RULE_CREATE],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS, RULE_CREATE, RULE_DESTROY],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a member is another account');
      const primary = await accountOf(t, 'primary');
      const theirs = await liveConnections(t, 'secondary');
      const { offering, connection: own } = await placed(t, 'mp2mp_vc', (candidate) =>
        theirs.has(String(candidate.handover_metro_area_network)),
      );
      const connection = theirs.get(String(offering.handover_metro_area_network))!;
      const { service, id } = await privateService(t, 'mp2mp_vc', offering);
      await orderVcConfig(t, 'primary', service, own);
      const refused = await attemptConfig(t, 'secondary', service, connection);
      const what = `another account's config on private service ${id}, which no rule opens to it,`;
      if (
        t.must(
          [400, 403].includes(refused.response.status),
          `${what} answered ${refused.response.status}, not 400 or 403`,
        ) &&
        refused.response.status === 400
      )
        t.should(
          propertyNamed(refused.response, 'network_service'),
          `the 400 for ${what} does not name network_service`,
        );
      await orderRule(t, {
        type: 'allow',
        network_service: id,
        consuming_account: secondary,
        managing_account: primary,
      });
      const seen = await t.call(SERVICES.read, { id, role: 'secondary' });
      const admitted = await attemptConfig(
        t,
        'secondary',
        seen.status === 200 ? (seen.body as Item) : service,
        connection,
      );
      t.must(
        admitted.response.status === 201,
        `with an allow rule, another account's config on service ${id} answered ${admitted.response.status}, not 201: ${admitted.response.text.slice(0, 200)}`,
      );
    } finally {
      await finish(t);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Change requests of a circuit in production
// ---------------------------------------------------------------------------------------------

/** Properties of a cloud_vc config a PUT replaces it with (CloudNetworkServiceConfigUpdate). */
const CLOUD_CONFIG_UPDATE = [
  'type',
  'managing_account',
  'consuming_account',
  'billing_account',
  'role_assignments',
  'connection',
  'vlan_config',
  'external_ref',
  'purchase_order',
  'contract_ref',
  'handover',
];

const OMITTED_VLAN_CHECK: CheckDefinition = {
  id: 'NSC-013',
  title: 'A cloud config may leave out cloud_vlan, which is then null',
  clause:
    'Network service configs: cloud_vlan may be left out of a cloud_vc config, on POST and on PUT, and left out it is null (for an offering with a single provider VLAN the only value it may have, for one with several every provider VLAN no other config of the service selects): a POST without it answers 201 with cloud_vlan null, not a 400 naming it, and so does the config read; a PUT without it answers 202 and the config reads cloud_vlan null. The service is ordered from an exchange_first offering handed over where the primary account has a connection in production, one with a single provider VLAN where there is one; INCONCLUSIVE without one, or when the exchange refuses the service.',
  operations: [CONFIG_CREATE, 'network_service_configs_update'],
  requires: [...ORDERING_SERVICES, ...ORDERING_VC_CONFIGS],
  safety: 'mutate',
  deadlineMs: 120_000,
  async run(t) {
    try {
      const connections = await liveConnections(t, 'primary');
      const offering =
        (await serviceOfferings(t, 'cloud_vc'))
          .filter(
            (candidate) =>
              candidate.service_provider_workflow === 'exchange_first' &&
              connections.has(String(candidate.handover_metro_area_network)),
          )
          .sort((a, b) => Number(a.provider_vlans !== 'single') - Number(b.provider_vlans !== 'single'))[0] ??
        t.inconclusive(
          'no exchange_first cloud_vc offering is handed over where the primary account has a connection in production',
        );
      const connection = connections.get(String(offering.handover_metro_area_network))!;
      const { service, id } = await orderService(
        t,
        await ownOrder(t, 'cloud_vc', offering, { cloud_key: newMarker() }),
        'a cloud_vc service',
      );
      const { response, id: configId } = await attemptConfig(t, 'primary', service, connection, {
        handover: 1,
      });
      const what = `a cloud_vc config of service ${id} (provider_vlans ${show(offering.provider_vlans)}) on handover 1 without cloud_vlan`;
      if (response.status === 400 && propertyNames(response.body).includes('cloud_vlan'))
        return void t.must(
          false,
          `${what} was refused as ${problemTypeOf(response)} naming cloud_vlan; left out, it is null`,
        );
      if (response.status === 400 && hasProblemType(response, 'unable-to-fulfill'))
        t.inconclusive(`the exchange cannot provide ${what}: ${response.text.slice(0, 200)}`);
      if (
        !t.must(
          response.status === 201 && configId !== undefined,
          `${what} answered ${response.status}, not 201: ${response.text.slice(0, 200)}`,
        )
      )
        return;
      const config = response.body as Item;
      t.must(
        'cloud_vlan' in config && config.cloud_vlan === null,
        `${what} answers cloud_vlan ${show(config.cloud_vlan)}, not null`,
      );
      const read = await current(t, CIRCUIT_CONFIGS, configId!);
      if (read)
        t.must(
          read.cloud_vlan === null,
          `config ${configId} reads cloud_vlan ${show(read.cloud_vlan)}, not null`,
        );
      if (!read || !t.suite.isDeclared('network_service_configs_update')) return;
      const replacement: Item = Object.fromEntries(
        CLOUD_CONFIG_UPDATE.filter((name) => read[name] !== undefined).map((name) => [name, read[name]]),
      );
      replacement.external_ref = `${typeof read.external_ref === 'string' ? read.external_ref : newMarker()}-replaced`;
      const put = await t.call('network_service_configs_update', { id: configId, body: replacement });
      const replaced = `a PUT of config ${configId} without cloud_vlan`;
      if (put.status === 400 && propertyNames(put.body).includes('cloud_vlan'))
        return void t.must(false, `${replaced} was refused as ${problemTypeOf(put)} naming cloud_vlan`);
      if (put.status === 400 && hasProblemType(put, 'unable-to-fulfill'))
        t.inconclusive(`the exchange does not take ${replaced} now: ${put.text.slice(0, 200)}`);
      if (
        !t.must(put.status === 202, `${replaced} answered ${put.status}, not 202: ${put.text.slice(0, 200)}`)
      )
        return;
      const shown = await waitFor(
        t,
        CIRCUIT_CONFIGS.read,
        configId!,
        (body) => body.external_ref === replacement.external_ref,
        t.suite.waits.settling,
      );
      t.must(
        shown && shown.cloud_vlan === null,
        `after ${replaced} config ${configId} reads external_ref ${show(shown?.external_ref)} and cloud_vlan ${show(shown?.cloud_vlan)}, not ${show(replacement.external_ref)} and null`,
      );
    } finally {
      await finish(t);
    }
  },
};

/** Checks that give circuits of the suite's own configs. */
export const CIRCUIT_CONFIG_CHECKS: CheckDefinition[] = [
  CLOUD_CONFIG_CHECK,
  ROOT_CONFIG_CHECK,
  MEMBER_CONFIG_CHECK,
  OMITTED_VLAN_CHECK,
];
