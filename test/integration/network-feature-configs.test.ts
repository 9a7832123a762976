import assert from 'node:assert/strict';
import { LabDriver } from '../../drivers/lab/driver';
import { featureConfigWorkflowId } from '../../db/repositories/network-feature-config-repository';
import { configWorkflowId } from '../../db/repositories/network-service-config-repository';
import { settleConnections } from '../support/connections';
import {
  configOrder,
  liveConnection,
  orderConnection,
  propertyNames,
  reaches,
  SPREE,
} from '../support/exchange-lan';
import { recordHistory } from '../support/histories';
import { login, request } from '../support/http';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const RS4 = 'nf-rs1-fra';
const RS6 = 'nf-rs2-fra';

interface Config {
  id: string;
  state: string;
  ips: string[];
  network_feature_configs: string[];
  status: Array<{ tag: string; attrs: Record<string, unknown> }>;
}

describe('route-server sessions (network feature configs)', function () {
  this.timeout(120_000);
  after(() => settleConnections());
  let token: string;
  const lab = () => new LabDriver(stack().db.sequelize);

  before(async () => {
    token = (await login('customer', 0)).accessToken;
  });

  /** An exchange-LAN config of Spree's, with its IPv4 and IPv6 address ids. */
  const config = async () => {
    const created = await request('POST', '/network-service-configs', {
      token,
      body: configOrder(await liveConnection(token)),
    });
    assert.equal(created.status, 201, created.text);
    const ips = (await request('GET', `/ips?network_service_config=${created.body.id}`, { token }))
      .body as Array<{
      id: string;
      version: number;
      address: string;
    }>;
    return {
      id: created.body.id as string,
      v4: ips.find((ip) => ip.version === 4)!,
      v6: ips.find((ip) => ip.version === 6)!,
    };
  };
  const session = (configId: string, ip: string, extra: Record<string, unknown> = {}) => ({
    type: 'route_server',
    network_feature: RS4,
    network_service_config: configId,
    managing_account: SPREE,
    consuming_account: SPREE,
    billing_account: SPREE,
    role_assignments: ['ra-spree-networks-noc'],
    asn: 64511,
    as_set_v4: 'AS-SPREE@RIPE',
    session_mode: 'public',
    bgp_session_type: 'passive',
    ip,
    max_prefix_v4: 100,
    ...extra,
  });

  it('brings up sessions with both route servers, each on the route server as ordered', async () => {
    const { id, v4, v6 } = await config();
    const first = await request('POST', '/network-feature-configs', { token, body: session(id, v4.id) });
    assert.equal(first.status, 201, first.text);
    const second = await request('POST', '/network-feature-configs', {
      token,
      body: session(id, v6.id, {
        network_feature: RS6,
        as_set_v4: null,
        as_set_v6: 'AS-SPREE-V6@RIPE',
        max_prefix_v4: null,
        max_prefix_v6: 20,
        flags: [{ name: 'no-export', enabled: true }],
      }),
    });
    assert.equal(second.status, 201, second.text);
    await reaches(token, `/network-feature-configs/${first.body.id}`, 'production');
    await reaches(token, `/network-feature-configs/${second.body.id}`, 'production');
    await recordHistory(
      'provisionNetworkFeatureConfig',
      'production',
      featureConfigWorkflowId(first.body.id as string),
    );
    const [held4] = await lab().readBgpSessions(RS4, [first.body.id]);
    assert.deepEqual(
      { ...held4 },
      {
        name: first.body.id,
        peerAsn: 64511,
        peerAddress: v4.address,
        passive: true,
        password: null,
        asSet: 'AS-SPREE@RIPE',
        maxPrefix: 100,
        insertIxpAsn: true,
        // The route server's mandatory flag is on without being named.
        flags: ['rpki-strict'],
      },
    );
    const [held6] = await lab().readBgpSessions(RS6, [second.body.id]);
    assert.equal(held6.peerAddress, v6.address);
    assert.deepEqual(held6.flags, ['no-export', 'rpki-strict']);
    const read = (await request('GET', `/network-service-configs/${id}`, { token })).body as Config;
    assert.deepEqual(read.network_feature_configs, [first.body.id, second.body.id].sort());
    const listed = await request('GET', `/network-feature-configs?service_config=${id}`, { token });
    assert.equal((listed.body as unknown[]).length, 2);
    // The sessions show the flags in force: what they name, and the mandatory flag on.
    const flagsOf = (sessionId: unknown) =>
      (listed.body as Array<{ id: string; flags: unknown }>).find((s) => s.id === sessionId)?.flags;
    assert.deepEqual(first.body.flags, [{ name: 'rpki-strict', enabled: true }]);
    assert.deepEqual(flagsOf(first.body.id), [{ name: 'rpki-strict', enabled: true }]);
    assert.deepEqual(flagsOf(second.body.id), [
      { name: 'no-export', enabled: true },
      { name: 'rpki-strict', enabled: true },
    ]);
    const own = await request('GET', `/network-feature-configs/${second.body.id}`, { token });
    assert.deepEqual(own.body.flags, flagsOf(second.body.id));
  });

  it('refuses sessions that break a rule, naming the property', async () => {
    const { id, v4, v6 } = await config();
    const cases: Array<[string, Record<string, unknown>]> = [
      ['ip', { ip: v6.id }],
      ['ip', { ip: 'ip-nowhere' }],
      ['asn', { asn: 64999 }],
      ['session_mode', { session_mode: 'collector' }],
      ['bgp_session_type', { bgp_session_type: 'active' }],
      ['as_set_v4', { as_set_v4: null }],
      ['as_set_v4', { as_set_v4: 'not an as-set' }],
      ['flags.0', { flags: [{ name: 'blackholing', enabled: true }] }],
      ['flags.0', { flags: [{ name: 'rpki-strict', enabled: false }] }],
      ['network_feature', { network_feature: 'nf-rs1-ams' }],
      ['network_service_config', { network_service_config: 'nsc-nowhere' }],
      ['role_assignments', { role_assignments: [] }],
    ];
    for (const [property, extra] of cases) {
      const refused = await request('POST', '/network-feature-configs', {
        token,
        body: session(id, v4.id, extra),
      });
      assert.equal(refused.status, 400, `${property}: ${refused.text}`);
      assert.ok(propertyNames(refused).includes(property), `${property}: ${refused.text}`);
    }
    const first = await request('POST', '/network-feature-configs', { token, body: session(id, v4.id) });
    assert.equal(first.status, 201, first.text);
    const twin = await request('POST', '/network-feature-configs', { token, body: session(id, v4.id) });
    assert.equal(twin.status, 400);
    assert.equal(twin.body.conflicts[0].resource_id, first.body.id);
  });

  it('holds a config of a service with a required route server until it has a session with it', async () => {
    const { db } = stack();
    await db.sequelize.query('UPDATE network_features SET required = TRUE WHERE id = :id', {
      replacements: { id: RS4 },
    });
    try {
      const { id, v4 } = await config();
      const waiting = await eventually('the config waiting for its session', async () => {
        const read = (await request('GET', `/network-service-configs/${id}`, { token })).body as Config;
        return read.status.find((entry) => entry.tag === 'feature_config_missing') ? read : undefined;
      });
      assert.equal(waiting.state, 'testing');
      assert.deepEqual(waiting.status[0].attrs.network_features, [RS4]);
      const created = await request('POST', '/network-feature-configs', { token, body: session(id, v4.id) });
      assert.equal(created.status, 201, created.text);
      await reaches(token, `/network-service-configs/${id}`, 'production');
      await reaches(token, `/network-feature-configs/${created.body.id}`, 'production');
    } finally {
      await db.sequelize.query('UPDATE network_features SET required = FALSE WHERE id = :id', {
        replacements: { id: RS4 },
      });
    }
  });

  it('changes a session through production_change_pending and decommissions it with its config', async () => {
    const { id, v4 } = await config();
    // A password a route server could not render is refused at the door, not on the device.
    for (const password of ['se"krit', "se'krit", 'se krit', 'x'.repeat(81)]) {
      const refused = await request('POST', '/network-feature-configs', {
        token,
        body: { ...session(id, v4.id), password },
      });
      assert.equal(refused.status, 400, refused.text);
      assert.ok(
        (refused.body.properties as Array<{ name: string }>).some((p) => p.name === 'password'),
        refused.text,
      );
    }
    const created = await request('POST', '/network-feature-configs', { token, body: session(id, v4.id) });
    const sessionId = created.body.id as string;
    await reaches(token, `/network-feature-configs/${sessionId}`, 'production');
    const quoted = await request('PATCH', `/network-feature-configs/${sessionId}`, {
      token,
      body: { password: 'se"krit' },
    });
    assert.equal(quoted.status, 400, quoted.text);
    const patched = await request('PATCH', `/network-feature-configs/${sessionId}`, {
      token,
      body: { max_prefix_v4: 250, password: 'sekrit-md5' },
    });
    assert.equal(patched.status, 202, patched.text);
    assert.equal(patched.body.state, 'production_change_pending');
    await reaches(token, `/network-feature-configs/${sessionId}`, 'production');
    const [held] = await lab().readBgpSessions(RS4, [sessionId]);
    assert.equal(held.maxPrefix, 250);
    assert.equal(held.password, 'sekrit-md5');
    await recordHistory('provisionNetworkFeatureConfig', 'change', featureConfigWorkflowId(sessionId));
    const moved = await request('PATCH', `/network-feature-configs/${sessionId}`, {
      token,
      body: { network_feature: RS6 },
    });
    assert.deepEqual(propertyNames(moved), ['network_feature']);

    await reaches(token, `/network-service-configs/${id}`, 'production');
    const deleted = await request('DELETE', `/network-service-configs/${id}`, { token });
    assert.equal(deleted.status, 202, deleted.text);
    const going = (await request('GET', `/network-feature-configs/${sessionId}`, { token })).body;
    assert.equal(going.state, 'decommission_requested', 'the session goes with its config');
    assert.equal(going.decommission_at, deleted.body.decommission_at);
    for (const workflowId of [configWorkflowId(id), featureConfigWorkflowId(sessionId)]) {
      const handle = stack().temporal.client.workflow.getHandle(workflowId);
      await eventually('the workflow waiting for the day', async () =>
        String(await handle.query('provisioningStep')).startsWith('decommissioning on') ? true : undefined,
      );
      await handle.signal('decommissionNow');
    }
    await reaches(token, `/network-feature-configs/${sessionId}`, 'decommissioned');
    await recordHistory('provisionNetworkFeatureConfig', 'decommission', featureConfigWorkflowId(sessionId));
    await reaches(token, `/network-service-configs/${id}`, 'decommissioned');
    assert.deepEqual(await lab().readBgpSessions(RS4, [sessionId]), []);
  });

  it('puts a session the route server refuses in error, and configures it again when an operator asks', async () => {
    const { id, v4 } = await config();
    await reaches(token, `/network-service-configs/${id}`, 'production');
    await lab().store.injectFault({
      device: RS4,
      operation: 'commit',
      code: 'rejected',
      message: 'commit refused: BGP table locked',
    });
    const created = await request('POST', '/network-feature-configs', { token, body: session(id, v4.id) });
    assert.equal(created.status, 201, created.text);
    const sessionId = created.body.id as string;
    const failed = (await reaches(
      token,
      `/network-feature-configs/${sessionId}`,
      'error',
    )) as unknown as Config;
    assert.equal(failed.status[0].tag, 'configuration_failed');
    await stack()
      .temporal.client.workflow.getHandle(featureConfigWorkflowId(sessionId))
      .signal('retryProvisioning');
    await reaches(token, `/network-feature-configs/${sessionId}`, 'production');
    assert.equal((await lab().readBgpSessions(RS4, [sessionId])).length, 1);
    await recordHistory('provisionNetworkFeatureConfig', 'error-retry', featureConfigWorkflowId(sessionId));
  });

  it('hands a session the route server does not hold as configured to an operator, and goes live once retested', async () => {
    const { id, v4 } = await config();
    await reaches(token, `/network-service-configs/${id}`, 'production');
    // A slow route server leaves time to change the session by hand between its commit and its reading.
    await lab().store.setLatency(RS4, 1_000);
    try {
      const created = await request('POST', '/network-feature-configs', { token, body: session(id, v4.id) });
      assert.equal(created.status, 201, created.text);
      const sessionId = created.body.id as string;
      const byHand = (maxPrefix: number) =>
        stack().db.sequelize.query(
          'UPDATE lab_bgp_sessions SET max_prefix = :maxPrefix WHERE device = :device AND name = :sessionId',
          { replacements: { maxPrefix, device: RS4, sessionId } },
        );
      // Someone changes the session on the route server as soon as it is there, until the test notices.
      const stuck = await eventually(
        'the session waiting for an operator',
        async () => {
          await byHand(7);
          const now = (await request('GET', `/network-feature-configs/${sessionId}`, { token }))
            .body as Config;
          return now.state === 'operator' ? now : undefined;
        },
        30_000,
        50,
      );
      assert.equal(stuck.status[0].tag, 'route_server_mismatch');
      // The operator puts the route server right and asks for another test.
      await byHand(100);
      await stack()
        .temporal.client.workflow.getHandle(featureConfigWorkflowId(sessionId))
        .signal('retryTesting');
      await reaches(token, `/network-feature-configs/${sessionId}`, 'production');
      await recordHistory(
        'provisionNetworkFeatureConfig',
        'operator-retest',
        featureConfigWorkflowId(sessionId),
      );
    } finally {
      await lab().store.setLatency(RS4, null);
    }
  });

  it('cancels a session ordered while its config waits for its connection', async () => {
    // In Amsterdam the subscriber makes the cross-connect: the connection waits for its LOA.
    const connection = await orderConnection(token, {
      product_offering: 'po-connection-ams-10g',
      subscriber_side_demarcs: [],
    });
    const ordered = await request('POST', '/network-service-configs', {
      token,
      body: configOrder(connection, { network_service: 'ns-exchange-lan-ams' }),
    });
    assert.equal(ordered.status, 201, ordered.text);
    const configId = ordered.body.id as string;
    const ips = (await request('GET', `/ips?network_service_config=${configId}`, { token })).body as Array<{
      id: string;
      version: number;
    }>;
    const created = await request('POST', '/network-feature-configs', {
      token,
      body: session(configId, ips.find((ip) => ip.version === 4)!.id, { network_feature: 'nf-rs1-ams' }),
    });
    assert.equal(created.status, 201, created.text);
    const sessionId = created.body.id as string;
    await eventually('the session waiting for its config', async () => {
      const now = (await request('GET', `/network-feature-configs/${sessionId}`, { token })).body as Config;
      return now.status.some((entry) => entry.tag === 'waiting_for_config') ? true : undefined;
    });
    const cancelled = await request('DELETE', `/network-feature-configs/${sessionId}`, { token });
    assert.equal(cancelled.status, 202, cancelled.text);
    await reaches(token, `/network-feature-configs/${sessionId}`, 'cancelled');
    await recordHistory(
      'provisionNetworkFeatureConfig',
      'cancel-before-production',
      featureConfigWorkflowId(sessionId),
    );
    assert.deepEqual(await lab().readBgpSessions('nf-rs1-ams', [sessionId]), []);
    assert.equal((await request('DELETE', `/network-service-configs/${configId}`, { token })).status, 202);
    await reaches(token, `/network-service-configs/${configId}`, 'cancelled');
    assert.equal((await request('DELETE', `/connections/${connection}`, { token })).status, 202);
  });
});
