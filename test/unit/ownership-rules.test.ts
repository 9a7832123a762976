import assert from 'node:assert/strict';
import { requireManagerChange } from '../../domain/authority';
import { demarcProblems } from '../../domain/connections';
import { PermissionDeniedError, UnableToFulfillError, ValidationError } from '../../domain/errors';
import { exchangeSetProblems } from '../../domain/ip-registrations';
import type { ServiceParties } from '../../domain/network-services';
import { requireServiceOwner, sideOfService } from '../../domain/network-services';

const reseller = { accountId: 'r', accounts: ['r', 'o'] };
const service = (overrides: Partial<ServiceParties> = {}): ServiceParties => ({
  id: 'ns-1',
  type: 'mp2mp_vc',
  state: 'production',
  managing_account: 'x',
  consuming_account: 'y',
  joining_member_account: null,
  public: false,
  ...overrides,
});
const propertiesOf = (error: unknown) => (error as ValidationError).properties.map((p) => p.name);

/** Rules of who owns what, kept in domain/ and asked by the handlers. */
describe('ownership rules', () => {
  it('puts a caller on one side of a service: owner, consumer, the joining member, a member, or none', () => {
    assert.equal(sideOfService(service({ managing_account: 'o' }), reseller), 'owner');
    assert.equal(sideOfService(service({ consuming_account: 'o' }), reseller), 'consumer');
    assert.equal(sideOfService(service({ joining_member_account: 'r' }), reseller), 'joining');
    assert.equal(sideOfService(service({ public: true }), reseller), 'member');
    assert.equal(sideOfService(service({ type: 'exchange_lan' }), reseller), 'member');
    assert.equal(sideOfService(service(), reseller, true), 'member');
    assert.equal(sideOfService(service(), reseller), 'none');
  });

  it('lets only the owner change a service, and nobody an exchange LAN through the API', () => {
    assert.doesNotThrow(() => requireServiceOwner(service(), 'owner'));
    // A consuming-only account sees the service but does not decide over it.
    for (const side of ['consumer', 'joining', 'member'] as const)
      assert.throws(() => requireServiceOwner(service(), side), PermissionDeniedError);
    assert.throws(
      () => requireServiceOwner(service({ type: 'exchange_lan' }), 'owner'),
      UnableToFulfillError,
    );
  });

  it('changes who manages an account only from above, and never into a loop', async () => {
    const asked: string[] = [];
    const below = (accounts: string[]) => () => {
      asked.push('below');
      return Promise.resolve(accounts);
    };
    const account = { id: 'o', managing_account: 'r' };
    await requireManagerChange(account, 'r', reseller, below([]));
    assert.deepEqual(asked, [], 'an unchanged manager needs nothing looked up');
    await assert.rejects(
      requireManagerChange({ id: 'r', managing_account: null }, 'o', reseller, below([])),
      (error) => propertiesOf(error).includes('managing_account'),
    );
    await assert.rejects(requireManagerChange(account, 'stranger', reseller, below([])), ValidationError);
    await assert.rejects(
      requireManagerChange({ id: 'r2', managing_account: 'r' }, 'o', reseller, below(['o'])),
      /loop/,
    );
    await requireManagerChange({ id: 'r2', managing_account: 'r' }, 'o', reseller, below(['r2']));
  });

  it("takes a reservation's demarc only from its connection's", () => {
    assert.deepEqual(demarcProblems(null, []), []);
    assert.deepEqual(demarcProblems('cage 1', ['cage 1', 'cage 2']), []);
    assert.deepEqual(
      demarcProblems('cage 3', ['cage 1']).map((p) => p.name),
      ['subscriber_side_demarc'],
    );
  });

  it('keeps what the exchange decided of an address it allocated', () => {
    const allocated = {
      managing_account: 'o',
      consuming_account: 'o',
      version: 6,
      address: '2001:db8::1',
      prefix_length: 64,
    };
    const asked = {
      ...allocated,
      external_ref: null,
      fqdn: 'rs.example.net',
      valid_not_before: null,
      valid_not_after: null,
    };
    assert.deepEqual(exchangeSetProblems({ ...asked, address: '2001:DB8:0::1' }, allocated), []);
    assert.deepEqual(
      exchangeSetProblems({ ...asked, address: '2001:db8::2', prefix_length: 48 }, allocated).map(
        (p) => p.name,
      ),
      ['address', 'prefix_length'],
    );
  });
});
