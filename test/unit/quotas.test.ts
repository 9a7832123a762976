import assert from 'node:assert/strict';
import { UnableToFulfillError } from '../../domain/errors';
import type { Quotas } from '../../domain/quotas';
import { NO_QUOTAS, QuotaExceededError, quotasAt, requireWithinQuotas } from '../../domain/quotas';

const quotas: Quotas = { ...NO_QUOTAS, ports: 4, sub_accounts: 2, open_orders: 3, macs: 2, ips: 1 };
const accounts = { root: 'acc-reseller', orderedFor: 'acc-sub' };

/** The error requireWithinQuotas throws for the arguments, or undefined when it lets them through. */
function refusal(...args: Parameters<typeof requireWithinQuotas>): QuotaExceededError | undefined {
  try {
    requireWithinQuotas(...args);
  } catch (error) {
    assert.ok(error instanceof QuotaExceededError, String(error));
    return error;
  }
  return undefined;
}

describe('quotas', () => {
  it('lets an order through up to the limit, and refuses the one beyond it', () => {
    assert.equal(refusal(quotas, { ports: 2 }, { ports: 2 }, accounts), undefined);
    assert.equal(refusal(quotas, { ports: 3 }, { ports: 2 }, accounts)?.quota, 'ports');
    assert.equal(refusal(quotas, { sub_accounts: 1 }, { sub_accounts: 1 }, accounts), undefined);
    assert.equal(refusal(quotas, { sub_accounts: 2 }, { sub_accounts: 1 }, accounts)?.quota, 'sub_accounts');
    assert.equal(refusal(quotas, { open_orders: 3 }, { open_orders: 1 }, accounts)?.quota, 'open_orders');
    assert.equal(refusal(quotas, { macs: 1 }, { macs: 1 }, accounts), undefined);
    assert.equal(refusal(quotas, { macs: 2 }, { macs: 1 }, accounts)?.quota, 'macs');
    assert.equal(refusal(quotas, { contacts: 100_000 }, { contacts: 1 }, accounts), undefined);
  });

  it('tells how to make room: registered IP addresses are changed, since IX-API deletes none', () => {
    assert.match(refusal(quotas, { ips: 1 }, { ips: 1 }, accounts)?.message ?? '', /QUOTA_IPS.*change one/);
    assert.match(
      refusal(
        { ...quotas, member_joining_rules: 1 },
        { member_joining_rules: 1 },
        { member_joining_rules: 1 },
        accounts,
      )?.message ?? '',
      /QUOTA_MEMBER_JOINING_RULES.*delete some/,
    );
  });

  it('reads 0 as no limit, and looks only at what the order asks for', () => {
    const open = { ...quotas, ports: 0 };
    assert.equal(refusal(open, { ports: 10_000 }, { ports: 8 }, accounts), undefined);
    assert.equal(refusal(quotas, { ports: 99, open_orders: 99 }, { sub_accounts: 1 }, accounts), undefined);
    assert.deepEqual(quotasAt(open, { ports: 8, open_orders: 1, sub_accounts: 0 }), ['open_orders']);
  });

  it('answers unable-to-fulfill naming the setting and its limit, machine-readable as a conflict', () => {
    const error = refusal(quotas, { ports: 4, open_orders: 1 }, { ports: 1, open_orders: 1 }, accounts);
    assert.ok(error instanceof UnableToFulfillError);
    assert.equal(error.status, 400);
    assert.equal(error.typeName, 'unable-to-fulfill');
    assert.match(error.message, /QUOTA_PORTS/);
    assert.match(error.message, /at most 4/);
    assert.deepEqual(error.extensions(), {
      properties: [{ name: 'managing_account', reason: error.message }],
      conflicts: [
        {
          resource_type: 'accounts',
          resource_id: 'acc-reseller',
          resource_property: 'quota_ports',
          remote_resource_type: 'accounts',
          remote_resource_id: 'acc-sub',
        },
      ],
      quota: { name: 'ports', setting: 'QUOTA_PORTS', limit: 4, held: 4, asked: 1, account: 'acc-reseller' },
    });
  });
});
