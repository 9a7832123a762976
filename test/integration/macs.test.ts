import assert from 'node:assert/strict';
import { login, request } from '../support/http';
import { readEvents } from '../support/pages';

const SPREE = 'acc-spree-networks';

describe('MAC addresses', () => {
  let token: string;
  let other: string;
  before(async () => {
    token = (await login('customer', 0)).accessToken;
    other = (await login('customer', 1)).accessToken;
  });
  const register = (extra: Record<string, unknown>) =>
    request('POST', '/macs', {
      token,
      body: { managing_account: SPREE, consuming_account: SPREE, ...extra },
    });
  const propertyNames = (response: { body: { properties?: Array<{ name: string }> } }) =>
    (response.body.properties ?? []).map((p) => p.name);

  it('registers a unicast address in one spelling, once per account, and finds it by any spelling', async () => {
    const created = await register({ address: '02:AA:BB:CC:DD:01', external_ref: 'router 1' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.address, '02:aa:bb:cc:dd:01');
    const again = await register({ address: '02:aa:bb:cc:dd:01' });
    assert.equal(again.status, 400);
    assert.match(again.body.type, /unable-to-fulfill/);
    assert.equal(again.body.conflicts[0].resource_id, created.body.id);
    const found = await request('GET', '/macs?address=02:AA:BB:CC:DD:01', { token });
    assert.deepEqual(
      (found.body as Array<{ id: string }>).map((mac) => mac.id),
      [created.body.id],
    );
    assert.equal((await request('GET', `/macs/${created.body.id}`, { token: other })).status, 404);
    assert.ok(
      !((await request('GET', '/macs', { token: other })).body as Array<{ id: string }>).some(
        (mac) => mac.id === created.body.id,
      ),
    );
  });

  it('refuses multicast addresses, malformed ones and validity windows that are over or inverted', async () => {
    assert.deepEqual(propertyNames(await register({ address: '01:00:5e:00:00:fb' })), ['address']);
    assert.deepEqual(propertyNames(await register({ address: '02-aa-bb-cc-dd-ee' })), ['address']);
    assert.deepEqual(
      propertyNames(
        await register({ address: '02:aa:bb:cc:dd:02', valid_not_after: '2020-01-01T00:00:00Z' }),
      ),
      ['valid_not_after'],
    );
    assert.deepEqual(
      propertyNames(
        await register({
          address: '02:aa:bb:cc:dd:02',
          valid_not_before: '2099-02-01T00:00:00Z',
          valid_not_after: '2099-01-01T00:00:00Z',
        }),
      ),
      ['valid_not_after'],
    );
    const foreign = await request('POST', '/macs', {
      token: other,
      body: { managing_account: SPREE, consuming_account: SPREE, address: '02:aa:bb:cc:dd:03' },
    });
    assert.deepEqual(propertyNames(foreign), ['managing_account']);
  });

  it('lists by validity and deletes for the managing side only', async () => {
    const ending = await register({
      address: '02:aa:bb:cc:dd:04',
      valid_not_before: '2026-01-01T00:00:00Z',
      valid_not_after: '2099-06-30T00:00:00Z',
    });
    assert.equal(ending.status, 201, ending.text);
    assert.equal(ending.body.valid_not_after, '2099-06-30T00:00:00.000Z');
    const validLater = await request('GET', '/macs?valid_not_after=2099-12-31T00:00:00Z', { token });
    assert.ok(!(validLater.body as Array<{ id: string }>).some((mac) => mac.id === ending.body.id));
    const validBefore = await request('GET', '/macs?valid_not_after=2099-01-01T00:00:00Z', { token });
    assert.ok((validBefore.body as Array<{ id: string }>).some((mac) => mac.id === ending.body.id));
    assert.equal((await request('DELETE', `/macs/${ending.body.id}`, { token: other })).status, 404);
    const deleted = await request('DELETE', `/macs/${ending.body.id}`, { token });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.address, '02:aa:bb:cc:dd:04');
    assert.equal((await request('GET', `/macs/${ending.body.id}`, { token })).status, 404);
    const events = await readEvents<{ payload: { mac: { id: string } } }>(token, '?type=mac.deleted');
    assert.ok(events.some((e) => e.payload.mac.id === ending.body.id));
  });
});
