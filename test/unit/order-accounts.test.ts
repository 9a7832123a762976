import assert from 'node:assert/strict';
import { orderAccountProblems } from '../../domain/order-accounts';
import { ONBOARDED } from '../support/order-accounts';

describe('the accounts an order names', () => {
  const onboarded = ONBOARDED;
  const names = (accounts: Parameters<typeof orderAccountProblems>[0]) =>
    orderAccountProblems(accounts).map((problem) => problem.name);

  it('takes accounts in production, the billing one able to pay', () => {
    assert.deepEqual(orderAccountProblems(onboarded), []);
  });

  it('names each account not yet on-boarded, whatever its role in the order', () => {
    for (const property of ['managing_account', 'consuming_account', 'billing_account'] as const) {
      const problems = orderAccountProblems({
        ...onboarded,
        states: { ...onboarded.states, [property]: 'requested' },
      });
      assert.deepEqual(
        problems.map((problem) => problem.name),
        [property],
      );
      assert.match(problems[0].reason, /requested, not on-boarded/);
    }
    assert.deepEqual(
      names({
        states: { consuming_account: 'requested', billing_account: 'requested' },
        billingAccountCanPay: false,
      }),
      ['consuming_account', 'billing_account', 'billing_account'],
    );
  });

  it('needs billing information of the billing account', () => {
    assert.deepEqual(names({ ...onboarded, billingAccountCanPay: false }), ['billing_account']);
  });

  it('leaves accounts that do not exist to the rules that name them', () => {
    assert.deepEqual(names({ states: {}, billingAccountCanPay: true }), []);
  });
});
