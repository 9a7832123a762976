import assert from 'node:assert/strict';
import { provisioningWorkflowId } from '../../db/repositories/connection-repository';
import { configWorkflowId, serviceWorkflowId } from '../../db/repositories/network-service-config-repository';
import { request } from './http';
import { readEvents } from './pages';
import { unreadableReferences } from './references';
import type { RoundTrip } from './round-trip';
import { assertProperties, assertRefused, del, GOING, latest, RS4, sql, THAMES, today } from './round-trip';

/**
 * The round trip's destroy: what live resources stand on is refused, then everything goes in reverse
 * dependency order, on its policy's day, and nothing of it is left behind. Registered inside the
 * round trip's describe (test/integration/client-round-trips.test.ts), after its apply.
 */
export function describeTearingDown(scope: RoundTrip): void {
  let spree: string;
  let thames: string;
  before(() => ({ spree, thames } = scope));
  const {
    lab,
    cloud,
    ids,
    held,
    days,
    path,
    read,
    reaches,
    endsNow,
    policyOf,
    cancelled,
    spreeConfigs,
    thamesConfigs,
    services,
    assignments,
  } = scope;

  it('refuses to take away what live resources stand on, and changes nothing', async () => {
    assertRefused(await del(spree, `/macs/${ids.mac}`, 'none'), [ids.lan, ids.mp2mpSpree], {
      remoteType: 'network-service-configs',
    });
    assertRefused(
      await del(spree, path.connection(ids.bundle), null),
      [ids.lan, ids.p2pA, ids.mp2mpSpree, ids.nimbus1, ids.stratusConfig],
      { remoteType: 'network-service-configs' },
    );
    assertRefused(await del(spree, `/member-joining-rules/${ids.rule}`, 'none'), [ids.mp2mpThames], {
      remoteType: 'network-service-configs',
    });
    assertRefused(
      await del(spree, `/role-assignments/${ids.implementation}`, 'none'),
      [ids.bundle, ids.single],
      { remoteType: 'connections', property: 'role_assignments' },
    );
    assertRefused(await del(spree, `/contacts/${ids.peeringContact}`, 'none'), [ids.lan], {
      remoteType: 'network-service-configs',
      property: 'role_assignments',
    });
    assert.equal((await read(spree, `/macs/${ids.mac}`)).id, ids.mac);
    assert.equal((await read(spree, path.connection(ids.bundle))).state, 'production');
    assert.equal((await read(spree, `/member-joining-rules/${ids.rule}`)).id, ids.rule);
    assert.equal((await read(spree, `/role-assignments/${ids.implementation}`)).id, ids.implementation);
    assert.equal((await read(spree, `/contacts/${ids.peeringContact}`)).id, ids.peeringContact);
  });

  it('destroys the route-server session and the configs, each going on its policy’s day', async () => {
    const session = await del(spree, path.session(ids.session), 'none');
    assert.equal(session.status, 202, session.text);
    assert.equal(session.body.state, 'decommission_requested');
    for (const config of spreeConfigs()) {
      const going = await cancelled(spree, path.config(config), null);
      days.set(config, going.decommission_at!);
    }
    // A session has no notice period of its own: it goes at once.
    await reaches(spree, path.session(ids.session), 'decommissioned');
    assert.deepEqual(await lab().readBgpSessions(RS4, [ids.session]), []);
  });

  it('deletes the MACs once the configs using them are going; they leave their lists and stay on the device until they are gone', async () => {
    for (const [mac, address] of [
      [ids.mac, ids.macAddress],
      [ids.secondMac, ids.secondMacAddress],
    ]) {
      const deleted = await del(spree, `/macs/${mac}`, 'none');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.id, mac);
      assert.equal(deleted.body.address, address);
      assert.equal((await request('GET', `/macs/${mac}`, { token: spree })).status, 404);
    }
    for (const config of [ids.lan, ids.mp2mpSpree]) {
      const going = await read(spree, path.config(config));
      assert.equal(going.state, 'decommission_requested');
      assert.deepEqual(going.macs, [], `${config} no longer names the MACs`);
    }
    const [carried] = await lab().readServices(held.devices.get(ids.bundle)!, [ids.lan]);
    assert.deepEqual(
      [...(carried?.macs ?? [])].sort(),
      [ids.macAddress, ids.secondMacAddress].sort(),
      'the device filters the MACs until the config is gone',
    );
  });

  it('deletes the member joining rule once the member has left the service', async () => {
    const left = await cancelled(thames, path.config(ids.mp2mpThames), null);
    days.set(ids.mp2mpThames, left.decommission_at!);
    const deleted = await del(spree, `/member-joining-rules/${ids.rule}`, 'none');
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.id, ids.rule);
    assert.equal(deleted.body.consuming_account, THAMES);
    assert.equal((await request('GET', `/member-joining-rules/${ids.rule}`, { token: spree })).status, 404);
    assert.deepEqual((await read(spree, path.service(ids.mp2mp))).member_joining_rules, []);
  });

  it('decommissions the services on their policy’s day, with the live configs of the other side', async () => {
    for (const service of services()) {
      const going = await cancelled(spree, path.service(service), {});
      days.set(service, going.decommission_at!);
      assert.ok(
        !(going.status ?? []).some((entry) => entry.tag === 'waiting_for_configs'),
        `${service} does not wait for configs once going: ${JSON.stringify(going.status)}`,
      );
    }
    const bSide = await read(thames, path.config(ids.p2pB));
    assert.equal(bSide.state, 'decommission_requested');
    assert.equal(bSide.decommission_at, days.get(ids.p2p), 'the B side goes on the circuit’s day');
    days.set(ids.p2pB, bSide.decommission_at!);
    // What was going already keeps its day.
    for (const config of spreeConfigs()) {
      const going = await read(spree, path.config(config));
      assert.equal(going.state, 'decommission_requested');
      assert.equal(going.decommission_at, days.get(config));
    }
  });

  it('destroys the connections as the provider does: their port reservations (a bundle’s at once), then a read of each connection; each goes once, no earlier than its configs', async () => {
    const onBundle = [ids.lan, ids.p2pA, ids.mp2mpSpree, ids.nimbus1, ids.stratusConfig];
    const last = latest(onBundle.map((config) => days.get(config)));
    const policy = await policyOf(spree, path.connection(ids.bundle));
    assert.equal(policy.decommission_at, last, 'the policy waits for the configs');
    assert.ok(policy.charged_until >= policy.decommission_at);
    const early = await del(spree, path.connection(ids.bundle), { decommission_at: today() });
    assert.equal(early.status, 400, early.text);
    assert.match(early.body.type as string, /cancellation-policy-error/, early.text);
    assert.equal(early.body.decommission_at, policy.decommission_at);
    assert.equal(early.body.charged_until, policy.charged_until);
    assertProperties(early, 'decommission_at');
    assert.equal((await read(spree, path.connection(ids.bundle))).state, 'production');

    // The bundle's two reservations at once, with the body the provider sends.
    const given = await Promise.all(
      [ids.firstReservation, ids.extraReservation].map((reservation) =>
        del(spree, path.reservation(reservation), null),
      ),
    );
    for (const answer of given) {
      assert.equal(answer.status, 202, answer.text);
      assert.equal(answer.body.state, 'decommission_requested', answer.text);
    }
    // The connection's own destroy only reads it: it goes with its last port, on its policy's day.
    const bundle = await read(spree, path.connection(ids.bundle));
    assert.equal(bundle.state, 'decommission_requested');
    assert.equal(bundle.decommission_at, policy.decommission_at);
    assert.equal(bundle.charged_until, policy.charged_until);
    const going = (
      await readEvents<{ payload: { id?: string; to?: string } }>(spree, '?type=connection.state_changed')
    ).filter((event) => event.payload.id === ids.bundle && event.payload.to === 'decommission_requested');
    assert.equal(going.length, 1, 'the bundle is asked to go once');

    // A connection of one port goes with its one reservation, by the connection's policy.
    const singles = [
      [spree, ids.single, [ids.nimbus2]],
      [thames, ids.thamesConnection, thamesConfigs()],
    ] as const;
    for (const [token, connection, configs] of singles) {
      const { port_reservations } = await read(token, path.connection(connection));
      assert.equal(port_reservations!.length, 1);
      const [reservation] = port_reservations!;
      const ownPolicy = await policyOf(token, path.connection(connection));
      assert.deepEqual(await policyOf(token, path.reservation(reservation)), ownPolicy);
      const answer = await del(token, path.reservation(reservation), null);
      assert.equal(answer.status, 202, answer.text);
      assert.equal(answer.body.state, 'decommission_requested', answer.text);
      assert.equal(answer.body.decommission_at, ownPolicy.decommission_at);
      const after = await read(token, path.connection(connection));
      assert.equal(after.state, 'decommission_requested');
      assert.equal(after.decommission_at, ownPolicy.decommission_at);
      assert.ok(String(after.decommission_at) >= latest(configs.map((config) => days.get(config))));
    }
  });

  it('deletes the role assignments and contacts once what names them is going, leaving no id of theirs behind', async () => {
    for (const assignment of assignments()) {
      const deleted = await del(spree, `/role-assignments/${assignment}`, 'none');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.id, assignment);
      assert.equal((await request('GET', `/role-assignments/${assignment}`, { token: spree })).status, 404);
    }
    for (const contact of [ids.opsContact, ids.peeringContact]) {
      const deleted = await del(spree, `/contacts/${contact}`, 'none');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.id, contact);
      assert.equal((await request('GET', `/contacts/${contact}`, { token: spree })).status, 404);
    }
    const naming = [
      path.connection(ids.bundle),
      path.connection(ids.single),
      path.session(ids.session),
      ...spreeConfigs().map(path.config),
    ];
    for (const at of naming)
      assert.deepEqual(
        (await read(spree, at)).role_assignments!.filter((id) => assignments().includes(id)),
        [],
        `${at} no longer names the deleted role assignments`,
      );
    for (const at of naming) {
      const { state } = await read(spree, at);
      assert.ok(GOING.includes(state), `${at} is ${state}`);
    }
  });

  it('ends the configs and services decommissioned: VLANs, addresses and cloud circuits released, the devices clear', async () => {
    for (const config of spreeConfigs()) await endsNow(spree, path.config(config), configWorkflowId(config));
    for (const config of thamesConfigs())
      await endsNow(thames, path.config(config), configWorkflowId(config));
    for (const service of services()) await endsNow(spree, path.service(service), serviceWorkflowId(service));

    const configs = [...spreeConfigs(), ...thamesConfigs()];
    const vlans = await sql<{ id: string; vlan_held: number }>(
      'SELECT id, vlan_held FROM network_service_configs WHERE id IN (:configs)',
      { configs },
    );
    assert.equal(vlans.length, configs.length);
    assert.deepEqual(
      vlans.filter((config) => Number(config.vlan_held) !== 0).map((config) => config.id),
      [],
      'every VLAN is released',
    );
    const addresses = await sql<{
      id: string;
      released_at: Date | null;
      network_service_config: string | null;
    }>('SELECT id, released_at, network_service_config FROM ip_addresses WHERE id IN (:ips)', {
      ips: held.ips,
    });
    assert.equal(addresses.length, 2);
    for (const address of addresses) {
      assert.ok(address.released_at, `${address.id} is released`);
      assert.equal(address.network_service_config, null);
    }
    for (const service of [ids.nimbus, ids.stratus]) {
      const { provider_ref } = await read(spree, path.service(service));
      const circuit = await cloud().readCircuit(provider_ref!);
      assert.equal(circuit?.state, 'released', `${service}: the provider let the circuit go`);
      assert.deepEqual(circuit?.attachments, []);
    }
    const carried = [
      [ids.bundle, [ids.lan, ids.p2pA, ids.mp2mpSpree, ids.nimbus1, ids.stratusConfig]],
      [ids.single, [ids.nimbus2]],
      [ids.thamesConnection, thamesConfigs()],
    ] as const;
    for (const [connection, onIt] of carried)
      assert.deepEqual(
        await lab().readServices(held.devices.get(connection)!, [...onIt]),
        [],
        `nothing of ${connection}’s configs on its device`,
      );
  });

  it('ends the connections decommissioned after their configs, every port back with the exchange', async () => {
    const connections = [
      [spree, ids.bundle],
      [spree, ids.single],
      [thames, ids.thamesConnection],
    ] as const;
    for (const [token, connection] of connections) {
      const done = await endsNow(token, path.connection(connection), provisioningWorkflowId(connection));
      assert.deepEqual(done.ports, []);
    }
    for (const reservation of [ids.firstReservation, ids.extraReservation])
      assert.equal((await read(spree, path.reservation(reservation))).state, 'decommissioned');
    const ports = await sql<{ id: string; connection: string | null }>(
      'SELECT id, connection FROM ports WHERE id IN (:ports) ORDER BY id',
      { ports: held.ports },
    );
    assert.equal(ports.length, held.ports.length);
    assert.deepEqual(
      ports.filter((port) => port.connection !== null),
      [],
      'every port is back with the exchange',
    );
  });

  it('leaves no reference dangling, and what was deleted is gone', async () => {
    const spreeSide = [
      path.connection(ids.bundle),
      path.connection(ids.single),
      path.reservation(ids.firstReservation),
      path.reservation(ids.extraReservation),
      path.session(ids.session),
      ...spreeConfigs().map(path.config),
      ...services().map(path.service),
    ];
    const thamesSide = [
      path.connection(ids.thamesConnection),
      ...thamesConfigs().map(path.config),
      path.service(ids.p2p),
      path.service(ids.mp2mp),
    ];
    // What the customers may no longer see (a port back with the exchange, a released address, a
    // private service that admits them no more) may stay named; nothing deleted may.
    const ours = await unreadableReferences(spree, spreeSide);
    const theirs = await unreadableReferences(thames, thamesSide);
    assert.deepEqual([...ours.dangling, ...theirs.dangling], []);
    for (const gone of [
      ...assignments().map((id) => `/role-assignments/${id}`),
      `/contacts/${ids.opsContact}`,
      `/contacts/${ids.peeringContact}`,
      `/macs/${ids.mac}`,
      `/member-joining-rules/${ids.rule}`,
    ])
      assert.equal((await request('GET', gone, { token: spree })).status, 404, gone);
  });
}
