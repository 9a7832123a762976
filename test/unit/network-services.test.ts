import assert from 'node:assert/strict';
import type {
  CurrentService,
  ServiceEnd,
  ServiceOffering,
  ServiceOrder,
  ServiceOrderFacts,
} from '../../domain/network-services';
import {
  changeRequestProblems,
  missingEnds,
  serviceOrderProblems,
  shapedOrder,
} from '../../domain/network-services';
import { ONBOARDED } from '../support/order-accounts';

const offering: ServiceOffering = {
  id: 'po-p2p',
  type: 'p2p_vc',
  resource_type: 'network_service',
  handover_metro_area_network: 'man-fra',
  service_metro_area_network: 'man-fra',
  service_provider: 'Demo-IX',
  bandwidth_min: 100,
  bandwidth_max: 10_000,
  upgrade_allowed: true,
  downgrade_allowed: true,
  orderable_not_before: null,
  orderable_not_after: null,
  diversity: null,
  service_provider_workflow: null,
  cloud_key_pattern: null,
};

const p2p: ServiceOrder = shapedOrder({
  type: 'p2p_vc',
  product_offering: 'po-p2p',
  managing_account: 'acc-a',
  consuming_account: 'acc-a',
  billing_account: 'acc-a',
  external_ref: null,
  purchase_order: '',
  contract_ref: null,
  joining_member_account: 'acc-b',
  display_name: null,
  capacity: 1000,
  public: false,
  cloud_key: null,
});

const facts: ServiceOrderFacts = {
  offering,
  joiningAccount: { id: 'acc-b' },
  accounts: ONBOARDED,
  now: new Date('2026-06-01T00:00:00Z'),
};

const names = (problems: Array<{ name: string }>) => problems.map((p) => p.name);

describe('network service orders', () => {
  it('accepts a well-formed p2p circuit', () => {
    assert.deepEqual(serviceOrderProblems(p2p, facts), []);
  });

  it('names the offering when it is missing, of another type, or not orderable now', () => {
    assert.deepEqual(names(serviceOrderProblems(p2p, { ...facts, offering: undefined })), [
      'product_offering',
    ]);
    assert.deepEqual(
      names(serviceOrderProblems(p2p, { ...facts, offering: { ...offering, type: 'mp2mp_vc' } })),
      ['product_offering'],
    );
    assert.deepEqual(
      names(
        serviceOrderProblems(p2p, {
          ...facts,
          offering: { ...offering, orderable_not_after: '2026-01-01T00:00:00Z' },
        }),
      ),
      ['product_offering'],
    );
  });

  it('keeps the capacity within the offering’s bandwidth', () => {
    assert.deepEqual(names(serviceOrderProblems({ ...p2p, capacity: 99 }, facts)), ['capacity']);
    assert.deepEqual(names(serviceOrderProblems({ ...p2p, capacity: 10_001 }, facts)), ['capacity']);
    assert.deepEqual(serviceOrderProblems({ ...p2p, capacity: null }, facts), []);
  });

  it('needs a B side that exists and is another account', () => {
    assert.deepEqual(names(serviceOrderProblems({ ...p2p, joining_member_account: null }, facts)), [
      'joining_member_account',
    ]);
    assert.deepEqual(names(serviceOrderProblems(p2p, { ...facts, joiningAccount: undefined })), [
      'joining_member_account',
    ]);
    assert.deepEqual(names(serviceOrderProblems({ ...p2p, joining_member_account: 'acc-a' }, facts)), [
      'joining_member_account',
    ]);
  });

  it('needs a billing account that can pay', () => {
    assert.deepEqual(
      names(serviceOrderProblems(p2p, { ...facts, accounts: { states: {}, billingAccountCanPay: false } })),
      ['billing_account'],
    );
  });

  it('checks a provider-first cloud key against the offering’s keys', () => {
    const cloudOffering: ServiceOffering = {
      ...offering,
      id: 'po-cloud',
      type: 'cloud_vc',
      service_provider: 'Stratus',
      service_provider_workflow: 'provider_first',
      cloud_key_pattern: '^stratus-[a-z0-9]{8}$',
      diversity: 1,
    };
    const cloud = shapedOrder({
      ...p2p,
      type: 'cloud_vc',
      product_offering: 'po-cloud',
      cloud_key: 'stratus-abcd1234',
    });
    const withCloud = { ...facts, offering: cloudOffering };
    assert.deepEqual(serviceOrderProblems(cloud, withCloud), []);
    assert.equal(cloud.joining_member_account, null, 'a cloud order carries no B side');
    assert.deepEqual(names(serviceOrderProblems({ ...cloud, cloud_key: 'nimbus-1' }, withCloud)), [
      'cloud_key',
    ]);
    assert.deepEqual(names(serviceOrderProblems({ ...cloud, cloud_key: ' ' }, withCloud)), ['cloud_key']);
    const exchangeFirst = {
      ...withCloud,
      offering: { ...cloudOffering, service_provider_workflow: 'exchange_first' },
    };
    assert.deepEqual(serviceOrderProblems({ ...cloud, cloud_key: 'my-account-42' }, exchangeFirst), []);
  });

  it('keeps what makes a service what it is, and the offering’s upgrade and downgrade rules', () => {
    const current: CurrentService = { order: p2p, offering, state: 'production' };
    assert.deepEqual(
      names(serviceOrderProblems({ ...p2p, joining_member_account: 'acc-c' }, facts, current)),
      ['joining_member_account'],
    );
    const elsewhere = { ...offering, id: 'po-p2p-ams', handover_metro_area_network: 'man-ams' };
    assert.deepEqual(
      names(
        serviceOrderProblems(
          { ...p2p, product_offering: 'po-p2p-ams' },
          { ...facts, offering: elsewhere },
          current,
        ),
      ),
      ['product_offering'],
    );
    const fixed: CurrentService = { ...current, offering: { ...offering, upgrade_allowed: false } };
    assert.deepEqual(names(serviceOrderProblems({ ...p2p, capacity: 2000 }, facts, fixed)), ['capacity']);
    assert.deepEqual(serviceOrderProblems({ ...p2p, capacity: 500 }, facts, fixed), []);
    const mp = shapedOrder({ ...p2p, type: 'mp2mp_vc' });
    const multipoint = { ...offering, type: 'mp2mp_vc' };
    assert.deepEqual(
      names(
        serviceOrderProblems(
          { ...mp, public: true },
          { ...facts, offering: multipoint },
          {
            ...current,
            order: mp,
            offering: multipoint,
          },
        ),
      ),
      ['public'],
    );
  });

  it('narrows a change to what it touches', () => {
    const current: CurrentService = { order: p2p, offering, state: 'production' };
    const problems = serviceOrderProblems(
      { ...p2p, display_name: 'renamed' },
      { ...facts, accounts: { states: {}, billingAccountCanPay: false } },
      current,
      (property) => property === 'display_name',
    );
    assert.deepEqual(problems, []);
  });
});

describe('p2p change requests', () => {
  const current: CurrentService = { order: p2p, offering, state: 'production' };

  it('takes another bandwidth of the same circuit', () => {
    assert.deepEqual(
      changeRequestProblems({ product_offering: 'po-p2p', capacity: 2000 }, current, offering),
      [],
    );
  });

  it('refuses an offering that differs in more than bandwidth, a capacity out of range, or no change', () => {
    const elsewhere = { ...offering, id: 'po-p2p-ams', service_metro_area_network: 'man-ams' };
    assert.deepEqual(
      names(changeRequestProblems({ product_offering: 'po-p2p-ams', capacity: 2000 }, current, elsewhere)),
      ['product_offering'],
    );
    assert.deepEqual(
      names(changeRequestProblems({ product_offering: 'po-x', capacity: 2000 }, current, undefined)),
      ['product_offering'],
    );
    assert.deepEqual(
      names(changeRequestProblems({ product_offering: 'po-p2p', capacity: 20_000 }, current, offering)),
      ['capacity'],
    );
    assert.deepEqual(
      names(changeRequestProblems({ product_offering: 'po-p2p', capacity: 1000 }, current, offering)),
      ['capacity'],
    );
  });
});

describe('what a service waits for', () => {
  const end = (
    id: string,
    consuming: string,
    state: ServiceEnd['state'],
    handover: number | null = null,
  ) => ({
    id,
    consuming_account: consuming,
    state,
    handover,
    device: null,
  });
  const circuit = {
    type: 'p2p_vc',
    consuming_account: 'acc-a',
    joining_member_account: 'acc-b',
    diversity: null,
  };

  it('waits for both ends of a circuit', () => {
    assert.equal(missingEnds(circuit, []).length, 2);
    assert.deepEqual(missingEnds(circuit, [end('a', 'acc-a', 'production')]), ['the B side (acc-b)']);
    assert.deepEqual(missingEnds(circuit, [end('a', 'acc-a', 'production'), end('b', 'acc-b', 'testing')]), [
      'the B side (acc-b)',
    ]);
    assert.deepEqual(
      missingEnds(circuit, [end('a', 'acc-a', 'production'), end('b', 'acc-b', 'production')]),
      [],
    );
  });

  it('waits for every handover of a cloud service', () => {
    const cloud = {
      type: 'cloud_vc',
      consuming_account: 'acc-a',
      joining_member_account: null,
      diversity: 2,
    };
    assert.deepEqual(missingEnds(cloud, [end('a', 'acc-a', 'production', 1)]), ['handover 2']);
    assert.deepEqual(
      missingEnds(cloud, [end('a', 'acc-a', 'production', 1), end('b', 'acc-a', 'production', 2)]),
      [],
    );
  });

  it('waits for a first member of a multipoint service', () => {
    const multi = {
      type: 'mp2mp_vc',
      consuming_account: 'acc-a',
      joining_member_account: null,
      diversity: null,
    };
    assert.deepEqual(missingEnds(multi, [end('a', 'acc-c', 'requested')]), ['a first member']);
    assert.deepEqual(missingEnds(multi, [end('a', 'acc-c', 'production')]), []);
  });
});
