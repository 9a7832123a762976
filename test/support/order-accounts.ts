import type { OrderAccounts } from '../../domain/order-accounts';

/** The accounts of an order the rules take: all three on-boarded, the billing one able to pay. */
export const ONBOARDED: OrderAccounts = {
  states: { managing_account: 'production', consuming_account: 'production', billing_account: 'production' },
  billingAccountCanPay: true,
};
