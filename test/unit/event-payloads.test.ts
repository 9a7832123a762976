import assert from 'node:assert/strict';
import { createEventPresenter, EVENT_PAYLOADS } from '../../api/event-payloads';
import { sensitivePropertiesOf } from '../../api/redaction-plans';
import { collectionRegistry } from '../../api/registry';
import { EVENT_TYPES } from '../../domain/events';
import { loadSpec } from '../../spec';

describe('event payloads', () => {
  const document = loadSpec();
  const registry = collectionRegistry(document);
  const presenter = createEventPresenter(registry);
  const owner = { accountId: 'acc-a', accounts: ['acc-a', 'acc-a-sub'] };
  const bSide = { accountId: 'acc-b', accounts: ['acc-b'] };

  const circuit = {
    id: 'ns-1',
    type: 'p2p_vc',
    state: 'requested',
    status: [],
    product_offering: 'po-p2p',
    managing_account: 'acc-a',
    consuming_account: 'acc-a-sub',
    billing_account: 'acc-a',
    external_ref: 'secret-ref',
    purchase_order: 'secret-po',
    contract_ref: 'secret-contract',
    decommission_at: null,
    charged_until: null,
    current_billing_start_date: null,
    nsc_required_contact_roles: ['role-noc'],
    nsc_product_offerings: ['po-p2p'],
    joining_member_account: 'acc-b',
    display_name: 'A to B',
    capacity: 1000,
  };
  const event = (
    type: string,
    payload: Record<string, unknown>,
    account = 'acc-a',
    also: string | null = null,
  ) => ({
    serial: 7,
    type,
    payload,
    timestamp: '2026-01-01T00:00:00.000Z',
    account,
    also_account: also,
  });

  it('says for every kind of event what its payload holds, by collections that have reads', () => {
    assert.deepEqual(Object.keys(EVENT_PAYLOADS).sort(), [...EVENT_TYPES].sort());
    const read = new Set(registry.filter((entry) => entry.read).map((entry) => entry.collection.name));
    for (const [type, layout] of Object.entries(EVENT_PAYLOADS))
      for (const held of Object.values(layout.resources ?? {}))
        assert.ok(read.has(held.family), `${type}: ${held.family} has no read`);
    assert.throws(
      () => createEventPresenter(registry.filter((entry) => entry.list !== 'ips_list')),
      /ip\.created/,
    );
  });

  it('never states as a fact what the document marks sensitive anywhere', () => {
    const sensitive = new Set(
      Object.keys(document.components.schemas).flatMap((name) =>
        /(Request|Update|Patch)$/.test(name) ? [] : sensitivePropertiesOf(document, name),
      ),
    );
    assert.ok(sensitive.has('charged_until') && sensitive.has('external_ref'));
    for (const [type, layout] of Object.entries(EVENT_PAYLOADS))
      for (const fact of layout.facts ?? []) assert.ok(!sensitive.has(fact), `${type}: ${fact}`);
  });

  it('shows a resource as the read of its collection shows it to the reader', () => {
    const services = registry.find((entry) => entry.list === 'network_services_list')!;
    const created = event('network_service.created', { network_service: circuit }, 'acc-b');
    const toB = presenter.present(created, bSide);
    assert.deepEqual(toB.payload, { network_service: services.present!(circuit, bSide) });
    const shown = toB.payload.network_service;
    assert.equal(shown.billing_account, '');
    assert.ok(!('external_ref' in shown) && !('purchase_order' in shown), 'the owner’s business');
    const toOwner = presenter.present(event('network_service.created', { network_service: circuit }), owner);
    assert.deepEqual(toOwner.payload, { network_service: circuit });
  });

  it('shows an account outside the reader’s scope as its public view, and lists of resources item by item', () => {
    const account = {
      id: 'acc-x',
      name: 'X',
      legal_name: 'X Ltd',
      external_ref: 'x',
      metro_area_network_presence: [],
    };
    const shown = presenter.present(event('account.updated', { account }, 'acc-x'), owner).payload as {
      account: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(shown.account).sort(), ['id', 'metro_area_network_presence', 'name']);
    const contact = { id: 'con-1', managing_account: 'acc-a', consuming_account: 'acc-a', name: 'N' };
    const deleted = presenter.present(
      event('contact.deleted', {
        contact,
        role_assignments: [{ id: 'ra-1', role: 'role-noc', contact: 'con-1' }],
      }),
      owner,
    );
    assert.deepEqual(deleted.payload, {
      contact,
      role_assignments: [{ id: 'ra-1', role: 'role-noc', contact: 'con-1' }],
    });
  });

  it('leaves out what a kind of event does not declare, and what is not shaped as declared', () => {
    const old = event('network_service.state_changed', {
      id: 'ns-1',
      from: 'production',
      to: 'decommission_requested',
      event: 'request_decommission',
      decommission_at: '2026-02-01',
      charged_until: '2026-02-28',
    });
    assert.deepEqual(presenter.present(old, owner).payload, {
      id: 'ns-1',
      from: 'production',
      to: 'decommission_requested',
      event: 'request_decommission',
      decommission_at: '2026-02-01',
    });
    const partial = event('connection.changed', { id: 'conn-1', external_ref: 'x', connection: 'conn-1' });
    assert.deepEqual(presenter.present(partial, owner).payload, {});
    assert.deepEqual(presenter.present(event('no.such.kind', { id: 'x' }), owner).payload, {});
  });

  it('names as the event’s account one the reader acts for, never the other party', () => {
    const rule = { id: 'mjr-1', type: 'allow', network_service: 'ns-2', consuming_account: 'acc-b' };
    const toMember = presenter.present(
      event('member_joining_rule.created', { member_joining_rule: rule }, 'acc-a-sub', 'acc-b'),
      bSide,
    );
    assert.equal(toMember.account, 'acc-b');
    assert.ok(!('also_account' in toMember));
    const toOwner = presenter.present(
      event('member_joining_rule.created', { member_joining_rule: rule }, 'acc-a-sub', 'acc-b'),
      owner,
    );
    assert.equal(toOwner.account, 'acc-a-sub');
  });
});
