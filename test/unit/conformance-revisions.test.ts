import assert from 'node:assert/strict';
import { olderRevision, revisionFor } from '../../conformance/revisions';
import { Suite } from '../../conformance/suite';
import { loadSpec } from '../../spec';

type Schema = { properties?: Record<string, { maxLength?: number }>; required?: string[]; enum?: string[] };

describe('schema revisions', () => {
  const current = loadSpec();
  const older = olderRevision(current);
  const schemas = (document: typeof current) => document.components.schemas as Record<string, Schema>;

  it('judges by the revision the claimed schema version belongs to', () => {
    assert.equal(revisionFor('2.6.0').name, '2.6.0');
    assert.equal(revisionFor('2.6.0').note, undefined);
    assert.equal(revisionFor('2.6.3').name, '2.6.0');
    assert.equal(revisionFor('2.4.2').name, 'older');
    assert.equal(revisionFor('v2.5').name, 'older');
    assert.equal(revisionFor('1.9.9').name, 'older');
    assert.match(revisionFor('2.4.2').note!, /older than 2\.6\.0/);
    assert.match(revisionFor('2.7.1').note!, /newer than 2\.6\.0/);
    assert.match(revisionFor('latest').note!, /not a version number/);
    assert.match(revisionFor(null).note!, /claims no schema version/);
  });

  it('has no cancelled state, and state is read only', () => {
    const state = schemas(older).State as Schema & { readOnly?: boolean };
    assert.ok(!state.enum!.includes('cancelled'));
    assert.ok(state.enum!.includes('decommissioned'));
    assert.equal(state.readOnly, true);
    assert.ok(!JSON.stringify(older).includes('"cancelled"'), 'cancelled is gone from filters too');
  });

  it('marks nothing sensitive', () => {
    assert.ok(JSON.stringify(current).includes('x-sensitive'));
    assert.ok(!JSON.stringify(older).includes('x-sensitive'));
  });

  it('offers demarc where 2.6.0 offers port_reservation, and shorter provider PoPs', () => {
    const offering = schemas(older).ConnectionProductOffering.properties!.resource_type as Schema;
    assert.ok(offering.enum!.includes('demarc'));
    assert.ok(!offering.enum!.includes('port_reservation'));
    assert.equal(schemas(older).CloudNetworkProductOffering.properties!.service_provider_pop.maxLength, 16);
  });

  it('has the older connection and its payloads', () => {
    const connection = schemas(older).Connection;
    for (const gone of [
      'product_offering',
      'pop',
      'port_quantity',
      'capacity_allocated',
      'port_reservations',
    ])
      assert.ok(!(gone in connection.properties!), gone);
    assert.ok(!connection.required!.includes('product_offering'));
    assert.ok(connection.required!.includes('vlan_types'));
    const request = schemas(older).ConnectionRequest;
    assert.ok('speed' in request.properties!);
    assert.ok(!('product_offering' in request.properties));
    assert.deepEqual([...request.required!].sort(), [
      'billing_account',
      'consuming_account',
      'managing_account',
      'mode',
      'role_assignments',
    ]);
    assert.equal(schemas(older).ConnectionPatch.required, undefined);
    assert.ok(schemas(older).CloudNetworkService.required!.includes('nsc_required_contact_roles'));
    assert.ok(!schemas(older).CloudNetworkService.required!.includes('provider_ref'));
  });

  it('leaves the 2.6.0 document as it was', () => {
    assert.ok(schemas(current).State.enum!.includes('cancelled'));
    assert.ok('product_offering' in schemas(current).Connection.properties!);
  });

  it('judges responses by the older schemas once a suite switches to them', () => {
    const suite = new Suite({
      baseUrl: 'http://127.0.0.1:9/api/v2',
      credentials: { primary: { api_key: 'k', api_secret: 's' } },
      profile: 'read',
      document: current,
    });
    const account = {
      id: 'a',
      state: 'cancelled',
      name: 'n',
      discoverable: false,
      metro_area_network_presence: [],
    };
    const response = { status: 200, headers: { 'content-type': 'application/json' }, body: account };
    const problems = () => suite.contractProblems('accounts_read', response as never);
    assert.ok(!problems().some((p) => p.includes('must be equal to one of the allowed values')));
    suite.useRevision(revisionFor('2.4.2'));
    assert.ok(problems().some((p) => p.includes('must be equal to one of the allowed values')));
    assert.equal(suite.sensitive.size, 0);
    assert.match(suite.warnings[0], /older than 2\.6\.0/);
  });
});
