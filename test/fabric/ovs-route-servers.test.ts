import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import { BirdRouteServers } from '../../drivers/bird/driver';
import { protocolName } from '../../drivers/bird/config';
import { OvsFabric } from '../../drivers/ovs/fabric';
import { runProgram } from '../../drivers/ovs/program';
import { coreBridgeName, linkOf } from '../../drivers/ovs/topology';
import { processRuns } from '../../drivers/processes';
import { catalogueRouteServers, fabricDevices, fabricRouteServers } from '../../drivers/ovs/catalogue';
import type { Speaker } from '../support/bird-speakers';
import { communityLine, routeOf, startSpeaker } from '../support/bird-speakers';
import { settleConnections } from '../support/connections';
import type { RtrCacheProcess } from '../support/stayrtr';
import { startStayrtr } from '../support/stayrtr';
import { featureConfigWorkflowId } from '../../db/repositories/network-feature-config-repository';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { deviceOf, FRA_LAN, reaches, SPREE } from '../support/exchange-lan';
import { login, request } from '../support/http';
import { assertMemberExport, memberExportUrl } from '../support/ixf';
import { fabricTurn, leftovers, whyOvsCannotRun } from '../support/ovs';
import { setWorker, stack } from '../support/stack';
import { activitiesFor } from '../../worker/create-worker';
import { cannotRun } from '../support/system-tools';
import { eventually } from '../support/wait';

/**
 * The exchange in a box, end to end: two customers (Spree Networks and Thames Cloud) order over
 * HTTP what a member orders (a connection at two PoPs of Frankfurt, untagged exchange-LAN access
 * for their router's MAC, a session with the IPv4 route server), and the stack's workflows provision
 * it on the ovs fabric and the route server's BIRD. Each customer's router (the customer side of its
 * port) runs a BIRD announcing a prefix; the route server, in the namespace the fabric hung off the
 * core bridge, passes each on to the other, and the customers reach each other across the two
 * devices' trunks; a MAC the config does not list is dropped; decommissioning over HTTP takes the
 * session and the access away. The route server checks route origins against an RPKI validator
 * cache (stayrtr, in its namespace): Spree's prefix with a ROA for Spree passes tagged valid, its
 * other prefix, whose ROA names another AS, never reaches Thames, and Thames's prefix, with no ROA,
 * passes tagged not found. Needs root, Open vSwitch, BIRD 2 and stayrtr.
 */

const RS = 'nf-rs1-fra';
const RS_ADDRESS = '192.0.2.253';
const NETWORK = 'man-fra';
const THAMES = 'acc-thames-cloud';
/** The validated ROA payloads the cache serves: Spree's first prefix is Spree's, its second another AS's. */
const VRPS = [
  { prefix: '185.1.10.0/24', maxLength: 24, asn: 64511 },
  { prefix: '185.1.11.0/24', maxLength: 24, asn: 64999 },
];
/** The large communities the route server tags RPKI-valid and not-found routes with. */
const RPKI_VALID = '(64500, 1000, 1)';
const RPKI_NOT_FOUND = '(64500, 1000, 2)';

interface Customer {
  account: string;
  /** Its contacts' role assignments: for connections, configs and sessions. */
  roles: { connection: string[]; config: string[]; session: string[] };
  token: string;
  pop: string;
  asn: number;
  prefix: string;
  /** A prefix it announces whose origin RPKI finds invalid, if any. */
  invalid?: string;
  connection: string;
  config: string;
  session: string;
  address: string;
  mac: string;
  /** Its second connection, an end of the point-to-point circuit. */
  circuitEnd: { connection: string; device: string; port: string };
  device: string;
  port: string;
  /** Its router: a BIRD in its port's namespace. */
  speaker?: Speaker;
}

describe('route servers on the ovs fabric', function () {
  this.timeout(240_000);
  let fabric: OvsFabric | undefined;
  let root: string;
  let nextFabric: (() => void) | undefined;
  let cache: RtrCacheProcess | undefined;
  const roles = (name: string) => ({
    connection: [`ra-${name}-implementation`, `ra-${name}-noc`],
    config: [`ra-${name}-noc`, `ra-${name}-peering`],
    session: [`ra-${name}-noc`],
  });
  const customers: Customer[] = [
    {
      account: SPREE,
      roles: roles('spree-networks'),
      pop: 'fra1',
      asn: 64511,
      prefix: '185.1.10.0/24',
      invalid: '185.1.11.0/24',
    },
    { account: THAMES, roles: roles('thames-cloud'), pop: 'fra2', asn: 64512, prefix: '185.1.20.0/24' },
  ] as Customer[];
  const owned = (customer: Customer) => ({
    managing_account: customer.account,
    consuming_account: customer.account,
    billing_account: customer.account,
  });

  const namespaceOf = (customer: Customer) => linkOf(customer.device, customer.port).namespace;
  const inNamespace = (customer: Customer, args: string[]) =>
    runProgram('ip', ['netns', 'exec', namespaceOf(customer), ...args]);
  const birdc = (customer: Customer, args: string[]) => customer.speaker!.birdc(args);
  const pings = (from: Customer, to: Customer) =>
    inNamespace(from, ['ping', '-c', '2', '-W', '1', to.address]).then(
      () => true,
      () => false,
    );

  before(async function () {
    const reason = whyOvsCannotRun(['bird', 'birdc', 'stayrtr']);
    if (reason) cannotRun(this, `Open vSwitch and BIRD cannot run (${reason})`);
    nextFabric = await fabricTurn(this);
    root = mkdtempSync(path.join(tmpdir(), 'ixapi-rs-'));
    fabric = new OvsFabric(path.join(root, 'ovs'));
  });

  after(async function () {
    this.timeout(60_000);
    await setWorker({});
    try {
      for (const customer of customers) await customer.speaker?.stop();
      if (cache) {
        await cache.stop();
        assert.equal(processRuns(cache.pid), false, 'the RPKI cache is gone');
        const left = await runProgram('pgrep', ['-f', path.join(root, 'vrps.json')]).catch(() => ({
          stdout: '',
        }));
        assert.equal(left.stdout.trim(), '', 'no stayrtr is left');
      }
      if (fabric) {
        const record = await fabric.record();
        await fabric.down({ purge: true });
        assert.deepEqual(await leftovers(fabric, record), [], 'the fabric left nothing running');
        const birds = await runProgram('pgrep', ['-f', fabric.birdDir]).catch(() => ({ stdout: '' }));
        assert.equal(birds.stdout.trim(), '', "no route server's BIRD is left");
      }
      if (root) rmSync(root, { recursive: true, force: true });
    } finally {
      nextFabric?.();
    }
    await settleConnections();
  });

  it("provisions what two customers order over HTTP on the fabric and the route server's BIRD", async function () {
    const db = stack().db.sequelize;
    const catalogue = stack().db.fabricCatalogue;
    customers[0].token = (await login('customer', 0)).accessToken;
    customers[1].token = (await login('customer', 1)).accessToken;

    // The connections are ordered with no worker running: their ports are allocated at once, and
    // the fabric is made of those ports (and Frankfurt's route servers) before any is configured.
    await setWorker(null);
    /** A connection of `customer` at its PoP, and the device and port it was given. */
    const connect = async (customer: Customer) => {
      const created = await request('POST', '/connections', {
        token: customer.token,
        body: {
          ...owned(customer),
          role_assignments: customer.roles.connection,
          product_offering: `po-connection-${customer.pop}-10g`,
          mode: 'standalone',
          port_quantity: 1,
          subscriber_side_demarcs: ['cage 9, panel 2, port 1'],
        },
      });
      assert.equal(created.status, 201, created.text);
      const connection = created.body.id as string;
      const [port] = await db.query<{ name: string }>(
        'SELECT name FROM ports WHERE connection = :connection ORDER BY name',
        { replacements: { connection }, type: QueryTypes.SELECT },
      );
      return { connection, device: await deviceOf(connection), port: port.name };
    };
    for (const customer of customers) {
      Object.assign(customer, await connect(customer));
      // A second connection, for a point-to-point circuit between the two customers.
      customer.circuitEnd = await connect(customer);
    }
    // A third, whose port the device will refuse to bring up: its link is gone from the host.
    const refused = await connect(customers[0]);
    const [a, b] = customers;
    assert.notEqual(a.device, b.device, 'the customers are on two devices');

    const ports = [...customers.flatMap((c) => [c, c.circuitEnd]), refused];
    const devices = (await fabricDevices(catalogue, [a.device, b.device])).map((device) => ({
      ...device,
      ports: device.ports.filter((port) =>
        ports.some((p) => p.device === device.device && p.port === port.name),
      ),
    }));
    assert.deepEqual(
      devices.map((device) => device.network),
      [NETWORK, NETWORK],
    );
    const routeServers = (await fabricRouteServers(catalogue)).filter((server) => server.network === NETWORK);
    assert.deepEqual(
      routeServers.map(({ feature, segment, ipv4 }) => ({ feature, segment, ipv4 })),
      [
        { feature: RS, segment: FRA_LAN, ipv4: `${RS_ADDRESS}/24` },
        { feature: 'nf-rs2-fra', segment: FRA_LAN, ipv4: null },
      ],
    );
    await fabric!.up(devices, routeServers);
    const status = await fabric!.status();
    assert.deepEqual(
      status.cores.map((core) => ({ bridge: core.bridge, trunks: core.trunks.map((t) => t.device).sort() })),
      [{ bridge: coreBridgeName(NETWORK), trunks: [a.device, b.device].sort() }],
    );
    const [placed] = status.routeServers.filter((server) => server.feature === RS);
    assert.ok(placed.vlan! >= 2, 'the LAN has a fabric VLAN');
    // Two processes allocating at once agree on a segment's VLAN and never share one.
    const [first, second] = await Promise.all([
      fabric!.segmentVlans(['rs-test-x', 'rs-test-y']),
      new OvsFabric(fabric!.runDir).segmentVlans(['rs-test-y', 'rs-test-z', FRA_LAN]),
    ]);
    assert.equal(first.get('rs-test-y'), second.get('rs-test-y'));
    assert.equal(second.get(FRA_LAN), placed.vlan);
    const vlans = [first.get('rs-test-x'), first.get('rs-test-y'), second.get('rs-test-z'), placed.vlan];
    assert.equal(new Set(vlans).size, 4, `distinct fabric VLANs: ${vlans.join(', ')}`);

    // From here the workflows run on a worker driving the fabric and the route servers' BIRD.
    await runProgram('ip', ['link', 'del', linkOf(refused.device, refused.port).exchangeEnd]);
    // The exchange's RPKI validator cache, where the route server's BIRD reaches it: on the
    // loopback of its namespace.
    cache = await startStayrtr(root, placed.namespace, VRPS);
    const workerSettings = {
      deviceDriver: 'ovs' as const,
      ovsRunDir: fabric!.runDir,
      rpkiRtr: [{ host: cache.host, port: cache.port }],
    };
    await setWorker(workerSettings);
    const failed = (await reaches(a.token, `/connections/${refused.connection}`, 'error')) as unknown as {
      status: Array<{ tag: string; message: string }>;
    };
    process.stdout.write(`      a connection the fabric refuses: ${JSON.stringify(failed.status)}\n`);
    assert.equal(failed.status[0]?.tag, 'configuration_failed', JSON.stringify(failed.status));
    assert.match(failed.status[0].message, new RegExp(linkOf(refused.device, refused.port).exchangeEnd));
    for (const customer of customers) {
      const { token } = customer;
      await reaches(token, `/connections/${customer.connection}`, 'production');
      const { namespace, customerEnd } = linkOf(customer.device, customer.port);
      const shown = await runProgram('ip', ['-n', namespace, '-j', 'link', 'show', customerEnd]);
      customer.mac = (JSON.parse(shown.stdout) as Array<{ address: string }>)[0].address;
      const mac = await request('POST', '/macs', {
        token,
        body: {
          managing_account: customer.account,
          consuming_account: customer.account,
          address: customer.mac,
        },
      });
      assert.equal(mac.status, 201, mac.text);
      const created = await request('POST', '/network-service-configs', {
        token,
        body: {
          type: 'exchange_lan',
          network_service: FRA_LAN,
          ...owned(customer),
          role_assignments: customer.roles.config,
          connection: customer.connection,
          vlan_config: { vlan_type: 'port' },
          macs: [mac.body.id],
          asns: [customer.asn],
          listed: true,
        },
      });
      assert.equal(created.status, 201, created.text);
      customer.config = created.body.id as string;
      const ips = (await request('GET', `/ips?network_service_config=${customer.config}`, { token }))
        .body as Array<{ id: string; version: number; address: string }>;
      const v4 = ips.find((ip) => ip.version === 4)!;
      customer.address = v4.address;
      const session = await request('POST', '/network-feature-configs', {
        token,
        body: {
          type: 'route_server',
          network_feature: RS,
          network_service_config: customer.config,
          ...owned(customer),
          role_assignments: customer.roles.session,
          asn: customer.asn,
          as_set_v4: `AS${customer.asn}:AS-CUSTOMERS`,
          session_mode: 'public',
          bgp_session_type: 'passive',
          ip: v4.id,
          max_prefix_v4: 100,
        },
      });
      assert.equal(session.status, 201, session.text);
      customer.session = session.body.id as string;
    }
    for (const { token, config, session } of customers) {
      await reaches(token, `/network-service-configs/${config}`, 'production');
      await reaches(token, `/network-feature-configs/${session}`, 'production');
    }

    // Each customer's router: its LAN address on the customer side, and a BIRD announcing a prefix.
    for (const customer of customers) {
      const end = linkOf(customer.device, customer.port).customerEnd;
      await inNamespace(customer, ['ip', 'addr', 'add', `${customer.address}/24`, 'dev', end]);
      customer.speaker = await startSpeaker({
        namespace: namespaceOf(customer),
        dir: path.join(root, `member-${customer.asn}`),
        asn: customer.asn,
        address: customer.address,
        routeServer: { address: RS_ADDRESS, asn: 64500 },
        announce: [customer.prefix, customer.invalid ?? []].flat().map((prefix) => ({ prefix })),
      });
    }

    const servers = new BirdRouteServers(fabric!.birdDir, catalogueRouteServers(stack().db.fabricCatalogue));
    const states = await eventually(
      'both sessions Established on the route server',
      async () => {
        const found = await servers.readSessionStates(RS, [a.session, b.session]);
        return found.length === 2 && found.every((state) => state.bgpState === 'Established')
          ? found
          : undefined;
      },
      60_000,
      500,
    );
    process.stdout.write(
      `      ${RS}: ${states.map((state) => `${state.protocol} ${state.state} ${state.bgpState}, ${state.importedRoutes} imported`).join('; ')}\n`,
    );
    // The route server's BIRD holds the cache's ROAs.
    const rsBirdc = async (args: string[]) =>
      (await runProgram('birdc', ['-s', path.join(servers.directoryOf(RS), 'bird.ctl'), ...args])).stdout;
    await eventually(
      "the route server holding the RPKI cache's ROAs",
      async () => {
        const roas = await rsBirdc(['show', 'route', 'table', 'roa_v4']);
        return VRPS.every(({ prefix, maxLength, asn }) => roas.includes(`${prefix}-${maxLength} AS${asn}`))
          ? true
          : undefined;
      },
      30_000,
      500,
    );
    /** What each customer's BIRD learned from the route server, and whether an invalid route ever showed. */
    const learned = new Map<Customer, string>();
    const invalidSeen: string[] = [];
    for (const [learner, announcer] of [
      [a, b],
      [b, a],
    ]) {
      const routes = await eventually(
        `${learner.asn} learning ${announcer.prefix} from the route server`,
        async () => {
          const shown = await birdc(learner, ['show', 'route', 'protocol', 'routeserver', 'all']);
          if (announcer.invalid && shown.includes(announcer.invalid)) invalidSeen.push(shown);
          return shown.includes(announcer.prefix) ? shown : undefined;
        },
        30_000,
        500,
      );
      assert.ok(routes.includes(`via ${announcer.address}`), `the next hop is the announcer: ${routes}`);
      learned.set(learner, routes);
      process.stdout.write(
        `      AS${learner.asn} learned from ${RS}:\n${routes.replace(/^/gm, '        ')}\n`,
      );
    }
    assert.match(routeOf(learned.get(b)!, a.prefix), communityLine(RPKI_VALID), 'RPKI valid, tagged so');
    assert.match(routeOf(learned.get(a)!, b.prefix), communityLine(RPKI_NOT_FOUND), 'no ROA: not found');
    // The invalid route reached the route server and stopped there: received, never passed on.
    const received = await rsBirdc(['show', 'route', 'import', 'table', `${protocolName(a.session)}.ipv4`]);
    assert.ok(received.includes(a.invalid!), `the route server received ${a.invalid}: ${received}`);
    const routesFor = (prefix: string) => ['show', 'route', 'where', 'net', '=', prefix];
    assert.ok(
      (await rsBirdc(routesFor(a.prefix))).includes(a.prefix),
      'the route server has the valid route',
    );
    assert.ok(!(await rsBirdc(routesFor(a.invalid!))).includes(a.invalid!), 'but not the invalid one');
    assert.deepEqual(invalidSeen, [], `AS${b.asn} never learns the RPKI-invalid ${a.invalid}`);
    assert.ok(!(await birdc(b, routesFor(a.invalid!))).includes(a.invalid!), `nor does AS${b.asn} now`);
    assert.equal(await pings(a, b), true, 'the customers reach each other across the two devices');
    assert.equal(await pings(b, a), true);

    // The IX-F member export, from the live data: both members with their LAN addresses.
    const exported = (await (await fetch(memberExportUrl())).json()) as {
      member_list: Array<{
        asnum: number;
        connection_list: Array<{ vlan_list: Array<{ ipv4?: { address: string; routeserver?: boolean } }> }>;
      }>;
    };
    assertMemberExport(exported);
    for (const customer of customers) {
      const member = exported.member_list.find((one) => one.asnum === customer.asn);
      const addresses = member?.connection_list.flatMap((c) => c.vlan_list.map((v) => v.ipv4));
      assert.deepEqual(
        addresses?.find((ipv4) => ipv4?.address === customer.address),
        {
          address: customer.address,
          routeserver: true,
          as_macro: `AS${customer.asn}:AS-CUSTOMERS`,
          max_prefix: 100,
        },
        `AS${customer.asn} in the export: ${JSON.stringify(member)}`,
      );
    }

    // A route server's BIRD killed outright is started again by the fabric's supervision, with the
    // sessions it had.
    const killed = (await servers.pid(RS))!;
    process.kill(killed, 'SIGKILL');
    await eventually('the killed BIRD gone', async () =>
      (await servers.pid(RS)) === null ? true : undefined,
    );
    const supervision = activitiesFor(stack().db, { ...stack().config, ...workerSettings });
    const round = await supervision.superviseDevices();
    assert.deepEqual(round.restarted, [`bird of ${RS}`], JSON.stringify(round));
    assert.notEqual(await servers.pid(RS), killed);
    await eventually(
      'both sessions Established again',
      async () => {
        const found = await servers.readSessionStates(RS, [a.session, b.session]);
        return found.every((state) => state.bgpState === 'Established') ? true : undefined;
      },
      60_000,
      500,
    );

    // A MAC the config does not list is dropped at the port; the listed one passes again.
    const link = ['-n', namespaceOf(a), 'link', 'set', 'dev', linkOf(a.device, a.port).customerEnd];
    await runProgram('ip', [...link, 'address', '02:00:5e:00:53:99']);
    try {
      assert.equal(await pings(a, b), false, 'a MAC the config does not list is dropped');
    } finally {
      await runProgram('ip', [...link, 'address', a.mac]);
    }
    assert.equal(await pings(a, b), true, 'the listed MAC passes again');

    // A point-to-point circuit from Spree to Thames, untagged on their second connections: it
    // carries a ping between its two ends, and nothing of the exchange LAN's sees its frames.
    const circuit = await request('POST', '/network-services', {
      token: a.token,
      body: {
        type: 'p2p_vc',
        ...owned(a),
        product_offering: 'po-p2p-vc-fra',
        joining_member_account: THAMES,
        capacity: 1000,
      },
    });
    assert.equal(circuit.status, 201, circuit.text);
    const ends: Array<{ namespace: string; end: string; address: string }> = [];
    for (const [customer, address] of [
      [a, '10.99.0.1'],
      [b, '10.99.0.2'],
    ] as const) {
      const created = await request('POST', '/network-service-configs', {
        token: customer.token,
        body: {
          type: 'p2p_vc',
          network_service: circuit.body.id,
          ...owned(customer),
          role_assignments: [customer.roles.config[0]],
          connection: customer.circuitEnd.connection,
          vlan_config: { vlan_type: 'port' },
        },
      });
      assert.equal(created.status, 201, created.text);
      await reaches(customer.token, `/network-service-configs/${created.body.id}`, 'production');
      const link = linkOf(customer.circuitEnd.device, customer.circuitEnd.port);
      await runProgram('ip', ['-n', link.namespace, 'addr', 'add', `${address}/24`, 'dev', link.customerEnd]);
      ends.push({ namespace: link.namespace, end: link.customerEnd, address });
    }
    await reaches(a.token, `/network-services/${circuit.body.id}`, 'production');
    // Spree's exchange-LAN router takes an address of the circuit's subnet too, and hears nothing.
    await inNamespace(a, ['ip', 'addr', 'add', '10.99.0.3/24', 'dev', linkOf(a.device, a.port).customerEnd]);
    const answers = (namespace: string, address: string) =>
      runProgram('ip', ['netns', 'exec', namespace, 'ping', '-c', '2', '-W', '1', address]).then(
        () => true,
        () => false,
      );
    assert.equal(await answers(ends[0].namespace, ends[1].address), true, 'the circuit carries a ping');
    assert.equal(await answers(ends[1].namespace, ends[0].address), true);
    assert.equal(
      await answers(ends[0].namespace, '10.99.0.3'),
      false,
      'the exchange LAN is not on the circuit',
    );
    assert.equal(
      await answers(namespaceOf(a), ends[1].address),
      false,
      'nor the circuit on the exchange LAN',
    );

    // One customer cancels its access over HTTP: its session leaves the route server's BIRD with it,
    // and it is out of reach.
    const going = await request('DELETE', `/network-service-configs/${b.config}`, { token: b.token });
    assert.equal(going.status, 202, going.text);
    for (const workflowId of [configWorkflowId(b.config), featureConfigWorkflowId(b.session)]) {
      const handle = stack().temporal.client.workflow.getHandle(workflowId);
      await eventually(`${workflowId} waiting for its day`, async () =>
        String(await handle.query('provisioningStep')).startsWith('decommissioning on') ? true : undefined,
      );
      await handle.signal('decommissionNow');
    }
    await reaches(b.token, `/network-service-configs/${b.config}`, 'decommissioned');
    await reaches(b.token, `/network-feature-configs/${b.session}`, 'decommissioned');
    const config = readFileSync(path.join(servers.directoryOf(RS), 'bird.conf'), 'utf8');
    assert.ok(!config.includes(b.session), "the session is gone from the route server's configuration");
    assert.ok(!config.includes(protocolName(b.session)));
    assert.ok(config.includes(protocolName(a.session)), 'the other session stays');
    assert.equal(await pings(a, b), false, 'the customer whose access went is out of reach');
    const [kept] = await servers.readSessionStates(RS, [a.session]);
    assert.equal(kept.bgpState, 'Established', "the remaining customer's session stays up");
  });
});
