import assert from 'node:assert/strict';
import type { ServiceAttachment } from '../../drivers/contract';
import { routerIdOf } from '../../drivers/ovs/catalogue';
import { flowTable } from '../../drivers/ovs/flows';
import { serviceAttachment } from '../support/ovs';

const service = (name: string, parent: string, extra: Partial<ServiceAttachment> = {}) =>
  serviceAttachment(name, parent, extra);

/** The flow table of `services` on ports p1 (ofport 1) and p2 (ofport 2), with a trunk at ofport 9. */
function flows(services: ServiceAttachment[], vlans: Record<string, number> = { lan: 7 }): string[] {
  const snapshot = {
    interfaces: new Map(),
    lags: new Map(),
    services: new Map(services.map((s) => [s.name, s])),
    bgpSessions: new Map(),
  };
  const ids = new Map(services.map((s, index) => [s.name, index + 1]));
  return flowTable(snapshot, ids, (name) => Number(name.slice(1)), {
    ofport: 9,
    vlans: new Map(Object.entries(vlans)),
  });
}

describe('the ovs driver’s trunk to the core bridge', () => {
  it('sends every frame of a segment out of the trunk with its fabric VLAN, and what comes back to its services', () => {
    const table = flows([service('a', 'p1'), service('b', 'p2', { vlanType: 'dot1q', outerVlan: 100 })]);
    assert.ok(
      table.includes(
        'table=0,priority=50,in_port=1,cookie=0x1,actions=load:0->NXM_OF_IN_PORT[],push_vlan:0x8100,set_field:4196->vlan_vid,output:2,pop_vlan,push_vlan:0x8100,set_field:4103->vlan_vid,output:9,pop_vlan',
      ),
      table.join('\n'),
    );
    assert.ok(
      table.includes(
        'table=0,priority=100,in_port=9,dl_vlan=7,actions=pop_vlan,output:1,push_vlan:0x8100,set_field:4196->vlan_vid,output:2,pop_vlan',
      ),
      table.join('\n'),
    );
    assert.ok(
      !table.some((flow) => flow.startsWith('table=0,priority=100,in_port=9') && flow.endsWith('output:9')),
    );
  });

  it('marks an isolated service’s frames on the trunk, and keeps marked frames from the isolated services here', () => {
    const table = flows([service('root', 'p1'), service('leaf', 'p2', { isolated: true })]);
    assert.ok(
      table.some((flow) => flow.includes('in_port=2,') && flow.includes('set_field:1->vlan_pcp,output:9')),
    );
    assert.ok(
      table.includes('table=0,priority=110,in_port=9,dl_vlan=7,dl_vlan_pcp=1,actions=pop_vlan,output:1'),
      table.join('\n'),
    );
    assert.ok(table.includes('table=0,priority=100,in_port=9,dl_vlan=7,actions=pop_vlan,output:2,output:1'));
  });

  it('sends a segment without a fabric VLAN nowhere beyond the device', () => {
    const table = flows([service('a', 'p1', { segment: 'other' })]);
    assert.ok(
      !table.some((flow) => flow.includes('output:9') || flow.includes('in_port=9')),
      table.join('\n'),
    );
  });
});

describe('the ovs driver’s MAC filter', () => {
  const MAC_A = '02:00:5e:00:53:0a';
  const MAC_B = '02:00:5e:00:53:0b';
  /** The rules that take frames in from ofport 1, where service `a` sits. */
  const fromA = (table: string[]) => table.filter((flow) => /in_port=1(,|$)/.test(flow));

  it('takes no frame in from a filtering service without MACs, yet sends it the segment’s frames', () => {
    for (const tags of [
      {},
      { vlanType: 'dot1q', outerVlan: 100 },
      { vlanType: 'qinq', outerVlan: 300, innerVlan: 30 },
    ] as const) {
      const table = flows([service('a', 'p1', { ...tags, macFilter: true }), service('b', 'p2')]);
      assert.deepEqual(fromA(table), [], table.join('\n'));
      assert.ok(!table.some((flow) => flow.includes('cookie=0x1,')), table.join('\n'));
      assert.ok(
        table.some((flow) => flow.includes('in_port=2,cookie=0x2,') && flow.includes('output:1')),
        table.join('\n'),
      );
    }
  });

  it('takes frames in from each MAC of a filtering service, one rule per MAC, as from a service that merely lists them', () => {
    for (const macFilter of [true, false]) {
      const table = flows([service('a', 'p1', { macs: [MAC_A, MAC_B], macFilter }), service('b', 'p2')]);
      assert.deepEqual(
        fromA(table).map(
          (flow) => /^table=0,priority=50,in_port=1,dl_src=([0-9a-f:]+),cookie=0x1,/.exec(flow)?.[1],
        ),
        [MAC_A, MAC_B],
        table.join('\n'),
      );
    }
  });

  it('takes frames in from any source of a service that does not filter and lists no MACs', () => {
    const table = flows([service('a', 'p1', { macFilter: false }), service('b', 'p2')]);
    const taken = fromA(table);
    assert.equal(taken.length, 1, table.join('\n'));
    assert.match(taken[0], /^table=0,priority=50,in_port=1,cookie=0x1,actions=/);
    assert.ok(!taken[0].includes('dl_src'));
  });
});

describe('a route server’s router id', () => {
  it('is its IPv4 address, or the last 32 bits of its IPv6 address', () => {
    assert.equal(routerIdOf('192.0.2.253', '2001:db8:1::fd'), '192.0.2.253');
    assert.equal(routerIdOf(null, '2001:db8:1::fd'), '0.0.0.253');
    assert.equal(routerIdOf(null, '2001:db8::c000:2fe'), '192.0.2.254');
    assert.equal(routerIdOf(null, '2001:db8::'), undefined);
    assert.equal(routerIdOf(null, null), undefined);
  });
});
